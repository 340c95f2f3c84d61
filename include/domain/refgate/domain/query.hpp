#pragma once

// Query strings as browsers and curl send them: name=value pairs split by '&', percent-encoded,
// '+' for a space.

#include <optional>
#include <string>
#include <string_view>

namespace refgate::domain {

// Decodes %XX escapes and '+'; a '%' not followed by two hex digits is kept as it is.
std::string percent_decode(std::string_view text);

// The decoded value of the first parameter of that name; "" for a name without '=', nullopt when
// absent.
std::optional<std::string> query_value(std::string_view query, std::string_view name);

}  // namespace refgate::domain
