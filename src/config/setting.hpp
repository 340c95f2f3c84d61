#pragma once

// The settings table's row type and the parsers that more than one group of settings uses
// (private to the config module).

#include <charconv>
#include <functional>
#include <string>
#include <vector>

#include "refgate/config/config.hpp"

namespace refgate::config {

// One row per setting: its JSON key, its environment variable and how to apply a text value.
struct Setting {
    const char* key;
    const char* env;
    std::function<bool(Config&, const std::string&)> apply;  // false: bad value
    const char* expected;
    // The current value, in the form `apply` accepts (so a printed configuration reads back).
    std::function<std::string(const Config&)> show;
};

template <typename T>
bool parse_uint(const std::string& text, T& out, T min, T max) {
    T value{};
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || ptr != text.data() + text.size() || value < min || value > max) {
        return false;
    }
    out = value;
    return true;
}

// Throws ConfigError for a URL whose problem deserves its own message (rediss://, a bad
// redis+sentinel:// URL); false for other nonsense.
bool valid_redis_url(const std::string& value);

// A setting that takes any text (a path, mostly); `field` gives the string it sets.
template <typename Field>
Setting text_setting(const char* key, const char* env, Field field, const char* expected) {
    return {key, env,
            [field](Config& c, const std::string& v) {
                field(c) = v;
                return true;
            },
            expected, [field](const Config& c) { return field(const_cast<Config&>(c)); }};
}

// Groups of the table in files of their own (config.cpp joins them in settings()).
// Redis beyond its URL: sentinels and replica acknowledgement.
std::vector<Setting> redis_settings();
// The scanner class: ASN database, networks file, burst rule.
std::vector<Setting> scanner_settings();
// The link-health checker: schedule, pace, timeout, trust store, test resolve list, contact.
std::vector<Setting> linkcheck_settings();
// Webhook delivery: trust store, test resolve list, retry base, give-up window.
std::vector<Setting> webhook_settings();

}  // namespace refgate::config
