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
             "finding, detail, duration_ms, chain FROM refgate_link_health_checks "
             "WHERE link_id = $1 ORDER BY id DESC",
             link_id)) {
        out.push_back({{"checked_at", row[0].c_str()},
                       {"finding", row[1].c_str()},
                       {"detail", row[2].c_str()},
                       {"duration_ms", row[3].as<std::int64_t>()},
                       {"chain", nlohmann::json::parse(row[4].c_str())}});
    }
    return out;
}

}  // namespace

std::optional<nlohmann::json> read_health(const std::string& database_url,
                                          const std::string& slug) {
    auto conn = pg::connect(database_url);
    pqxx::work tx(*conn);
    const std::string iso = "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'";
    auto rows = tx.exec_params(
        "SELECT l.id, h.state, h.detail, to_char(h.since AT TIME ZONE 'UTC', " + iso +
            "), h.pending_state, h.pending_detail, to_char(h.confirm_at AT TIME ZONE 'UTC', " +
            iso + "), to_char(h.checked_at AT TIME ZONE 'UTC', " + iso +
            "), h.last_finding, h.last_detail, h.chain FROM refgate_links l "
            "LEFT JOIN refgate_link_health h ON h.link_id = l.id WHERE l.slug = $1",
        slug);
    if (rows.empty()) return std::nullopt;
    const auto& r = rows[0];
    nlohmann::json out = {{"slug", slug},
                          {"state", text_or_null(r[1])},
                          {"detail", text_or_null(r[2])},
                          {"since", text_or_null(r[3])},
                          {"pending", nullptr},
                          {"checked_at", text_or_null(r[7])},
                          {"last", nullptr},
                          {"chain", nlohmann::json::array()},
                          {"history", history(tx, r[0].as<std::int64_t>())}};
    if (!r[4].is_null())
        out["pending"] = {{"state", r[4].c_str()},
                          {"detail", text_or_null(r[5])},
                          {"confirm_at", text_or_null(r[6])}};
    if (!r[8].is_null()) {
        out["last"] = {{"finding", r[8].c_str()}, {"detail", r[9].c_str()}};
        out["chain"] = nlohmann::json::parse(r[10].c_str());
    }
    tx.commit();
    return out;
}

}  // namespace refgate::linkcheck
