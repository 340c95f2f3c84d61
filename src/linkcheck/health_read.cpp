#include <algorithm>
#include <pqxx/pqxx>

#include "refgate/linkcheck/health_store.hpp"
#include "refgate/pg/connection.hpp"

namespace refgate::linkcheck {
namespace {

nlohmann::json text_or_null(const pqxx::field& f) {
    if (f.is_null()) return nullptr;
    return f.c_str();
}

nlohmann::json history(pqxx::work& tx, std::int64_t link_id) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : tx.exec_params(
             "SELECT to_char(checked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
             "AS checked_at, finding, detail, duration_ms, chain, branch "
             "FROM refgate_link_health_checks "
             "WHERE link_id = $1 ORDER BY id DESC",
             link_id)) {
        out.push_back({{"checked_at", row["checked_at"].c_str()},
                       {"branch", row["branch"].c_str()},
                       {"finding", row["finding"].c_str()},
                       {"detail", row["detail"].c_str()},
                       {"duration_ms", row["duration_ms"].as<std::int64_t>()},
                       {"chain", nlohmann::json::parse(row["chain"].c_str())}});
    }
    return out;
}

// One branch's stored health: its state, pending finding, last check and chain.
nlohmann::json branch_health(const pqxx::row& r) {
    nlohmann::json out = {
        {"branch", r["branch"].c_str()},
        {"state", r["state"].c_str()},
        {"detail", r["detail"].c_str()},
        {"since", r["since"].c_str()},
        {"pending", nullptr},
        {"checked_at", r["checked_at"].c_str()},
        {"last", {{"finding", r["last_finding"].c_str()}, {"detail", r["last_detail"].c_str()}}},
        {"chain", nlohmann::json::parse(r["chain"].c_str())}};
    if (!r["pending_state"].is_null())
        out["pending"] = {{"state", r["pending_state"].c_str()},
                          {"detail", text_or_null(r["pending_detail"])},
                          {"confirm_at", text_or_null(r["confirm_at"])}};
    return out;
}

}  // namespace

// The link's fields (state, detail, since, pending, checked_at, last, chain, branch) are its
// worst branch's (a pending finding first among equals); `branches` lists every branch checked.
std::optional<nlohmann::json> read_health(const std::string& database_url,
                                          const std::string& slug) {
    auto conn = pg::connect(database_url);
    pqxx::work tx(*conn);
    auto links = tx.exec_params("SELECT id FROM refgate_links WHERE slug = $1", slug);
    if (links.empty()) return std::nullopt;
    const auto link_id = links[0]["id"].as<std::int64_t>();
    const std::string iso = "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'";
    auto rows = tx.exec_params(
        "SELECT branch, state, detail, to_char(since AT TIME ZONE 'UTC', " + iso +
            ") AS since, pending_state, pending_detail, to_char(confirm_at AT TIME ZONE 'UTC', " +
            iso + ") AS confirm_at, to_char(checked_at AT TIME ZONE 'UTC', " + iso +
            ") AS checked_at, last_finding, last_detail, chain FROM refgate_link_health "
            "WHERE link_id = $1 "
            "ORDER BY refgate_health_rank(state) DESC, pending_state IS NOT NULL DESC, "
            "branch = 'default' DESC, branch",
        link_id);
    nlohmann::json out = {{"slug", slug},
                          {"branch", nullptr},
                          {"state", nullptr},
                          {"detail", nullptr},
                          {"since", nullptr},
                          {"pending", nullptr},
                          {"checked_at", nullptr},
                          {"last", nullptr},
                          {"chain", nlohmann::json::array()},
                          {"branches", nlohmann::json::array()}};
    for (const auto& row : rows) out["branches"].push_back(branch_health(row));
    if (!rows.empty()) {
        for (const auto& [key, value] : out["branches"][0].items()) out[key] = value;
        // Listed the default first, then rule by rule.
        auto& branches = out["branches"];
        std::sort(branches.begin(), branches.end(), [](const auto& a, const auto& b) {
            auto x = a["branch"].template get<std::string>();
            auto y = b["branch"].template get<std::string>();
            if ((x == kDefaultBranch) != (y == kDefaultBranch)) return x == kDefaultBranch;
            return x < y;
        });
    }
    out["history"] = history(tx, link_id);
    tx.commit();
    return out;
}

}  // namespace refgate::linkcheck
