#include "refgate/admin/bearer.hpp"

#include "refgate/admin/authenticator.hpp"
#include "refgate/admin/tokens.hpp"
#include "refgate/domain/time.hpp"
#include "refgate/http/request.hpp"

namespace refgate::admin {

namespace {

// The SHA-256 (hex) of the token an "Authorization: Bearer <token>" value carries; empty when
// it carries none of the right shape.
std::string bearer_hash(std::string_view authorization) {
    if (authorization.size() <= 7 || !http::iequals(authorization.substr(0, 7), "Bearer "))
        return {};
    std::string_view token = authorization.substr(7);
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    if (!plausible_token(token)) return {};
    return hash_token(token);
}

// The live token with that hash, expired or not.
std::optional<StoredToken> stored_token(AdminStore& store, const std::string& hash) {
    if (hash.empty()) return std::nullopt;
    auto stored = store.find_token(hash);
    if (!stored || !same_hash(stored->hash_hex, hash)) return std::nullopt;
    return stored;
}

std::optional<StoredToken> bearer_token(AdminStore& store, std::string_view authorization) {
    return stored_token(store, bearer_hash(authorization));
}

// How long a checked token may be kept: until it expires, and not into the next UTC day (the
// day's first use is what notes its last_used_on).
AuthCache::WallTime kept_until(const StoredToken& token, AuthCache::WallTime now) {
    AuthCache::WallTime until = std::chrono::floor<std::chrono::days>(now) + std::chrono::days{1};
    if (!token.expires_at.empty()) {
        auto expires = domain::parse_rfc3339(token.expires_at);
        if (!expires) return now;  // not kept
        if (*expires < until) until = *expires;
    }
    return until;
}

}  // namespace

std::optional<Actor> bearer_actor(AdminStore& store, std::string_view authorization) {
    auto stored = bearer_token(store, authorization);
    if (!stored || stored->expired) return std::nullopt;
    return std::move(stored->actor);
}

std::optional<Role> bearer_role(AdminStore& store, std::string_view authorization) {
    auto actor = bearer_actor(store, authorization);
    if (!actor) return std::nullopt;
    return actor->role;
}

Authentication BearerAuthenticator::authenticate(const http::Request& request) {
    std::string_view authorization = request.header("Authorization");
    if (authorization.empty()) return {};
    std::string hash = bearer_hash(authorization);
    bool caching = cache_ != nullptr && cache_->enabled() && !hash.empty();
    std::uint64_t generation = 0;
    if (caching) {
        if (auto kept = cache_->find(AuthCache::token_key(hash)))
            return {Authentication::Kind::accepted, std::move(kept->actor)};
        generation = cache_->generation();
    }
    auto stored = stored_token(store_, hash);
    if (!stored) return {Authentication::Kind::refused, {}};
    if (stored->expired)
        return {Authentication::Kind::refused, {}, "the token expired at " + stored->expires_at};
    if (caching)
        cache_->put(AuthCache::token_key(hash), {.actor = stored->actor},
                    kept_until(*stored, cache_->now()), generation);
    return {Authentication::Kind::accepted, std::move(stored->actor)};
}

}  // namespace refgate::admin
