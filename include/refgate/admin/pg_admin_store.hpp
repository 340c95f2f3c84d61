#pragma once

#include <memory>
#include <string>
#include <vector>

#include "refgate/admin/admin_store.hpp"
#include "refgate/admin/tokens.hpp"
#include "refgate/core/destination.hpp"

namespace refgate::admin {

struct PgAdminStoreOptions {
    std::string database_url;
    UrlPolicy url_policy;
    std::size_t max_idle_connections = 4;
};

// The store over PostgreSQL, with a small mutex-protected pool of connections.
std::unique_ptr<AdminStore> make_pg_admin_store(PgAdminStoreOptions options);

// For the CLI. Throw StoreError on database failures and std::invalid_argument on a bad name,
// role, or a name that already names a live token. Changes are audited under `actor`
// (e.g. "cli:alice").
std::string create_token(const std::string& database_url, const std::string& name, Role role,
                         const std::string& actor);
std::vector<TokenInfo> list_tokens(const std::string& database_url);
// False when no live token has that name.
bool revoke_token(const std::string& database_url, const std::string& name,
                  const std::string& actor);

}  // namespace refgate::admin
