#include "refgate/redis/sentinel_url.hpp"

#include <cctype>
#include <charconv>
#include <optional>
#include <string_view>

#include "refgate/domain/ascii.hpp"

namespace refgate::redis {
namespace {

constexpr int kMaxDb = 1024;
constexpr std::size_t kMaxSentinels = 16;

std::optional<int> parse_number(std::string_view text, int min, int max) {
    int value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() || value < min ||
        value > max)
        return std::nullopt;
    return value;
}

using domain::ascii::hex_value;

std::optional<std::string> percent_decode(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out.push_back(text[i]);
            continue;
        }
        if (i + 2 >= text.size()) return std::nullopt;
        int high = hex_value(text[i + 1]), low = hex_value(text[i + 2]);
        if (high < 0 || low < 0) return std::nullopt;
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
    }
    return out;
}

bool valid_host_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_';
}

// "host", "host:port" or "[v6]:port".
std::variant<SentinelHost, std::string> parse_host(std::string_view item) {
    SentinelHost out;
    std::string_view port;
    if (!item.empty() && item.front() == '[') {
        auto close = item.find(']');
        if (close == std::string_view::npos)
            return "unclosed [ in sentinel '" + std::string(item) + "'";
        out.host = std::string(item.substr(1, close - 1));
        auto rest = item.substr(close + 1);
        if (!rest.empty() && rest.front() != ':')
            return "unexpected text after ] in sentinel '" + std::string(item) + "'";
        if (!rest.empty()) port = rest.substr(1);
        if (out.host.empty() ||
            out.host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos)
            return "bad IPv6 address in sentinel '" + std::string(item) + "'";
        if (!rest.empty() && port.empty())
            return "empty port in sentinel '" + std::string(item) + "'";
    } else {
        auto colon = item.find(':');
        out.host = std::string(item.substr(0, colon));
        if (colon != std::string_view::npos) {
            port = item.substr(colon + 1);
            if (port.empty()) return "empty port in sentinel '" + std::string(item) + "'";
        }
        if (out.host.empty()) return "a sentinel without a host";
        for (char c : out.host) {
            if (!valid_host_char(c)) return "bad host in sentinel '" + std::string(item) + "'";
        }
    }
    if (!port.empty()) {
        auto number = parse_number(port, 1, 65535);
        if (!number) return "bad port in sentinel '" + std::string(item) + "' (1 to 65535)";
        out.port = *number;
    }
    return out;
}

// "[user:]password" before the '@'.
std::optional<std::string> parse_userinfo(std::string_view info, SentinelUrl& out) {
    auto colon = info.find(':');
    if (colon == std::string_view::npos) return "credentials must be user:password or :password";
    auto user = percent_decode(info.substr(0, colon));
    auto password = percent_decode(info.substr(colon + 1));
    if (!user || !password) return "bad percent-encoding in the credentials";
    out.user = *user;
    out.password = *password;
    return std::nullopt;
}

std::optional<std::string> parse_hosts(std::string_view list, SentinelUrl& out) {
    if (list.empty()) return "no sentinel host";
    std::size_t pos = 0;
    while (true) {
        auto comma = list.find(',', pos);
        auto item = list.substr(pos, comma == std::string_view::npos ? list.npos : comma - pos);
        auto host = parse_host(item);
        if (auto* error = std::get_if<std::string>(&host)) return *error;
        out.sentinels.push_back(std::get<SentinelHost>(host));
        if (out.sentinels.size() > kMaxSentinels) return "more than 16 sentinels";
        if (comma == std::string_view::npos) return std::nullopt;
        pos = comma + 1;
    }
}

// "/<master-name>[/<db>]".
std::optional<std::string> parse_path(std::string_view path, SentinelUrl& out) {
    if (path.size() < 2 || path.front() != '/')
        return "no master name (.../<master-name>[/<db>] after the hosts)";
    path.remove_prefix(1);
    auto slash = path.find('/');
    auto name = percent_decode(path.substr(0, slash));
    if (!name || name->empty()) return "bad master name";
    for (char c : *name) {
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return "bad master name";
    }
    out.master_name = *name;
    if (slash == std::string_view::npos) return std::nullopt;
    auto db = parse_number(path.substr(slash + 1), 0, kMaxDb);
    if (!db) return "bad database number (0 to 1024) after the master name";
    out.db = *db;
    return std::nullopt;
}

}  // namespace

std::variant<SentinelUrl, std::string> parse_sentinel_url(const std::string& url) {
    std::string_view rest(url);
    std::string_view scheme(kSentinelScheme);
    if (!rest.starts_with(scheme)) return "the URL must start with redis+sentinel://";
    rest.remove_prefix(scheme.size());
    if (rest.find_first_of("?#") != std::string_view::npos)
        return "no query or fragment is allowed";
    SentinelUrl out;
    auto slash = rest.find('/');
    auto authority = rest.substr(0, slash);
    auto path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    if (auto at = authority.rfind('@'); at != std::string_view::npos) {
        if (auto error = parse_userinfo(authority.substr(0, at), out)) return *error;
        authority.remove_prefix(at + 1);
    }
    if (auto error = parse_hosts(authority, out)) return *error;
    if (auto error = parse_path(path, out)) return *error;
    return out;
}

}  // namespace refgate::redis
