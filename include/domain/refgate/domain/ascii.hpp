#pragma once

// ASCII character helpers shared by the parsers of URLs, headers, pages and rules. Locale-free
// on purpose: HTTP, URLs and the formats refgate reads are defined on ASCII bytes.

#include <string>
#include <string_view>

namespace refgate::domain::ascii {

constexpr bool is_lower(char c) noexcept { return c >= 'a' && c <= 'z'; }
constexpr bool is_upper(char c) noexcept { return c >= 'A' && c <= 'Z'; }
constexpr bool is_alpha(char c) noexcept { return is_lower(c) || is_upper(c); }
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_alnum(char c) noexcept { return is_alpha(c) || is_digit(c); }
constexpr char to_lower(char c) noexcept {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
inline std::string lowered(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = to_lower(c);
    return out;
}
// The value of a hexadecimal digit; -1 for any other character.
constexpr int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
// Without leading and trailing spaces and tabs.
constexpr std::string_view trim_blanks(std::string_view text) noexcept {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

}  // namespace refgate::domain::ascii
