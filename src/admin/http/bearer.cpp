#include "refgate/admin/bearer.hpp"

#include "refgate/admin/authenticator.hpp"
#include "refgate/admin/tokens.hpp"
#include "refgate/http/request.hpp"

namespace refgate::admin {

namespace {

// The live token an "Authorization: Bearer <token>" value names, expired or not.
std::optional<StoredToken> bearer_token(AdminStore& store, std::string_view authorization) {
    if (authorization.size() <= 7 || !http::iequals(authorization.substr(0, 7), "Bearer "))
        return std::nullopt;
    std::string_view token = authorization.substr(7);
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    if (!plausible_token(token)) return std::nullopt;
    std::string hash = hash_token(token);
    auto stored = store.find_token(hash);
    if (!stored || !same_hash(stored->hash_hex, hash)) return std::nullopt;
    return stored;
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
    auto stored = bearer_token(store_, authorization);
    if (!stored) return {Authentication::Kind::refused, {}};
    if (stored->expired)
        return {Authentication::Kind::refused, {}, "the token expired at " + stored->expires_at};
    return {Authentication::Kind::accepted, std::move(stored->actor)};
}

}  // namespace refgate::admin
