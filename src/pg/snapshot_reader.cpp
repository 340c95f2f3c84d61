#include "snapshot_reader.hpp"

#include <chrono>
#include <stdexcept>

#include "refgate/codec/disclosure_json.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/codec/snapshot_file.hpp"
#include "refgate/domain/snapshot.hpp"
#include "refgate/pg/connection.hpp"
#include "refgate/pg/database.hpp"
#include "refgate/pg/stored_rows.hpp"

namespace refgate::pg {
namespace {

// Links as plain rows: one JSON document of 100,000 links cost PostgreSQL time to build and us
// time and memory to parse (about 20 MiB of text, then a DOM three times that). The redirect
// needs only the branches serving their fallback, not why.
// (Made on first use: kLinkColumnsSelect is another file's static.)
const std::string& select_links() {
    static const std::string sql =
        "SELECT " + kLinkColumnsSelect +
        ", f.branches AS fallback_branches FROM refgate_links l JOIN refgate_partners p ON p.id = "
        "l.partner_id LEFT JOIN (SELECT link_id, string_agg(branch, E'\\n') AS branches FROM "
        "refgate_link_fallbacks GROUP BY link_id) f ON f.link_id = l.id ORDER BY l.id";
    return sql;
}

constexpr const char* kSelectDisclosures = R"sql(
SELECT coalesce(json_agg(json_build_object(
    'key', d.key, 'locale', d.locale, 'version', d.version, 'text', d.text, 'html', d.html,
    'html_given', d.html_given,
    'updated_at', to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
    ORDER BY d.key, d.locale, d.version), '[]'::json)::text AS disclosures
FROM refgate_disclosures d
)sql";

constexpr const char* kSelectCountryGroups = R"sql(
SELECT coalesce(json_agg(json_build_object('family', family, 'fallbacks', fallbacks)
                         ORDER BY family), '[]')::text AS country_groups
FROM refgate_country_groups
)sql";

constexpr const char* kSelectDomains =
    "SELECT host, is_default, not_found FROM refgate_domains ORDER BY host";

std::vector<domain::Link> read_links(pqxx::transaction_base& tx) {
    auto rows = tx.exec(select_links());
    std::vector<domain::Link> links;
    links.reserve(rows.size());
    for (const auto& row : rows) {
        domain::Link l = read_link_columns(row);
        if (auto branches = row["fallback_branches"]; !branches.is_null()) {
            std::string_view text = branches.c_str();
            while (!text.empty()) {
                auto end = text.find('\n');
                l.fallback_switches.push_back({std::string(text.substr(0, end)), "", "", 0});
                text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
            }
        }
        links.push_back(std::move(l));
    }
    return links;
}

}  // namespace

std::uint64_t read_version(pqxx::transaction_base& tx) {
    return tx.exec("SELECT version FROM refgate_snapshot_version")[0]["version"]
        .as<std::uint64_t>();
}

StoredData read_all(pqxx::transaction_base& tx) {
    StoredData data;
    data.version = read_version(tx);
    for (auto& stored : read_partners(tx, "ORDER BY p.id"))
        data.partners.push_back(std::move(stored.partner));
    data.links = read_links(tx);
    for (const auto& row : tx.exec(kSelectDomains)) {
        domain::Domain d{row["host"].c_str(), row["is_default"].as<bool>(), {}};
        if (auto not_found = row["not_found"]; !not_found.is_null())
            d.not_found = not_found.c_str();
        data.domains.push_back(std::move(d));
    }
    data.disclosures = codec::disclosures_from_json(
        nlohmann::ordered_json::parse(tx.exec(kSelectDisclosures)[0]["disclosures"].c_str()));
    data.country_groups = codec::country_groups_from_json(
        nlohmann::ordered_json::parse(tx.exec(kSelectCountryGroups)[0]["country_groups"].c_str()));
    return data;
}

std::shared_ptr<const domain::Snapshot> build_snapshot(StoredData&& data,
                                                       const domain::UrlPolicy& policy,
                                                       std::string source) {
    domain::Snapshot::Builder builder(
        data.version, std::move(data.partners), policy, std::move(source),
        std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now()),
        data.links.size());
    builder.country_groups(std::move(data.country_groups));
    builder.domains(data.domains);
    for (domain::Link& link : data.links) {
        builder.add(std::move(link));
        link = domain::Link();  // freed as we go
    }
    return builder.finish(std::move(data.disclosures));
}

}  // namespace refgate::pg

namespace refgate::pg {

std::shared_ptr<const domain::Snapshot> load_snapshot(const std::string& database_url,
                                                      const domain::UrlPolicy& policy) {
    try {
        auto conn = connect(database_url);
        pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(*conn);
        StoredData data = read_all(tx);
        tx.commit();
        return build_snapshot(std::move(data), policy, "postgres");
    } catch (const pqxx::failure& e) {
        throw DatabaseError(e.what());
    }
}

}  // namespace refgate::pg
