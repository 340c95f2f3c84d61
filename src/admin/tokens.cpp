#include "refgate/admin/tokens.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <array>
#include <cstdint>
#include <stdexcept>

#include "pg/connection.hpp"

namespace refgate::admin {
namespace {

constexpr std::size_t kTokenBytes = 32;
constexpr std::string_view kPrefix = "rg_";
constexpr std::size_t kEncodedLength = 43;  // 32 bytes in unpadded base64url

constexpr char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string base64url(const unsigned char* data, std::size_t size) {
    std::string out;
    std::uint32_t bits = 0;
    int count = 0;
    for (std::size_t i = 0; i < size; ++i) {
        bits = (bits << 8) | data[i];
        count += 8;
        while (count >= 6) {
            count -= 6;
            out.push_back(kBase64Url[(bits >> count) & 0x3f]);
        }
    }
    if (count > 0) out.push_back(kBase64Url[(bits << (6 - count)) & 0x3f]);
    return out;
}

}  // namespace

std::string_view to_string(Role role) {
    switch (role) {
        case Role::viewer:
            return "viewer";
        case Role::editor:
            return "editor";
        case Role::admin:
            return "admin";
    }
    return "viewer";
}

std::optional<Role> parse_role(std::string_view text) {
    if (text == "viewer") return Role::viewer;
    if (text == "editor") return Role::editor;
    if (text == "admin") return Role::admin;
    return std::nullopt;
}

std::string generate_token() {
    std::array<unsigned char, kTokenBytes> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
        throw std::runtime_error("RAND_bytes failed");
    std::string token(kPrefix);
    token += base64url(bytes.data(), bytes.size());
    OPENSSL_cleanse(bytes.data(), bytes.size());
    return token;
}

std::string hash_token(std::string_view token) {
    std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
    SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest.data());
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(digest.size() * 2);
    for (unsigned char c : digest) {
        hex.push_back(kHex[c >> 4]);
        hex.push_back(kHex[c & 0xf]);
    }
    return hex;
}

bool same_hash(std::string_view a, std::string_view b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool plausible_token(std::string_view token) {
    if (!token.starts_with(kPrefix) || token.size() != kPrefix.size() + kEncodedLength)
        return false;
    for (char c : token.substr(kPrefix.size())) {
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_';
        if (!ok) return false;
    }
    return true;
}

bool valid_token_name(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    auto alnum = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    };
    if (!alnum(name.front())) return false;
    for (char c : name) {
        if (!alnum(c) && c != '_' && c != '.' && c != '@' && c != '-') return false;
    }
    return true;
}

std::string create_token(const std::string& database_url, const std::string& name, Role role) {
    if (!valid_token_name(name))
        throw std::invalid_argument("token name must match [A-Za-z0-9][A-Za-z0-9_.@-]{0,63}");
    std::string token = generate_token();
    try {
        auto conn = pg::connect(database_url);
        pqxx::work tx(*conn);
        auto live = tx.exec_params(
            "SELECT 1 FROM refgate_api_tokens WHERE name = $1 AND revoked_at IS NULL", name);
        if (!live.empty())
            throw std::invalid_argument("a live token is already named '" + name + "'");
        tx.exec_params(
            "INSERT INTO refgate_api_tokens (name, role, token_hash) "
            "VALUES ($1, $2, decode($3, 'hex'))",
            name, std::string(to_string(role)), hash_token(token));
        nlohmann::json after{{"name", name}, {"role", std::string(to_string(role))}};
        tx.exec_params(
            "INSERT INTO refgate_audit (actor, entity, slug, action, before, after) "
            "VALUES ('cli', 'token', $1, 'create', NULL, $2::jsonb)",
            name, after.dump());
        tx.commit();
    } catch (const pqxx::failure& e) {
        throw StoreError(std::string("token create: ") + e.what());
    }
    return token;
}

std::vector<TokenInfo> list_tokens(const std::string& database_url) {
    std::vector<TokenInfo> tokens;
    try {
        auto conn = pg::connect(database_url);
        pqxx::read_transaction tx(*conn);
        auto rows = tx.exec(
            "SELECT name, role, to_char(created_at AT TIME ZONE 'UTC', "
            "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), coalesce(last_used_on::text, ''), "
            "coalesce(to_char(revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
            "'') "
            "FROM refgate_api_tokens ORDER BY id");
        for (const auto& row : rows) {
            tokens.push_back({row[0].as<std::string>(), row[1].as<std::string>(),
                              row[2].as<std::string>(), row[3].as<std::string>(),
                              row[4].as<std::string>()});
        }
    } catch (const pqxx::failure& e) {
        throw StoreError(std::string("token list: ") + e.what());
    }
    return tokens;
}

bool revoke_token(const std::string& database_url, const std::string& name) {
    try {
        auto conn = pg::connect(database_url);
        pqxx::work tx(*conn);
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
            "VALUES ('cli', 'token', $1, 'revoke', $2::jsonb, $3::jsonb)",
            name, before.dump(), after.dump());
        tx.commit();
        return true;
    } catch (const pqxx::failure& e) {
        throw StoreError(std::string("token revoke: ") + e.what());
    }
}

}  // namespace refgate::admin
