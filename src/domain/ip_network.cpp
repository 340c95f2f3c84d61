#include "refgate/domain/ip_network.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <cstring>
#include <string>

#include "refgate/domain/ascii.hpp"

namespace refgate::domain {
namespace {

using ascii::trim_blanks;

}  // namespace

std::optional<IpBytes> sockaddr_ip(const sockaddr* address) {
    IpBytes out{};
    if (address->sa_family == AF_INET) {
        out[10] = 0xff;
        out[11] = 0xff;
        std::memcpy(out.data() + 12, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, 4);
        return out;
    }
    if (address->sa_family == AF_INET6) {
        std::memcpy(out.data(), &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, 16);
        return out;
    }
    return std::nullopt;
}

std::optional<IpBytes> parse_ip(std::string_view text) {
    text = trim_blanks(text);
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
    text = trim_blanks(text);
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

namespace {

// A range as two big-endian halves and their masks: a check is two AND-compares.
struct ScopeRange {
    std::uint64_t hi = 0, lo = 0, mask_hi = 0, mask_lo = 0;
    AddressScope scope = AddressScope::global;
};

constexpr std::uint64_t half(const IpBytes& bytes, int first) {
    std::uint64_t out = 0;
    for (int i = first; i < first + 8; ++i) out = (out << 8) | bytes[i];
    return out;
}

constexpr std::uint64_t half_mask(int bits) {
    if (bits <= 0) return 0;
    if (bits >= 64) return ~std::uint64_t{0};
    return ~std::uint64_t{0} << (64 - bits);
}

constexpr ScopeRange scope_range(const IpBytes& base, int prefix, AddressScope scope) {
    return {.hi = half(base, 0) & half_mask(prefix),
            .lo = half(base, 8) & half_mask(prefix - 64),
            .mask_hi = half_mask(prefix),
            .mask_lo = half_mask(prefix - 64),
            .scope = scope};
}

constexpr ScopeRange v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, int prefix,
                        AddressScope scope) {
    IpBytes base{};
    base[10] = 0xff;
    base[11] = 0xff;
    base[12] = a;
    base[13] = b;
    base[14] = c;
    return scope_range(base, prefix + 96, scope);
}

// w0:w1:w2::w7/prefix
constexpr ScopeRange v6(std::uint16_t w0, std::uint16_t w1, std::uint16_t w2, std::uint16_t w7,
                        int prefix, AddressScope scope) {
    IpBytes base{};
    const std::uint16_t words[4] = {w0, w1, w2, w7};
    const int at[4] = {0, 2, 4, 14};
    for (int i = 0; i < 4; ++i) {
        base[at[i]] = static_cast<std::uint8_t>(words[i] >> 8);
        base[at[i] + 1] = static_cast<std::uint8_t>(words[i] & 0xff);
    }
    return scope_range(base, prefix, scope);
}

constexpr auto kShared = AddressScope::shared;
constexpr auto kSpecial = AddressScope::special;

// The first range that holds an address says its scope (:: and ::1 before ::/96).
constexpr ScopeRange kScopeRanges[] = {
    v4(0, 0, 0, 8, kShared),
    v4(10, 0, 0, 8, kShared),
    v4(100, 64, 0, 10, kShared),
    v4(127, 0, 0, 8, kShared),
    v4(169, 254, 0, 16, kShared),
    v4(172, 16, 0, 12, kShared),
    v4(192, 168, 0, 16, kShared),
    v6(0, 0, 0, 0, 128, kShared),
    v6(0, 0, 0, 1, 128, kShared),
    v6(0xfc00, 0, 0, 0, 7, kShared),
    v6(0xfe80, 0, 0, 0, 10, kShared),
    v4(192, 0, 0, 24, kSpecial),
    v4(192, 0, 2, 24, kSpecial),
    v4(198, 18, 0, 15, kSpecial),
    v4(198, 51, 100, 24, kSpecial),
    v4(203, 0, 113, 24, kSpecial),
    v4(224, 0, 0, 4, kSpecial),
    v4(240, 0, 0, 4, kSpecial),
    v6(0, 0, 0, 0, 96, kSpecial),
    v6(0x64, 0xff9b, 0, 0, 96, kSpecial),
    v6(0x64, 0xff9b, 1, 0, 48, kSpecial),
    v6(0x100, 0, 0, 0, 64, kSpecial),
    v6(0x2001, 0xdb8, 0, 0, 32, kSpecial),
    v6(0xfec0, 0, 0, 0, 10, kSpecial),
    v6(0xff00, 0, 0, 0, 8, kSpecial),
};

}  // namespace

AddressScope address_scope(const IpBytes& address) noexcept {
    const std::uint64_t hi = half(address, 0), lo = half(address, 8);
    for (const ScopeRange& range : kScopeRanges) {
        if ((hi & range.mask_hi) == range.hi && (lo & range.mask_lo) == range.lo)
            return range.scope;
    }
    return AddressScope::global;
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

}  // namespace refgate::domain
