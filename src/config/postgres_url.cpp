#include "refgate/config/postgres_url.hpp"

#include <charconv>

namespace refgate::config {
namespace {

struct Parts {
    std::string_view authority;  // without userinfo
    std::string_view query;      // after '?'; empty when none
};

std::optional<Parts> split(std::string_view url) {
    std::string_view rest;
    if (url.starts_with("postgresql://"))
        rest = url.substr(13);
    else if (url.starts_with("postgres://"))
        rest = url.substr(11);
    else
        return std::nullopt;
    Parts parts;
    auto query = rest.find('?');
    if (query != std::string_view::npos) {
        parts.query = rest.substr(query + 1);
        rest = rest.substr(0, query);
    }
    parts.authority = rest.substr(0, rest.find('/'));
    // A password may hold an '@' only percent-encoded, but be lenient: the last one ends userinfo.
    if (auto at = parts.authority.rfind('@'); at != std::string_view::npos)
        parts.authority = parts.authority.substr(at + 1);
    return parts;
}

bool valid_port(std::string_view text) {
    unsigned port = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
    return ec == std::errc{} && end == text.data() + text.size() && port >= 1 && port <= 65535;
}

// One entry of a host list: host, host:port, [v6] or [v6]:port.
bool valid_host(std::string_view entry) {
    if (entry.empty()) return false;
    std::string_view port;
    if (entry.front() == '[') {
        auto close = entry.find(']');
        if (close == std::string_view::npos || close == 1) return false;
        std::string_view after = entry.substr(close + 1);
        if (after.empty()) return true;
        if (after.front() != ':') return false;
        port = after.substr(1);
    } else {
        auto colon = entry.find(':');
        if (colon == 0) return false;
        if (colon == std::string_view::npos) return true;
        port = entry.substr(colon + 1);
    }
    return valid_port(port);
}

std::vector<std::string_view> split_list(std::string_view text, char separator) {
    std::vector<std::string_view> items;
    std::size_t start = 0;
    while (true) {
        auto end = text.find(separator, start);
        items.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos) return items;
        start = end + 1;
    }
}

}  // namespace

std::optional<std::vector<std::string>> postgres_url_hosts(std::string_view url) {
    auto parts = split(url);
    if (!parts) return std::nullopt;
    std::string_view list = parts->authority;
    auto param = postgres_url_parameter(url, "host");
    if (param) list = *param;
    std::vector<std::string> hosts;
    if (list.empty()) {
        hosts.emplace_back();
        return hosts;
    }
    for (auto entry : split_list(list, ',')) {
        // A host= parameter names hosts only (its ports are in port=); a socket path is a host.
        if (param ? entry.empty() : !valid_host(entry)) return std::nullopt;
        hosts.emplace_back(entry);
    }
    return hosts;
}

std::optional<std::string> postgres_url_parameter(std::string_view url, std::string_view key) {
    auto parts = split(url);
    if (!parts || parts->query.empty()) return std::nullopt;
    for (auto pair : split_list(parts->query, '&')) {
        auto eq = pair.find('=');
        if (pair.substr(0, eq) == key)
            return std::string(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    }
    return std::nullopt;
}

std::string with_postgres_url_default(std::string url, std::string_view key,
                                      std::string_view value) {
    if (postgres_url_parameter(url, key)) return url;
    if (url.find('?') == std::string::npos)
        url += '?';
    else if (!url.ends_with('?') && !url.ends_with('&'))
        url += '&';
    url.append(key).append("=").append(value);
    return url;
}

}  // namespace refgate::config
