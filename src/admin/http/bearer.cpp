#include "refgate/admin/bearer.hpp"

#include "refgate/admin/authenticator.hpp"
#include "refgate/admin/tokens.hpp"
#include "refgate/http/request.hpp"

namespace refgate::admin {

std::optional<Actor> bearer_actor(AdminStore& store, std::string_view authorization) {
    if (authorization.size() <= 7 || !http::iequals(authorization.substr(0, 7), "Bearer "))
        return std::nullopt;
    std::string_view token = authorization.substr(7);
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    if (!plausible_token(token)) return std::nullopt;
    std::string hash = hash_token(token);
    auto stored = store.find_token(hash);
    if (!stored || !same_hash(stored->hash_hex, hash)) return std::nullopt;
    return stored->actor;
}

std::optional<Role> bearer_role(AdminStore& store, std::string_view authorization) {
    auto actor = bearer_actor(store, authorization);
    if (!actor) return std::nullopt;
    return actor->role;
}

Authentication BearerAuthenticator::authenticate(const http::Request& request) {
    std::string_view authorization = request.header("Authorization");
    if (authorization.empty()) return {};
    auto actor = bearer_actor(store_, authorization);
    if (!actor) return {Authentication::Kind::refused, {}};
    return {Authentication::Kind::accepted, std::move(*actor)};
}

}  // namespace refgate::admin
