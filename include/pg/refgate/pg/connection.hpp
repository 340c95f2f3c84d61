#pragma once

#include <memory>
#include <pqxx/pqxx>
#include <string>

namespace refgate::pg {

// Opens a connection; adds a connect timeout to the URI when it has none, so that an unreachable
// server fails fast instead of hanging a worker for minutes.
std::unique_ptr<pqxx::connection> connect(const std::string& url, int connect_timeout_seconds = 3);

}  // namespace refgate::pg
