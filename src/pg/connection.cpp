#include "refgate/pg/connection.hpp"

namespace refgate::pg {

std::unique_ptr<pqxx::connection> connect(const std::string& url, int connect_timeout_seconds) {
    std::string full = url;
    if (full.find("connect_timeout=") == std::string::npos) {
        full += (full.find('?') == std::string::npos ? "?" : "&");
        full += "connect_timeout=" + std::to_string(connect_timeout_seconds);
    }
    return std::make_unique<pqxx::connection>(full);
}

}  // namespace refgate::pg
