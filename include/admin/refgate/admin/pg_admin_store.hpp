#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "refgate/admin/admin_store.hpp"
#include "refgate/admin/console_service.hpp"
#include "refgate/admin/tokens.hpp"
#include "refgate/domain/clock.hpp"
#include "refgate/domain/destination.hpp"

namespace refgate::admin {

struct PgAdminStoreOptions {
    std::string database_url;
    domain::UrlPolicy url_policy;
    std::size_t max_idle_connections = 4;
    // In use at once: fewer than the server's blocking threads, so that a stalled database
    // never holds all of them.
    std::size_t max_open_connections = 3;
    // How long a call waits for a connection (a free one, or a new one to connect) before
    // it fails with StoreError (503).
    std::chrono::milliseconds connection_wait{2'000};
    const domain::Clock* clock =
        nullptr;                  // decides which schedules lie in the future; none: system
    std::string public_base_url;  // of /go/ links; empty: none (no public URL, no QR code)
    std::string default_locale = "en";
};

// The store over PostgreSQL, with a small mutex-protected pool of connections.
std::unique_ptr<AdminStore> make_pg_admin_store(PgAdminStoreOptions options);

// The store and the console's users and sessions, over one pool of connections.
struct PgAdminStores {
    std::unique_ptr<AdminStore> store;
    std::shared_ptr<ConsoleService> console;
};
PgAdminStores make_pg_admin_stores(PgAdminStoreOptions options, ConsoleOptions console = {});

// The actor the CLI audits its changes under when not given one: "cli:<OS user>" ("cli:uid<N>"
// for a user without a name).
std::string os_user_actor();

// For the CLI. Throw StoreError on database failures and std::invalid_argument on a bad name,
// role, or a name that already names a live token. Changes are audited under `actor`
// (e.g. "cli:alice").
// Also std::invalid_argument when the token would exceed its role or names an unknown partner.
std::string create_token(const std::string& database_url, const NewToken& token,
                         const std::string& actor);
std::vector<TokenView> list_tokens(const std::string& database_url);
// False when no live token has that name.
bool revoke_token(const std::string& database_url, const std::string& name,
                  const std::string& actor);

// The CLI's user commands; see ConsoleService for what each returns and throws.
std::string create_user(const std::string& database_url, const std::string& name, Role role,
                        const std::optional<std::string>& password, const std::string& actor);
std::vector<UserRow> list_users(const std::string& database_url);
DisableResult disable_user(const std::string& database_url, const std::string& name,
                           const std::string& actor);
std::optional<std::string> set_user_password(const std::string& database_url,
                                             const std::string& name,
                                             const std::optional<std::string>& password,
                                             const std::string& actor);

}  // namespace refgate::admin
