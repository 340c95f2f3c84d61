#include "refgate/domain/ip_network.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace ip_network_test {

using namespace refgate;

namespace {
domain::IpBytes ip(const char* text) { return *domain::parse_ip(text); }
}  // namespace

TEST_CASE("addresses parse as IPv6, with IPv4 mapped", "[ip]") {
    CHECK(domain::parse_ip("203.0.113.7").has_value());
    CHECK(domain::parse_ip(" 2001:db8::1 ").has_value());
    CHECK_FALSE(domain::parse_ip("example.com").has_value());
    CHECK_FALSE(domain::parse_ip("").has_value());
    CHECK_FALSE(domain::parse_ip("1.2.3.4.5").has_value());
    CHECK(ip("203.0.113.7")[10] == 0xff);
}

TEST_CASE("a socket address reads as the same bytes as its text", "[ip]") {
    sockaddr_in v4{};
    v4.sin_family = AF_INET;
    REQUIRE(::inet_pton(AF_INET, "203.0.113.7", &v4.sin_addr) == 1);
    CHECK(refgate::domain::sockaddr_ip(reinterpret_cast<const sockaddr*>(&v4)) ==
          refgate::domain::parse_ip("203.0.113.7"));
    sockaddr_in6 v6{};
    v6.sin6_family = AF_INET6;
    REQUIRE(::inet_pton(AF_INET6, "2001:db8::1", &v6.sin6_addr) == 1);
    CHECK(refgate::domain::sockaddr_ip(reinterpret_cast<const sockaddr*>(&v6)) ==
          refgate::domain::parse_ip("2001:db8::1"));
    sockaddr unix_family{};
    unix_family.sa_family = AF_UNIX;
    CHECK_FALSE(refgate::domain::sockaddr_ip(&unix_family).has_value());
}

TEST_CASE("a network contains the addresses of its prefix only", "[ip]") {
    auto ten = *domain::IpNetwork::parse("10.0.0.0/8");
    CHECK(ten.contains(ip("10.200.1.1")));
    CHECK_FALSE(ten.contains(ip("11.0.0.1")));
    auto one = *domain::IpNetwork::parse("192.0.2.7");
    CHECK(one.contains(ip("192.0.2.7")));
    CHECK_FALSE(one.contains(ip("192.0.2.8")));
    auto v6 = *domain::IpNetwork::parse("2001:db8::/32");
    CHECK(v6.contains(ip("2001:db8:1::5")));
    CHECK_FALSE(v6.contains(ip("2001:db9::5")));
    CHECK_FALSE(domain::IpNetwork::parse("10.0.0.0/33").has_value());
    CHECK_FALSE(domain::IpNetwork::parse("nonsense/8").has_value());
}

TEST_CASE("X-Forwarded-For is believed only from a trusted proxy", "[ip]") {
    std::vector<domain::IpNetwork> trusted{*domain::IpNetwork::parse("127.0.0.1"),
                                           *domain::IpNetwork::parse("10.0.0.0/8")};
    auto peer = ip("127.0.0.1");
    CHECK(domain::client_address(peer, "198.51.100.23", trusted) == ip("198.51.100.23"));
    // Right-most untrusted hop: a client cannot pick its address by sending its own header.
    CHECK(domain::client_address(peer, "1.1.1.1, 198.51.100.23, 10.0.0.5", trusted) ==
          ip("198.51.100.23"));
    CHECK(domain::client_address(ip("203.0.113.9"), "198.51.100.23", trusted) == ip("203.0.113.9"));
    CHECK(domain::client_address(peer, "", trusted) == peer);
    CHECK(domain::client_address(peer, "garbage", trusted) == peer);
    CHECK(domain::client_address(peer, "198.51.100.23", {}) == peer);
}

