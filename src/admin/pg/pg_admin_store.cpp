#include "refgate/admin/pg_admin_store.hpp"

#include <pwd.h>
#include <unistd.h>

#include "pg_admin_rows.hpp"
#include "pg_console_rows.hpp"
#include "pg_transaction.hpp"
#include "refgate/admin/admin_service.hpp"

namespace refgate::admin {
namespace {

// The CLI's services: one connection at a time, failures named after the command.
std::shared_ptr<pg::ConnectionPool> cli_pool(const std::string& database_url) {
    return std::make_shared<pg::ConnectionPool>(database_url,
                                                pg::PoolOptions{.max_idle = 0, .max_open = 1});
}

template <typename Service, typename F>
auto naming_failures(Service& service, const char* what, F&& f) {
    try {
        return f(service);
    } catch (const StoreError& e) {
        throw StoreError(std::string(what) + ": " + e.what());
    }
}

template <typename F>
auto with_service(const std::string& database_url, const char* what, F&& f) {
    AdminService service(std::make_unique<PgAdminRepository>(cli_pool(database_url)));
    return naming_failures(service, what, std::forward<F>(f));
}

template <typename F>
auto with_console(const std::string& database_url, const char* what, F&& f) {
    ConsoleService console(std::make_unique<PgConsoleRepository>(cli_pool(database_url)));
    return naming_failures(console, what, std::forward<F>(f));
}

}  // namespace

void PgAdminRepository::run(Access access, const std::function<void(AdminRows&)>& work) {
    run_transaction<PgAdminRows>(*pool_, access == Access::read, work);
}

std::unique_ptr<AdminStore> make_pg_admin_store(PgAdminStoreOptions options) {
    return make_pg_admin_stores(std::move(options)).store;
}

PgAdminStores make_pg_admin_stores(PgAdminStoreOptions options, ConsoleOptions console) {
    auto pool = std::make_shared<pg::ConnectionPool>(
        pg::with_application_name(options.database_url, "refgate-admin"),
        pg::PoolOptions{.max_idle = options.max_idle_connections,
                        .max_open = options.max_open_connections,
                        .wait = options.connection_wait});
    PgAdminStores stores;
    stores.store = std::make_unique<AdminService>(
        std::make_unique<PgAdminRepository>(pool),
        AdminServiceOptions{.url_policy = options.url_policy,
                            .clock = options.clock,
                            .public_base_url = options.public_base_url,
                            .default_locale = options.default_locale});
    stores.console = std::make_shared<ConsoleService>(
        std::make_unique<PgConsoleRepository>(std::move(pool)), console);
    return stores;
}

std::string os_user_actor() {
    const passwd* user = ::getpwuid(::geteuid());
    return "cli:" + (user != nullptr && user->pw_name != nullptr
                         ? std::string(user->pw_name)
                         : "uid" + std::to_string(::geteuid()));
}

std::string create_token(const std::string& database_url, const NewToken& token,
                         const std::string& actor) {
    return with_service(database_url, "token create", [&](AdminService& service) {
        return service.create_token_text(actor, token);
    });
}

std::vector<TokenView> list_tokens(const std::string& database_url) {
    return with_service(database_url, "token list",
                        [](AdminService& service) { return service.token_list(); });
}

bool revoke_token(const std::string& database_url, const std::string& name,
                  const std::string& actor) {
    return with_service(database_url, "token revoke", [&](AdminService& service) {
        return service.revoke_token_named(actor, name);
    });
}

std::string create_user(const std::string& database_url, const std::string& name, Role role,
                        const std::optional<std::string>& password, const std::string& actor) {
    return with_console(database_url, "user create", [&](ConsoleService& console) {
        return console.create_user_named(actor, name, role, password);
    });
}

std::vector<UserRow> list_users(const std::string& database_url) {
    return with_console(database_url, "user list",
                        [](ConsoleService& console) { return console.user_list(); });
}

DisableResult disable_user(const std::string& database_url, const std::string& name,
                           const std::string& actor) {
    return with_console(database_url, "user disable", [&](ConsoleService& console) {
        return console.disable_user_named(actor, name);
    });
}

std::optional<std::string> set_user_password(const std::string& database_url,
                                             const std::string& name,
                                             const std::optional<std::string>& password,
                                             const std::string& actor) {
    return with_console(database_url, "user set-password", [&](ConsoleService& console) {
        return console.set_password_named(actor, name, password);
    });
}

}  // namespace refgate::admin
