#include "refgate/pg/connection.hpp"

#include "refgate/config/postgres_url.hpp"

namespace refgate::pg {

std::string connection_uri(const std::string& url, int connect_timeout_seconds, Server server) {
    std::string full = config::with_postgres_url_default(url, "connect_timeout",
                                                         std::to_string(connect_timeout_seconds));
    auto hosts = config::postgres_url_hosts(url);
    if (server == Server::primary && hosts && hosts->size() > 1)
        full = config::with_postgres_url_default(std::move(full), "target_session_attrs",
                                                 "read-write");
    return full;
}

std::string with_application_name(const std::string& url, std::string_view name) {
    return config::with_postgres_url_default(url, "fallback_application_name", name);
}

std::unique_ptr<pqxx::connection> connect(const std::string& url, int connect_timeout_seconds,
                                          Server server) {
    return std::make_unique<pqxx::connection>(connection_uri(url, connect_timeout_seconds, server));
}

bool still_open(pqxx::connection& conn) {
    if (!conn.is_open()) return false;
    try {
        conn.get_notifs();
    } catch (const pqxx::broken_connection&) {
        return false;
    }
    return conn.is_open();
}

}  // namespace refgate::pg
