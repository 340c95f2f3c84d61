#pragma once

// Structured logging: one JSON object a line on stderr. Callers must never pass an IP address,
// a user agent, a cookie or any other fact about a reader; only operational facts.

#include <nlohmann/json.hpp>
#include <string_view>

namespace refgate::runtime::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3 };

// Returns false for an unknown name.
bool parse_level(std::string_view name, Level& out);
void set_level(Level level);

void write(Level level, std::string_view event,
           const nlohmann::json& fields = nlohmann::json::object());

inline void debug(std::string_view event, const nlohmann::json& fields = nlohmann::json::object()) {
    write(Level::debug, event, fields);
}
inline void info(std::string_view event, const nlohmann::json& fields = nlohmann::json::object()) {
    write(Level::info, event, fields);
}
inline void warn(std::string_view event, const nlohmann::json& fields = nlohmann::json::object()) {
    write(Level::warn, event, fields);
}
inline void error(std::string_view event, const nlohmann::json& fields = nlohmann::json::object()) {
    write(Level::error, event, fields);
}

}  // namespace refgate::runtime::log
