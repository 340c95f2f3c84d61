#include "token_rows.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "refgate/pg/connection.hpp"

namespace refgate::admin {

std::string insert_token(pqxx::transaction_base& tx, const std::string& actor,
                         const std::string& name, Role role) {
    if (!valid_token_name(name))
        throw std::invalid_argument("token name must match [A-Za-z0-9][A-Za-z0-9_.@-]{0,63}");
    std::string token = generate_token();
    auto live = tx.exec_params(
        "SELECT 1 FROM refgate_api_tokens WHERE name = $1 AND revoked_at IS NULL "
        "FOR UPDATE",
        name);
    if (!live.empty()) throw std::invalid_argument("a live token is already named '" + name + "'");
    tx.exec_params(
        "INSERT INTO refgate_api_tokens (name, role, token_hash) VALUES ($1, $2, decode($3, "
        "'hex'))",
        name, std::string(to_string(role)), hash_token(token));
    nlohmann::json after{{"name", name}, {"role", std::string(to_string(role))}};
    tx.exec_params(
        "INSERT INTO refgate_audit (actor, entity, slug, action, before, after) "
        "VALUES ($1, 'token', $2, 'create', NULL, $3::jsonb)",
        actor, name, after.dump());
    return token;
}

std::vector<TokenInfo> select_tokens(pqxx::transaction_base& tx, const std::string& name) {
    std::vector<TokenInfo> tokens;
    auto rows = tx.exec_params(
        "SELECT name, role, to_char(created_at AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), coalesce(last_used_on::text, ''), "
        "coalesce(to_char(revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ''), "
        "id FROM refgate_api_tokens WHERE ($1 = '' OR (name = $1 AND revoked_at IS NULL)) "
        "ORDER BY id",
        name);
    for (const auto& row : rows) {
        tokens.push_back({row[0].as<std::string>(), row[1].as<std::string>(),
                          row[2].as<std::string>(), row[3].as<std::string>(),
                          row[4].as<std::string>(), row[5].as<std::int64_t>()});
    }
    return tokens;
}

bool mark_revoked(pqxx::transaction_base& tx, const std::string& actor, const std::string& name) {
    auto rows = tx.exec_params(
        "UPDATE refgate_api_tokens SET revoked_at = now() "
        "WHERE name = $1 AND revoked_at IS NULL RETURNING role",
        name);
    if (rows.empty()) return false;
    nlohmann::json before{{"name", name}, {"role", rows[0][0].as<std::string>()}};
    nlohmann::json after = before;
    after["revoked"] = true;
    tx.exec_params(
        "INSERT INTO refgate_audit (actor, entity, slug, action, before, after) "
        "VALUES ($1, 'token', $2, 'revoke', $3::jsonb, $4::jsonb)",
        actor, name, before.dump(), after.dump());
    return true;
}

namespace {

// One transaction on a connection of its own, for the CLI.
template <typename F>
auto in_transaction(const std::string& database_url, const char* what, F&& f) {
    try {
        auto conn = pg::connect(database_url);
        pqxx::work tx(*conn);
        auto result = f(tx);
        tx.commit();
        return result;
    } catch (const pqxx::failure& e) {
        throw StoreError(std::string(what) + ": " + e.what());
    }
}

}  // namespace

std::string create_token(const std::string& database_url, const std::string& name, Role role,
                         const std::string& actor) {
    return in_transaction(database_url, "token create",
                          [&](pqxx::work& tx) { return insert_token(tx, actor, name, role); });
}

std::vector<TokenInfo> list_tokens(const std::string& database_url) {
    return in_transaction(database_url, "token list",
                          [&](pqxx::work& tx) { return select_tokens(tx, ""); });
}

bool revoke_token(const std::string& database_url, const std::string& name,
                  const std::string& actor) {
    return in_transaction(database_url, "token revoke",
                          [&](pqxx::work& tx) { return mark_revoked(tx, actor, name); });
}

}  // namespace refgate::admin
