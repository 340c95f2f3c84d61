#pragma once

#include <optional>
#include <string_view>

#include "refgate/admin/admin_store.hpp"

namespace refgate::admin {

// Who holds the live token in an "Authorization: Bearer <token>" value: checked for shape, looked
// up by its SHA-256 and compared in constant time. nullopt when there is none or it is unknown or
// revoked. Throws (StoreError) when the database cannot say.
std::optional<Actor> bearer_actor(AdminStore& store, std::string_view authorization);

// The role of the live token in an "Authorization: Bearer <token>" value; nullopt when there is
// none or it is unknown or revoked. Throws StoreError when the database cannot say.
std::optional<Role> bearer_role(AdminStore& store, std::string_view authorization);

}  // namespace refgate::admin
