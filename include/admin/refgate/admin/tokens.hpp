#pragma once

// API tokens: 32 random bytes shown once as "rg_" + base64url, stored only as their SHA-256.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/admin/admin_store.hpp"

namespace refgate::admin {

// `size` bytes as unpadded base64url (RFC 4648, section 5): tokens, console session ids, CSRF
// tokens and handed-out passwords.
std::string base64url(const unsigned char* data, std::size_t size);
// A new token text from OpenSSL's RAND_bytes; throws std::runtime_error when it fails.
std::string generate_token();
// Lower-case hex SHA-256 of the token text.
std::string hash_token(std::string_view token);
// Compares two hashes in constant time (CRYPTO_memcmp).
bool same_hash(std::string_view a, std::string_view b);
// "rg_" followed by 43 base64url characters.
bool plausible_token(std::string_view token);
// [A-Za-z0-9][A-Za-z0-9_.@-]{0,63}
bool valid_token_name(std::string_view name);

struct TokenInfo {
    std::string name;
    std::string role;
    std::string created_at;
    std::string last_used_on;  // empty: never
    std::string revoked_at;    // empty: live
    std::int64_t id = 0;       // the row's id: the token's version for If-Match
};

}  // namespace refgate::admin
