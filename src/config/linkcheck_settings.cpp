#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <sstream>

#include "setting.hpp"

namespace refgate::config {
namespace {

std::string trimmed(const std::string& text) {
    auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos) return "";
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

bool valid_contact_url(const std::string& text) {
    if (text.empty()) return true;
    auto url = boost::urls::parse_absolute_uri(text);
    return url &&
           (url->scheme_id() == boost::urls::scheme::https ||
            url->scheme_id() == boost::urls::scheme::http) &&
           !url->host().empty() && text.find_first_of(" ()\t\"") == std::string::npos;
}

bool duration_setting(const std::string& v, std::chrono::seconds& out, bool zero_allowed) {
    auto d = parse_duration_text(v);
    if (!d || (*d == std::chrono::seconds{0} && !zero_allowed) ||
        *d > std::chrono::seconds{30 * 86400})
        return false;
    out = *d;
    return true;
}

}  // namespace

std::optional<std::chrono::seconds> parse_duration_text(const std::string& text) {
    std::string t = trimmed(text);
    if (t.empty()) return std::nullopt;
    std::int64_t unit = 1;
    switch (t.back()) {
        case 's':
            unit = 1;
            break;
        case 'm':
            unit = 60;
            break;
        case 'h':
            unit = 3600;
            break;
        case 'd':
            unit = 86400;
            break;
        default:
            unit = 0;
    }
    if (unit != 0) t.pop_back();
    std::int64_t value = 0;
    if (!parse_uint<std::int64_t>(t, value, 0, 100'000'000)) return std::nullopt;
    return std::chrono::seconds{value * (unit == 0 ? 1 : unit)};
}

std::string duration_text(std::chrono::seconds duration) {
    auto s = duration.count();
    if (s != 0 && s % 3600 == 0) return std::to_string(s / 3600) + "h";
    if (s != 0 && s % 60 == 0) return std::to_string(s / 60) + "m";
    return std::to_string(s) + "s";
}

std::optional<std::vector<ResolveEntry>> parse_resolve_list(const std::string& list) {
    std::vector<ResolveEntry> out;
    std::istringstream in(list);
    std::string item;
    while (std::getline(in, item, ',')) {
        item = trimmed(item);
        if (item.empty()) continue;
        auto first = item.find(':');
        auto second = first == std::string::npos ? first : item.find(':', first + 1);
        if (first == 0 || second == std::string::npos) return std::nullopt;
        ResolveEntry e{.host = item.substr(0, first), .address = item.substr(second + 1)};
        if (!parse_uint<std::uint16_t>(item.substr(first + 1, second - first - 1), e.port, 1,
                                       65535) ||
            !domain::parse_ip(e.address))
            return std::nullopt;
        out.push_back(std::move(e));
    }
    return out;
}

std::string resolve_list_text(const std::vector<ResolveEntry>& entries) {
    std::string out;
    for (const auto& e : entries) {
        out += (out.empty() ? "" : ",") + e.host + ":" + std::to_string(e.port) + ":" + e.address;
    }
    return out;
}

// The link-health checker.
std::vector<Setting> linkcheck_settings() {
    return {
        {"linkcheck_interval", "REFGATE_LINKCHECK_INTERVAL",
         [](Config& c, const std::string& v) {
             return duration_setting(v, c.linkcheck.interval, true);
         },
         "a duration such as 24h, 90m or 30s (at most 30d); 0 turns the schedule off",
         [](const Config& c) { return duration_text(c.linkcheck.interval); }},
        {"linkcheck_host_interval_ms", "REFGATE_LINKCHECK_HOST_INTERVAL_MS",
         [](Config& c, const std::string& v) {
             std::int64_t ms = 0;
             if (!parse_uint<std::int64_t>(v, ms, 0, 600'000)) return false;
             c.linkcheck.host_gap = std::chrono::milliseconds{ms};
             return true;
         },
         "milliseconds between two requests to one host, 0 to 600000",
         [](const Config& c) { return std::to_string(c.linkcheck.host_gap.count()); }},
        {"linkcheck_confirm_after", "REFGATE_LINKCHECK_CONFIRM_AFTER",
         [](Config& c, const std::string& v) {
             return duration_setting(v, c.linkcheck.confirm_after, true);
         },
         "a duration such as 1h or 30m (at most 30d)",
         [](const Config& c) { return duration_text(c.linkcheck.confirm_after); }},
        {"linkcheck_timeout_ms", "REFGATE_LINKCHECK_TIMEOUT_MS",
         [](Config& c, const std::string& v) {
             std::int64_t ms = 0;
             if (!parse_uint<std::int64_t>(v, ms, 100, 120'000)) return false;
             c.linkcheck.timeout = std::chrono::milliseconds{ms};
             return true;
         },
         "milliseconds per hop, 100 to 120000",
         [](const Config& c) { return std::to_string(c.linkcheck.timeout.count()); }},
        text_setting(
            "linkcheck_ca_file", "REFGATE_LINKCHECK_CA_FILE",
            [](Config& c) -> std::string& { return c.linkcheck.ca_file; },
            "a PEM file of trusted CA certificates, or empty (the system's store)"),
        {"linkcheck_resolve", "REFGATE_LINKCHECK_RESOLVE",
         [](Config& c, const std::string& v) {
             auto entries = parse_resolve_list(v);
             if (!entries) return false;
             c.linkcheck.resolve = std::move(*entries);
             return true;
         },
         "for tests only: comma-separated host:port:address entries, or empty",
         [](const Config& c) { return resolve_list_text(c.linkcheck.resolve); }},
        {"linkcheck_contact_url", "REFGATE_LINKCHECK_CONTACT_URL",
         [](Config& c, const std::string& v) {
             if (!valid_contact_url(v)) return false;
             c.linkcheck.contact_url = v;
             return true;
         },
         "an http(s) URL named in the checker's User-Agent, or empty",
         [](const Config& c) { return c.linkcheck.contact_url; }},
    };
}

// Webhook delivery goes out under the checker's rules, with settings of the same shape.
std::vector<Setting> webhook_settings() {
    return {
        text_setting(
            "webhook_ca_file", "REFGATE_WEBHOOK_CA_FILE",
            [](Config& c) -> std::string& { return c.webhooks.ca_file; },
            "a PEM file of trusted CA certificates, or empty (the system's store)"),
        {"webhook_resolve", "REFGATE_WEBHOOK_RESOLVE",
         [](Config& c, const std::string& v) {
             auto entries = parse_resolve_list(v);
             if (!entries) return false;
             c.webhooks.resolve = std::move(*entries);
             return true;
         },
         "for tests only: comma-separated host:port:address entries, or empty",
         [](const Config& c) { return resolve_list_text(c.webhooks.resolve); }},
        {"webhook_retry_base_ms", "REFGATE_WEBHOOK_RETRY_BASE_MS",
         [](Config& c, const std::string& v) {
             std::int64_t ms = 0;
             if (!parse_uint<std::int64_t>(v, ms, 100, 10'000)) return false;
             c.webhooks.retry_base = std::chrono::milliseconds{ms};
             return true;
         },
         "milliseconds before a failed delivery's first retry (then doubling), 100 to 10000",
         [](const Config& c) { return std::to_string(c.webhooks.retry_base.count()); }},
        {"webhook_give_up", "REFGATE_WEBHOOK_GIVE_UP",
         [](Config& c, const std::string& v) {
             return duration_setting(v, c.webhooks.give_up, false);
         },
         "a duration such as 24h (at most 30d): an event failing this long is marked failed, a "
         "webhook failing this long is disabled",
         [](const Config& c) { return duration_text(c.webhooks.give_up); }},
    };
}

}  // namespace refgate::config
