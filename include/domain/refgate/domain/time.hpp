#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "refgate/domain/clock.hpp"

namespace refgate::domain {

using SysSeconds = std::chrono::sys_seconds;

// "2026-11-29T16:00:00Z", "2026-11-29T17:00:00+01:00", fractional seconds allowed (truncated).
// A leap second ("23:59:60Z") is refused: the result could only name the second after it.
std::optional<SysSeconds> parse_rfc3339(std::string_view text);
std::string format_rfc3339(SysSeconds t);
std::string format_rfc3339_millis(std::chrono::system_clock::time_point t);
// IMF-fixdate for the HTTP Date header, e.g. "Sun, 06 Nov 1994 08:49:37 GMT" (29 chars).
void format_http_date(std::int64_t unix_seconds, char (&out)[29]);

}  // namespace refgate::domain
