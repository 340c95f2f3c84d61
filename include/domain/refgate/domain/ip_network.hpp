#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

struct sockaddr;

namespace refgate::domain {

using IpBytes = std::array<std::uint8_t, 16>;  // IPv4 as IPv4-mapped IPv6

// "203.0.113.7", "2001:db8::1"; nullopt when not an address.
std::optional<IpBytes> parse_ip(std::string_view text);
// The address of an AF_INET or AF_INET6 socket address (what accept() or getaddrinfo() give);
// nullopt for another family.
std::optional<IpBytes> sockaddr_ip(const sockaddr* address);

// An address range such as "10.0.0.0/8" or "2001:db8::/32" (a bare address is a /32 or /128).
struct IpNetwork {
    IpBytes base{};
    int prefix = 128;  // in IPv6 terms

    static std::optional<IpNetwork> parse(std::string_view text);
    bool contains(const IpBytes& address) const;
};

bool any_contains(const std::vector<IpNetwork>& networks, const IpBytes& address);

// What an address is to the outside world: one classifier for the link checker (which may only
// reach global addresses) and the scanner check (which does not judge shared ones).
enum class AddressScope {
    global,  // a public address
    // Private or local: many readers behind one, or refgate behind a proxy it does not trust.
    // Unspecified (0.0.0.0/8, ::), loopback, RFC 1918, carrier NAT (100.64.0.0/10), link-local
    // (cloud metadata: 169.254.169.254, fd00:ec2::254), unique-local (fc00::/7).
    shared,
    // Never a web server: documentation, benchmarking, IETF protocol assignments, multicast,
    // reserved, broadcast, IPv4-compatible and NAT64 (it reaches IPv4 private ranges), discard,
    // deprecated site-local.
    special,
};

// Allocation-free and cheap (a fixed table): the scanner check calls it per click.
AddressScope address_scope(const IpBytes& address) noexcept;

inline bool public_address(const IpBytes& address) noexcept {
    return address_scope(address) == AddressScope::global;
}

// The client address of a request: the socket peer, or, when the peer is a trusted proxy, the
// right-most X-Forwarded-For entry that is not itself a trusted proxy.
IpBytes client_address(const IpBytes& peer, std::string_view forwarded_for,
                       const std::vector<IpNetwork>& trusted_proxies);

}  // namespace refgate::domain
