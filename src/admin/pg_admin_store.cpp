#include "refgate/admin/pg_admin_store.hpp"

#include "pg_admin_rows.hpp"
#include "refgate/admin/admin_service.hpp"

namespace refgate::admin {
namespace {

// The CLI's repository: one connection at a time, failures named after the command.
template <typename F>
auto with_service(const std::string& database_url, const char* what, F&& f) {
    AdminService service(std::make_unique<PgAdminRepository>(
        database_url, pg::PoolOptions{.max_idle = 0, .max_open = 1}));
    try {
        return f(service);
    } catch (const StoreError& e) {
        throw StoreError(std::string(what) + ": " + e.what());
    }
}

}  // namespace

void PgAdminRepository::run(Access access, const std::function<void(AdminRows&)>& work) {
    try {
        pool_.run([&](pqxx::connection& c) {
            if (access == Access::read) {
                pqxx::read_transaction tx(c);
                PgAdminRows rows(tx);
                work(rows);
            } else {
                pqxx::work tx(c);
                PgAdminRows rows(tx);
                work(rows);
            }
            return true;
        });
    } catch (const pqxx::failure& e) {
        throw StoreError(e.what());
    } catch (const pg::PoolTimeout& e) {
        throw StoreError(e.what());
    }
}

std::unique_ptr<AdminStore> make_pg_admin_store(PgAdminStoreOptions options) {
    auto repository = std::make_unique<PgAdminRepository>(
        options.database_url, pg::PoolOptions{.max_idle = options.max_idle_connections,
                                              .max_open = options.max_open_connections,
                                              .wait = options.connection_wait});
    return std::make_unique<AdminService>(
        std::move(repository), AdminServiceOptions{.url_policy = options.url_policy,
                                                   .clock = options.clock,
                                                   .public_base_url = options.public_base_url,
                                                   .default_locale = options.default_locale});
}

std::string create_token(const std::string& database_url, const std::string& name, Role role,
                         const std::string& actor) {
    return with_service(database_url, "token create", [&](AdminService& service) {
        return service.create_token_text(actor, name, role);
    });
}

std::vector<TokenInfo> list_tokens(const std::string& database_url) {
    return with_service(database_url, "token list",
                        [](AdminService& service) { return service.token_list(); });
}

bool revoke_token(const std::string& database_url, const std::string& name,
                  const std::string& actor) {
    return with_service(database_url, "token revoke", [&](AdminService& service) {
        return service.revoke_token_named(actor, name);
    });
}

}  // namespace refgate::admin
