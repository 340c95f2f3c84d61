// Branded domains (issue 46, refgate_domains) as the admin service's rows, and a link by its
// domain and slug.

#include "pg_admin_rows.hpp"

namespace refgate::admin {
namespace {

// DomainView: domain_row().
const std::string kDomainColumns =
    "SELECT host, is_default, not_found, " + pg::micros("created_at") + " AS created_us, " +
    pg::micros("updated_at") + " AS updated_us, version FROM refgate_domains ";

codec::DomainView domain_row(const pqxx::row& row) {
    codec::DomainView out;
    out.domain.host = row["host"].c_str();
    out.domain.is_default = row["is_default"].as<bool>();
    if (auto not_found = row["not_found"]; !not_found.is_null())
        out.domain.not_found = not_found.c_str();
    out.stamps = {row["created_us"].as<std::int64_t>(), row["updated_us"].as<std::int64_t>(),
                  row["version"].as<std::int64_t>()};
    return out;
}

}  // namespace

std::vector<codec::DomainView> PgAdminRows::domains() {
    std::vector<codec::DomainView> rows;
    for (const auto& row : tx_.exec(kDomainColumns + "ORDER BY host"))
        rows.push_back(domain_row(row));
    return rows;
}

std::optional<codec::DomainView> PgAdminRows::domain(const std::string& host, RowLock lock) {
    std::string sql = kDomainColumns + "WHERE host = $1";
    if (lock == RowLock::update) sql += " FOR UPDATE";
    if (lock == RowLock::share) sql += " FOR SHARE";
    auto rows = tx_.exec_params(sql, host);
    if (rows.empty()) return std::nullopt;
    return domain_row(rows[0]);
}

bool PgAdminRows::put_domain(const domain::Domain& d, bool create) {
    // The one-default index is checked row by row: the old default steps down first (the
    // deferred trigger checks at commit that one domain is the default).
    if (d.is_default)
        tx_.exec_params(
            "UPDATE refgate_domains SET is_default = false, updated_at = now(), "
            "version = version + 1 WHERE is_default AND host <> $1",
            d.host);
    if (create) {
        return !tx_.exec_params(
                       "INSERT INTO refgate_domains (host, is_default, not_found) "
                       "VALUES ($1, $2, NULLIF($3, '')) ON CONFLICT (host) DO NOTHING "
                       "RETURNING host",
                       d.host, d.is_default, d.not_found)
                    .empty();
    }
    tx_.exec_params(
        "UPDATE refgate_domains SET is_default = $2, not_found = NULLIF($3, ''), "
        "updated_at = now(), version = version + 1 WHERE host = $1",
        d.host, d.is_default, d.not_found);
    return true;
}

void PgAdminRows::delete_domain(const std::string& host) {
    tx_.exec_params("DELETE FROM refgate_domains WHERE host = $1", host);
}

std::int64_t PgAdminRows::count_domain_links(const std::string& host) {
    return tx_
        .exec_params("SELECT count(*) AS links FROM refgate_links WHERE domain = $1",
                     host)[0]["links"]
        .as<std::int64_t>();
}

std::optional<LinkRow> PgAdminRows::link_on(const std::string& host, const std::string& slug,
                                            RowLock lock) {
    std::string sql = "WHERE l.slug = $1 AND l.domain IS NOT DISTINCT FROM NULLIF($2, '')";
    if (lock == RowLock::update) sql += " FOR UPDATE OF l";
    if (lock == RowLock::share) sql += " FOR SHARE OF l";
    auto found = pg::read_links(tx_, sql, slug, host);
    if (found.empty()) return std::nullopt;
    pg::StoredLink& stored = found.front();
    std::int64_t id = stored.link.id;
    return LinkRow{id, std::move(stored.link), stored.stamps};
}

}  // namespace refgate::admin
