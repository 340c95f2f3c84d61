#include "pg_console_rows.hpp"

#include "pg_admin_rows.hpp"
#include "pg_transaction.hpp"

namespace refgate::admin {
namespace {

// Microseconds since the epoch to a timestamptz (pg::micros() is the other way).
std::string at_micros(std::string_view parameter) {
    return "('epoch'::timestamptz + " + std::string(parameter) + " * interval '1 microsecond')";
}

// UserRow: user_row().
const std::string kUserColumns =
    "SELECT name, role, password_hash, disabled, " + pg::micros("created_at") + " AS created_us, " +
    pg::micros("updated_at") + " AS updated_us, version, " + pg::micros("last_sign_in_at") +
    " AS last_sign_in_us FROM refgate_console_users ";

UserRow user_row(const pqxx::row& row) {
    UserRow r;
    r.name = row["name"].as<std::string>();
    r.role = row["role"].as<std::string>();
    r.password_hash = row["password_hash"].as<std::string>();
    r.disabled = row["disabled"].as<bool>();
    r.stamps = {row["created_us"].as<std::int64_t>(), row["updated_us"].as<std::int64_t>(),
                row["version"].as<std::int64_t>()};
    if (auto at = row["last_sign_in_us"]; !at.is_null()) r.last_sign_in_us = at.as<std::int64_t>();
    return r;
}

}  // namespace

std::optional<UserRow> PgConsoleRows::user(const std::string& name, RowLock lock) {
    std::string sql = kUserColumns + "WHERE name = $1";
    if (lock == RowLock::update) sql += " FOR UPDATE";
    if (lock == RowLock::share) sql += " FOR SHARE";
    auto rows = tx_.exec_params(sql, name);
    if (rows.empty()) return std::nullopt;
    return user_row(rows[0]);
}

std::vector<UserRow> PgConsoleRows::users() {
    std::vector<UserRow> list;
    for (const auto& row : tx_.exec(kUserColumns + "ORDER BY name")) list.push_back(user_row(row));
    return list;
}

bool PgConsoleRows::insert_user(const std::string& name, const std::string& role,
                                const std::string& password_hash) {
    auto rows = tx_.exec_params(
        "INSERT INTO refgate_console_users (name, role, password_hash) VALUES ($1, $2, $3) "
        "ON CONFLICT (name) DO NOTHING RETURNING 1",
        name, role, password_hash);
    return !rows.empty();
}

std::vector<std::string> PgConsoleRows::lock_enabled_admins() {
    std::vector<std::string> names;
    for (const auto& row : tx_.exec("SELECT name FROM refgate_console_users WHERE role = 'admin' "
                                    "AND NOT disabled ORDER BY name FOR UPDATE"))
        names.push_back(row["name"].as<std::string>());
    return names;
}

void PgConsoleRows::update_user(const UserRow& row) {
    tx_.exec_params(
        "UPDATE refgate_console_users SET role = $2, disabled = $3, password_hash = $4, "
        "version = version + 1, updated_at = now() WHERE name = $1",
        row.name, row.role, row.disabled, row.password_hash);
}

void PgConsoleRows::rehash_user(const std::string& name, const std::string& password_hash) {
    tx_.exec_params("UPDATE refgate_console_users SET password_hash = $2 WHERE name = $1", name,
                    password_hash);
}

void PgConsoleRows::record_sign_in(const std::string& name, std::int64_t at_us) {
    tx_.exec_params("UPDATE refgate_console_users SET last_sign_in_at = " + at_micros("$2") +
                        " WHERE name = $1",
                    name, at_us);
}

void PgConsoleRows::insert_session(const SessionRow& s) {
    tx_.exec_params(
        "INSERT INTO refgate_console_sessions (id_hash, user_name, csrf_token, "
        "created_at, last_seen_at, expires_at) VALUES (decode($1, 'hex'), $2, $3, " +
            at_micros("$4") + ", " + at_micros("$5") + ", " + at_micros("$6") + ")",
        s.id_hash, s.user, s.csrf_token, s.created_us, s.last_seen_us, s.expires_us);
}

std::optional<SessionRow> PgConsoleRows::session(const std::string& id_hash) {
    auto rows = tx_.exec_params("SELECT s.user_name, u.role, u.disabled, s.csrf_token, " +
                                    pg::micros("s.created_at") + " AS created_us, " +
                                    pg::micros("s.last_seen_at") + " AS last_seen_us, " +
                                    pg::micros("s.expires_at") +
                                    " AS expires_us, s.ended_at IS NOT NULL AS ended "
                                    "FROM refgate_console_sessions s "
                                    "JOIN refgate_console_users u ON u.name = s.user_name "
                                    "WHERE s.id_hash = decode($1, 'hex')",
                                id_hash);
    if (rows.empty()) return std::nullopt;
    const auto& row = rows[0];
    SessionRow s;
    s.id_hash = id_hash;
    s.user = row["user_name"].as<std::string>();
    s.role = row["role"].as<std::string>();
    s.user_disabled = row["disabled"].as<bool>();
    s.csrf_token = row["csrf_token"].as<std::string>();
    s.created_us = row["created_us"].as<std::int64_t>();
    s.last_seen_us = row["last_seen_us"].as<std::int64_t>();
    s.expires_us = row["expires_us"].as<std::int64_t>();
    s.ended = row["ended"].as<bool>();
    return s;
}

void PgConsoleRows::touch_session(const std::string& id_hash, std::int64_t at_us) {
    tx_.exec_params("UPDATE refgate_console_sessions SET last_seen_at = " + at_micros("$2") +
                        " WHERE id_hash = decode($1, 'hex')",
                    id_hash, at_us);
}

bool PgConsoleRows::end_session(const std::string& id_hash, std::int64_t at_us) {
    return !tx_.exec_params("UPDATE refgate_console_sessions SET ended_at = " + at_micros("$2") +
                                " WHERE id_hash = decode($1, 'hex') AND ended_at IS NULL "
                                "RETURNING 1",
                            id_hash, at_us)
                .empty();
}

void PgConsoleRows::end_sessions(const std::string& user, const std::string& keep,
                                 std::int64_t at_us) {
    tx_.exec_params("UPDATE refgate_console_sessions SET ended_at = " + at_micros("$3") +
                        " WHERE user_name = $1 AND ended_at IS NULL "
                        "AND ($2 = '' OR id_hash <> decode($2, 'hex'))",
                    user, keep, at_us);
}

void PgConsoleRows::insert_audit(const AuditRecord& record) {
    PgAdminRows(tx_).insert_audit(record);
}

void PgConsoleRows::commit() { tx_.commit(); }

void PgConsoleRepository::run(Access access, const std::function<void(ConsoleRows&)>& work) {
    run_transaction<PgConsoleRows>(*pool_, access == Access::read, work);
}

}  // namespace refgate::admin
