#include "refgate/domain/ip_network.hpp"

#include <catch2/catch.hpp>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace ip_network_test {

using namespace refgate;

namespace {
IpBytes ip(const char* text) { return *parse_ip(text); }
}  // namespace

TEST_CASE("addresses parse as IPv6, with IPv4 mapped", "[ip]") {
    CHECK(parse_ip("203.0.113.7").has_value());
    CHECK(parse_ip(" 2001:db8::1 ").has_value());
    CHECK_FALSE(parse_ip("example.com").has_value());
    CHECK_FALSE(parse_ip("").has_value());
    CHECK_FALSE(parse_ip("1.2.3.4.5").has_value());
    CHECK(ip("203.0.113.7")[10] == 0xff);
}

TEST_CASE("a network contains the addresses of its prefix only", "[ip]") {
    auto ten = *IpNetwork::parse("10.0.0.0/8");
    CHECK(ten.contains(ip("10.200.1.1")));
    CHECK_FALSE(ten.contains(ip("11.0.0.1")));
    auto one = *IpNetwork::parse("192.0.2.7");
    CHECK(one.contains(ip("192.0.2.7")));
    CHECK_FALSE(one.contains(ip("192.0.2.8")));
    auto v6 = *IpNetwork::parse("2001:db8::/32");
    CHECK(v6.contains(ip("2001:db8:1::5")));
    CHECK_FALSE(v6.contains(ip("2001:db9::5")));
    CHECK_FALSE(IpNetwork::parse("10.0.0.0/33").has_value());
    CHECK_FALSE(IpNetwork::parse("nonsense/8").has_value());
}

TEST_CASE("X-Forwarded-For is believed only from a trusted proxy", "[ip]") {
    std::vector<IpNetwork> trusted{*IpNetwork::parse("127.0.0.1"), *IpNetwork::parse("10.0.0.0/8")};
    auto peer = ip("127.0.0.1");
    CHECK(client_address(peer, "198.51.100.23", trusted) == ip("198.51.100.23"));
    // Right-most untrusted hop: a client cannot pick its address by sending its own header.
    CHECK(client_address(peer, "1.1.1.1, 198.51.100.23, 10.0.0.5", trusted) == ip("198.51.100.23"));
    CHECK(client_address(ip("203.0.113.9"), "198.51.100.23", trusted) == ip("203.0.113.9"));
    CHECK(client_address(peer, "", trusted) == peer);
    CHECK(client_address(peer, "garbage", trusted) == peer);
    CHECK(client_address(peer, "198.51.100.23", {}) == peer);
}

}  // namespace ip_network_test
