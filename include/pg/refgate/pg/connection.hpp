#pragma once

#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <string_view>

namespace refgate::pg {

// Which server of a multi-host URI a connection needs.
enum class Server {
    primary,  // writes: a URI naming several hosts without target_session_attrs gets read-write
    any,      // reads only: whichever host libpq reaches first (a standby will do)
};

// The URI as refgate connects with it: a connect timeout added when it has none, so that an
// unreachable server fails fast instead of hanging a worker for minutes (libpq applies it to
// each host in turn), and for Server::primary, target_session_attrs=read-write when it names
// several hosts and no target_session_attrs, so that libpq skips a standby and a stopped primary.
std::string connection_uri(const std::string& url, int connect_timeout_seconds,
                           Server server = Server::primary);

// The URI with fallback_application_name=`name` (unless it has one): which of refgate's pools a
// server connection belongs to shows in pg_stat_activity; an application_name in the URI wins.
std::string with_application_name(const std::string& url, std::string_view name);

// Opens a connection to connection_uri(url, ...).
std::unique_ptr<pqxx::connection> connect(const std::string& url, int connect_timeout_seconds = 3,
                                          Server server = Server::primary);

// False when the server closed an idle connection (it was stopped, or failed over): noticed by
// reading what it sent rather than by a failed query (libpqxx 6.4 leaks that one's result).
bool still_open(pqxx::connection& conn);

}  // namespace refgate::pg
