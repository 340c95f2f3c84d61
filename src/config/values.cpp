// The values a setting holds that have a syntax of their own: endpoints, networks, URLs; and
// the redaction of secrets from any text that is shown or logged.

#include <algorithm>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <cctype>
#include <charconv>

#include "refgate/config/config.hpp"

namespace refgate::config {
namespace {

bool ipv4_host(const std::string& host) { return host.find(':') == std::string::npos; }

}  // namespace

std::optional<std::vector<domain::IpNetwork>> parse_networks(const std::string& list) {
    std::vector<domain::IpNetwork> networks;
    std::size_t pos = 0;
    while (pos < list.size()) {
        auto comma = list.find(',', pos);
        std::string item =
            list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (item.find_first_not_of(" \t") != std::string::npos) {
            auto network = domain::IpNetwork::parse(item);
            if (!network) return std::nullopt;
            networks.push_back(*network);
        }
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return networks;
}

std::string Endpoint::to_string() const {
    if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
    return host + ":" + std::to_string(port);
}

std::optional<std::string> parse_public_base_url(const std::string& text) {
    // Without an authority it is no base URL; and Boost.URL 1.81 fails an assertion parsing a
    // scheme with an empty path ("https:").
    if (text.find("://") == std::string::npos) return std::nullopt;
    auto parsed = boost::urls::parse_absolute_uri(text);
    if (!parsed || parsed->scheme_id() != boost::urls::scheme::https || !parsed->has_authority() ||
        parsed->host().empty() || parsed->has_userinfo() || parsed->has_query() ||
        parsed->has_fragment()) {
        return std::nullopt;
    }
    for (char c : text) {
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '"' || c == '<' ||
            c == '>' || c == '\\')
            return std::nullopt;
    }
    std::string url = text;
    while (url.ends_with('/')) url.pop_back();
    return url;
}

std::optional<Endpoint> parse_endpoint(const std::string& text) {
    std::string host;
    std::string port_text;
    if (!text.empty() && text.front() == '[') {
        auto close = text.find(']');
        if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
            return std::nullopt;
        }
        host = text.substr(1, close - 1);
        port_text = text.substr(close + 2);
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string::npos) return std::nullopt;
        host = text.substr(0, colon);
        port_text = text.substr(colon + 1);
        if (host.find(':') != std::string::npos) return std::nullopt;
    }
    // A host prints back as it was given (Endpoint::to_string): brackets only around an IPv6
    // address, never inside a host.
    bool bracketed = text.front() == '[';
    if (host.find_first_of("[]/ ") != std::string::npos ||
        bracketed != (host.find(':') != std::string::npos))
        return std::nullopt;
    std::uint16_t port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (host.empty() || ec != std::errc{} || end != port_text.data() + port_text.size())
        return std::nullopt;
    return Endpoint{host, port};
}

namespace {

// Userinfo passwords: scheme://user:PASSWORD@host. Only the text between an authority's first
// ':' and last '@' changes, so this neither makes a new "password=" nor lengthens a redacted
// value, and a second pass changes nothing.
void redact_userinfo(std::string& text) {
    for (auto scheme = text.find("://"); scheme != std::string::npos;
         scheme = text.find("://", scheme + 3)) {
        auto start = scheme + 3;
        auto end = text.find_first_of("/?# \t", start);
        if (end == std::string::npos) end = text.size();
        auto at = text.rfind('@', end - 1);
        if (at == std::string::npos || at < start) continue;
        auto colon = text.find(':', start);
        if (colon == std::string::npos || colon > at) continue;
        text.replace(colon + 1, at - colon - 1, "***");
    }
}

// password=VALUE, in a query (&-separated) or a libpq keyword string (space-separated). A
// redacted value can take with it the '/' or '?' that ended an authority, and so reveal a
// userinfo behind it.
void redact_password_values(std::string& text) {
    std::string lower = text;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    constexpr std::string_view kKey = "password=";
    for (auto pos = lower.find(kKey); pos != std::string::npos; pos = lower.find(kKey, pos + 1)) {
        auto start = pos + kKey.size();
        // A quoted value ends at its closing quote; whatever sticks to the quote goes too, so
        // that redacting twice changes nothing more.
        auto from = start;
        if (start < text.size() && text[start] == '\'') {
            auto close = text.find('\'', start + 1);
            from = close == std::string::npos ? text.size() : close + 1;
        }
        auto end = std::min(text.find_first_of("& \t#;", from), text.size());
        text.replace(start, end - start, "***");
        lower.replace(start, end - start, "***");
    }
}

}  // namespace

// Userinfo first, so that a password holding "password=" goes whole; then the values; then
// userinfo again for what the values revealed. Redacting the result again changes nothing.
std::string redact_secrets(std::string text) {
    redact_userinfo(text);
    redact_password_values(text);
    redact_userinfo(text);
    return text;
}

bool listeners_overlap(const Endpoint& a, const Endpoint& b) {
    if (a.port == 0 || a.port != b.port) return false;
    auto norm = [](const std::string& host) {
        return host == "localhost" ? std::string("127.0.0.1") : host;
    };
    std::string ha = norm(a.host), hb = norm(b.host);
    if (ha == hb || ha == "::" || hb == "::") return true;
    return (ha == "0.0.0.0" && ipv4_host(hb)) || (hb == "0.0.0.0" && ipv4_host(ha));
}

}  // namespace refgate::config
