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
             "SELECT to_char(checked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
             "finding, detail, duration_ms, chain, branch FROM refgate_link_health_checks "
             "WHERE link_id = $1 ORDER BY id DESC",
             link_id)) {
        out.push_back({{"checked_at", row[0].c_str()},
                       {"branch", row[5].c_str()},
                       {"finding", row[1].c_str()},
                       {"detail", row[2].c_str()},
                       {"duration_ms", row[3].as<std::int64_t>()},
                       {"chain", nlohmann::json::parse(row[4].c_str())}});
    }
    return out;
}

// One branch's stored health: its state, pending finding, last check and chain.
nlohmann::json branch_health(const pqxx::row& r) {
    nlohmann::json out = {{"branch", r[0].c_str()},
                          {"state", r[1].c_str()},
                          {"detail", r[2].c_str()},
                          {"since", r[3].c_str()},
                          {"pending", nullptr},
                          {"checked_at", r[7].c_str()},
                          {"last", {{"finding", r[8].c_str()}, {"detail", r[9].c_str()}}},
                          {"chain", nlohmann::json::parse(r[10].c_str())}};
    if (!r[4].is_null())
        out["pending"] = {{"state", r[4].c_str()},
                          {"detail", text_or_null(r[5])},
                          {"confirm_at", text_or_null(r[6])}};
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
    const auto link_id = links[0][0].as<std::int64_t>();
    const std::string iso = "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'";
    auto rows = tx.exec_params(
        "SELECT branch, state, detail, to_char(since AT TIME ZONE 'UTC', " + iso +
            "), pending_state, pending_detail, to_char(confirm_at AT TIME ZONE 'UTC', " + iso +
            "), to_char(checked_at AT TIME ZONE 'UTC', " + iso +
            "), last_finding, last_detail, chain FROM refgate_link_health WHERE link_id = $1 "
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
