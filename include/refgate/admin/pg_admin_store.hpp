#pragma once

#include <memory>
#include <string>

#include "refgate/admin/admin_store.hpp"
#include "refgate/core/destination.hpp"

namespace refgate::admin {

struct PgAdminStoreOptions {
    std::string database_url;
    UrlPolicy url_policy;
    std::size_t max_idle_connections = 4;
};

// The store over PostgreSQL, with a small mutex-protected pool of connections.
std::unique_ptr<AdminStore> make_pg_admin_store(PgAdminStoreOptions options);

}  // namespace refgate::admin
