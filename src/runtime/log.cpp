#include "refgate/runtime/log.hpp"

#include <unistd.h>

#include <atomic>
#include <mutex>

#include "refgate/domain/time.hpp"

namespace refgate::runtime::log {
namespace {

std::atomic<Level> g_level{Level::info};
std::mutex g_write_mutex;

constexpr std::string_view level_name(Level level) {
    switch (level) {
        case Level::debug:
            return "debug";
        case Level::info:
            return "info";
        case Level::warn:
            return "warn";
        case Level::error:
            return "error";
    }
    return "info";
}

}  // namespace

bool parse_level(std::string_view name, Level& out) {
    for (Level l : {Level::debug, Level::info, Level::warn, Level::error}) {
        if (name == level_name(l)) {
            out = l;
            return true;
        }
    }
    return false;
}

void set_level(Level level) { g_level.store(level, std::memory_order_relaxed); }

void write(Level level, std::string_view event, const nlohmann::json& fields) {
    if (level < g_level.load(std::memory_order_relaxed)) return;
    nlohmann::ordered_json line = nlohmann::ordered_json::object();
    line["ts"] = domain::format_rfc3339_millis(std::chrono::system_clock::now());
    line["level"] = level_name(level);
    line["msg"] = event;
    if (fields.is_object()) {
        for (const auto& [key, value] : fields.items()) line[key] = value;
    }
    std::string text = line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    text.push_back('\n');
    // One write(2) per line keeps lines whole even when several processes share stderr.
    std::lock_guard lock(g_write_mutex);
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        ssize_t n = ::write(STDERR_FILENO, p, left);
        if (n <= 0) break;
        p += n;
        left -= static_cast<std::size_t>(n);
    }
}

}  // namespace refgate::runtime::log