TEST_CASE("an address is global, shared (private or local) or special", "[ip][scope]") {
    for (const char* shared : {"10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
                               "127.0.0.1", "100.64.0.1", "100.127.255.255", "169.254.169.254",
                               "0.0.0.0", "::", "::1", "fe80::1", "fd00:ec2::254", "fc00::1"}) {
        INFO(shared);
        CHECK(domain::address_scope(ip(shared)) == domain::AddressScope::shared);
    }
    for (const char* special :
         {"192.0.2.1", "198.51.100.7", "203.0.113.9", "198.18.0.1", "192.0.0.8", "224.0.0.1",
          "255.255.255.255", "240.0.0.1", "::7", "64:ff9b::a00:1", "64:ff9b:1::1", "100::1",
          "2001:db8::1", "fec0::1", "ff02::1"}) {
        INFO(special);
        CHECK(domain::address_scope(ip(special)) == domain::AddressScope::special);
    }
    for (const char* global : {"93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1",
                               "169.255.0.1", "2606:4700::1111", "2001:db9::1", "2a00:1450::1"}) {
        INFO(global);
        CHECK(domain::address_scope(ip(global)) == domain::AddressScope::global);
        CHECK(domain::public_address(ip(global)));
    }
}

namespace {

// The two classifiers address_scope() replaced, as they were: the scanner check's exemption and
// the link checker's refused list.
bool old_shared_address(const domain::IpBytes& a) {
    static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(a.data(), kMapped, sizeof kMapped) == 0) {
        std::uint8_t b0 = a[12], b1 = a[13];
        return b0 == 0 || b0 == 10 || b0 == 127 || (b0 == 100 && (b1 & 0xc0) == 64) ||
               (b0 == 169 && b1 == 254) || (b0 == 172 && (b1 & 0xf0) == 16) ||
               (b0 == 192 && b1 == 168);
    }
    bool zero_to_14 = std::all_of(a.begin(), a.begin() + 15, [](std::uint8_t b) { return b == 0; });
    if (zero_to_14 && a[15] <= 1) return true;
    return (a[0] & 0xfe) == 0xfc || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80);
}

bool old_public_address(const domain::IpBytes& a) {
    static const std::vector<domain::IpNetwork> refused = [] {
        std::vector<domain::IpNetwork> out;
        for (const char* text :
             {"0.0.0.0/8",      "10.0.0.0/8",     "100.64.0.0/10",   "127.0.0.0/8",
              "169.254.0.0/16", "172.16.0.0/12",  "192.0.0.0/24",    "192.0.2.0/24",
              "192.168.0.0/16", "198.18.0.0/15",  "198.51.100.0/24", "203.0.113.0/24",
              "224.0.0.0/4",    "240.0.0.0/4",    "::/96",           "::1/128",
              "64:ff9b::/96",   "64:ff9b:1::/48", "100::/64",        "2001:db8::/32",
              "fc00::/7",       "fe80::/10",      "fec0::/10",       "ff00::/8"})
            out.push_back(*domain::IpNetwork::parse(text));
        return out;
    }();
    return !domain::any_contains(refused, a);
}

}  // namespace

TEST_CASE("the one classifier answers as the scanner check's and the link checker's did",
          "[ip][scope]") {
    std::mt19937_64 random(20261202);
    std::vector<domain::IpBytes> addresses;
    // Every IPv4 /16 (mapped), first and last address, and random IPv6 with common first bytes.
    for (std::uint32_t block = 0; block < 65536; ++block) {
        for (std::uint8_t last : {std::uint8_t{0}, std::uint8_t{255}}) {
            domain::IpBytes a{};
            a[10] = a[11] = 0xff;
            a[12] = static_cast<std::uint8_t>(block >> 8);
            a[13] = static_cast<std::uint8_t>(block & 0xff);
            a[14] = a[15] = last;
            addresses.push_back(a);
        }
    }
    for (int i = 0; i < 20000; ++i) {
        domain::IpBytes a{};
        for (auto& b : a) b = static_cast<std::uint8_t>(random());
        const std::uint8_t firsts[] = {0x00, 0x01, 0x20, 0x26, 0xfc, 0xfd, 0xfe, 0xff};
        a[0] = firsts[i % 8];
        if (i % 5 == 0) std::fill(a.begin() + 1, a.begin() + 14, 0);
        addresses.push_back(a);
    }
    std::size_t differ = 0;
    for (const auto& a : addresses) {
        bool shared = domain::address_scope(a) == domain::AddressScope::shared;
        if (shared != old_shared_address(a) || domain::public_address(a) != old_public_address(a))
            ++differ;
    }
    CHECK(differ == 0);
}

}  // namespace ip_network_test
