#include "refgate/domain/ip_network.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>
#include <string>

namespace refgate {
namespace {

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

}  // namespace

std::optional<IpBytes> parse_ip(std::string_view text) {
    text = trim(text);
    if (text.empty() || text.size() > 45) return std::nullopt;
    char buf[46];
    text.copy(buf, text.size());
    buf[text.size()] = '\0';
    IpBytes out{};
    in_addr v4{};
    if (::inet_pton(AF_INET, buf, &v4) == 1) {
        out[10] = 0xff;
        out[11] = 0xff;
        std::memcpy(out.data() + 12, &v4, 4);
        return out;
    }
    in6_addr v6{};
    if (::inet_pton(AF_INET6, buf, &v6) == 1) {
        std::memcpy(out.data(), &v6, 16);
        return out;
    }
    return std::nullopt;
}

std::optional<IpNetwork> IpNetwork::parse(std::string_view text) {
    text = trim(text);
    auto slash = text.find('/');
    auto address = parse_ip(text.substr(0, slash));
    if (!address) return std::nullopt;
    bool v4 = text.substr(0, slash).find(':') == std::string_view::npos;
    int prefix = v4 ? 32 : 128;
    if (slash != std::string_view::npos) {
        auto digits = text.substr(slash + 1);
        auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
        if (ec != std::errc{} || ptr != digits.data() + digits.size() || prefix < 0 ||
            prefix > (v4 ? 32 : 128)) {
            return std::nullopt;
        }
    }
    return IpNetwork{*address, v4 ? prefix + 96 : prefix};
}

bool IpNetwork::contains(const IpBytes& address) const {
    int bits = prefix;
    for (int i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
        std::uint8_t mask = bits >= 8 ? 0xff : static_cast<std::uint8_t>(0xff << (8 - bits));
        if ((address[i] & mask) != (base[i] & mask)) return false;
    }
    return true;
}

bool any_contains(const std::vector<IpNetwork>& networks, const IpBytes& address) {
    for (const auto& n : networks) {
        if (n.contains(address)) return true;
    }
    return false;
}

IpBytes client_address(const IpBytes& peer, std::string_view forwarded_for,
                       const std::vector<IpNetwork>& trusted_proxies) {
    if (forwarded_for.empty() || !any_contains(trusted_proxies, peer)) return peer;
    // Walk from the right: each hop was appended by the proxy in front of it.
    IpBytes current = peer;
    while (!forwarded_for.empty()) {
        auto comma = forwarded_for.rfind(',');
        std::string_view entry =
            comma == std::string_view::npos ? forwarded_for : forwarded_for.substr(comma + 1);
        auto address = parse_ip(entry);
        if (!address) return current;
        current = *address;
        if (!any_contains(trusted_proxies, current)) return current;
        if (comma == std::string_view::npos) break;
        forwarded_for = forwarded_for.substr(0, comma);
    }
    return current;
}

}  // namespace refgate
