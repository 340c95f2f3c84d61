#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace refgate {

using SysSeconds = std::chrono::sys_seconds;

// Time comes through an interface so that tests can step across days and expiries.
class Clock {
  public:
    virtual ~Clock() = default;
    virtual std::chrono::system_clock::time_point now() const = 0;
};

class SystemClock final : public Clock {
  public:
    std::chrono::system_clock::time_point now() const override {
        return std::chrono::system_clock::now();
    }
};

// Elapsed time for limits and timeouts: never jumps with the wall clock. Tests step a manual one.
class MonotonicClock {
  public:
    virtual ~MonotonicClock() = default;
    virtual std::chrono::steady_clock::time_point now() const = 0;
};

class SteadyClock final : public MonotonicClock {
  public:
    std::chrono::steady_clock::time_point now() const override {
        return std::chrono::steady_clock::now();
    }
};

// "2026-11-29T16:00:00Z", "2026-11-29T17:00:00+01:00", fractional seconds allowed (truncated).
std::optional<SysSeconds> parse_rfc3339(std::string_view text);
std::string format_rfc3339(SysSeconds t);
std::string format_rfc3339_millis(std::chrono::system_clock::time_point t);
// IMF-fixdate for the HTTP Date header, e.g. "Sun, 06 Nov 1994 08:49:37 GMT" (29 chars).
void format_http_date(std::int64_t unix_seconds, char (&out)[29]);

}  // namespace refgate
