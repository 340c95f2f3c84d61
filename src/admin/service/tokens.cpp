#include "refgate/admin/tokens.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>

#include "refgate/admin/scopes.hpp"

namespace refgate::admin {
namespace {

constexpr std::size_t kTokenBytes = 32;
constexpr std::string_view kPrefix = "rg_";
constexpr std::size_t kEncodedLength = 43;  // 32 bytes in unpadded base64url

constexpr char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

}  // namespace

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

namespace {

// In bit order: scope::links_read is the first.
constexpr std::array<std::string_view, 9> kScopeNames{
    "links:read",    "links:write",       "partners:read",  "partners:write", "stats:read",
    "earnings:read", "disclosures:write", "webhooks:write", "users:write"};

bool same_host(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
               return lower(x) == lower(y);
           });
}

}  // namespace

std::vector<std::string_view> scope_names(Scopes scopes) {
    std::vector<std::string_view> names;
    for (std::size_t i = 0; i < kScopeNames.size(); ++i) {
        if ((scopes & (1u << i)) != 0) names.push_back(kScopeNames[i]);
    }
    return names;
}

std::optional<Scopes> parse_scope(std::string_view name) {
    for (std::size_t i = 0; i < kScopeNames.size(); ++i) {
        if (kScopeNames[i] == name) return static_cast<Scopes>(1u << i);
    }
    return std::nullopt;
}

Scopes role_scopes(Role role) {
    constexpr Scopes viewer =
        scope::links_read | scope::partners_read | scope::stats_read | scope::earnings_read;
    constexpr Scopes editor =
        viewer | scope::links_write | scope::partners_write | scope::disclosures_write;
    switch (role) {
        case Role::viewer:
            return viewer;
        case Role::editor:
            return editor;
        case Role::admin:
            return scope::all;
    }
    return viewer;
}

bool Reach::partner_allowed(std::string_view slug) const {
    return partners.empty() || std::find(partners.begin(), partners.end(), slug) != partners.end();
}

bool link_domain_allowed(const Reach& reach, std::string_view link_domain,
                         std::string_view default_host) {
    if (reach.domains.empty()) return true;
    // A link without `domain` is on the default domain.
    std::string_view host = link_domain.empty() ? default_host : link_domain;
    if (host.empty()) return false;
    return std::any_of(reach.domains.begin(), reach.domains.end(),
                       [&](const std::string& allowed) { return same_host(allowed, host); });
}

}  // namespace refgate::admin
