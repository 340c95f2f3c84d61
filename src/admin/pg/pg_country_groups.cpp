// The partner families' country fallbacks (refgate_country_groups) as the admin service's rows.

#include "pg_admin_rows.hpp"
#include "refgate/codec/import_document.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

// CountryGroupRow: group_row().
constexpr const char* kGroupColumns =
    "SELECT family, fallbacks::text AS fallbacks, "
    "(extract(epoch FROM updated_at) * 1000000)::bigint AS updated_us, version "
    "FROM refgate_country_groups ";

CountryGroupRow group_row(const pqxx::row& row) {
    Json item{{"family", row["family"].c_str()},
              {"fallbacks", Json::parse(row["fallbacks"].c_str())}};
    CountryGroupRow out;
    out.group = codec::country_groups_from_json(Json::array({std::move(item)})).front();
    out.updated_us = row["updated_us"].as<std::int64_t>();
    out.version = row["version"].as<std::int64_t>();
    return out;
}

}  // namespace

std::vector<CountryGroupRow> PgAdminRows::country_groups() {
    std::vector<CountryGroupRow> rows;
    for (const auto& row : tx_.exec(std::string(kGroupColumns) + "ORDER BY family"))
        rows.push_back(group_row(row));
    return rows;
}

std::optional<CountryGroupRow> PgAdminRows::country_group(const std::string& family, RowLock lock) {
    std::string sql = std::string(kGroupColumns) + "WHERE family = $1";
    if (lock == RowLock::update) sql += " FOR UPDATE";
    if (lock == RowLock::share) sql += " FOR SHARE";
    auto rows = tx_.exec_params(sql, family);
    if (rows.empty()) return std::nullopt;
    return group_row(rows[0]);
}

bool PgAdminRows::put_country_group(const domain::CountryGroup& group, bool create) {
    auto fallbacks = codec::country_group_to_json(group)["fallbacks"].dump();
    if (create) {
        return !tx_.exec_params(
                       "INSERT INTO refgate_country_groups (family, fallbacks) "
                       "VALUES ($1, $2::jsonb) ON CONFLICT (family) DO NOTHING "
                       "RETURNING family",
                       group.family, fallbacks)
                    .empty();
    }
    tx_.exec_params("UPDATE refgate_country_groups SET fallbacks = $2::jsonb WHERE family = $1",
                    group.family, fallbacks);
    return true;
}

void PgAdminRows::delete_country_group(const std::string& family) {
    tx_.exec_params("DELETE FROM refgate_country_groups WHERE family = $1", family);
}

}  // namespace refgate::admin
