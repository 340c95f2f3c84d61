// A listener's share of its connections per client (src/http/client_share.hpp): one address (an
// IPv6 /64) holds at most its share, a closed connection frees its place, and a trusted proxy is
// held to the listener's cap only.
#include "../../../src/http/client_share.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace client_share_test {

using refgate::domain::IpBytes;
using refgate::domain::IpNetwork;
using refgate::http::ClientShares;

IpBytes ip(const std::string& text) {
    auto address = refgate::domain::parse_ip(text);
    REQUIRE(address);
    return *address;
}

TEST_CASE("one client address holds at most its share, and a closed connection frees a place",
          "[http][share]") {
    ClientShares shares(3, {});
    for (int i = 0; i < 3; ++i) CHECK(shares.take(ip("192.0.2.7")));
    CHECK_FALSE(shares.take(ip("192.0.2.7")));
    CHECK_FALSE(shares.take(ip("192.0.2.7")));
    // Another address has a share of its own.
    CHECK(shares.take(ip("192.0.2.8")));
    CHECK(shares.clients() == 2);

    shares.give_back(ip("192.0.2.7"));
    CHECK(shares.take(ip("192.0.2.7")));
    CHECK_FALSE(shares.take(ip("192.0.2.7")));

    // Every place given back: nothing is kept for the address.
    for (int i = 0; i < 3; ++i) shares.give_back(ip("192.0.2.7"));
    shares.give_back(ip("192.0.2.8"));
    CHECK(shares.clients() == 0);
}

TEST_CASE("IPv6 clients count by their /64, which one subscriber can cycle through",
          "[http][share]") {
    ClientShares shares(2, {});
    CHECK(shares.take(ip("2001:db8:1:2::1")));
    CHECK(shares.take(ip("2001:db8:1:2:ffff:ffff:ffff:ffff")));
    CHECK_FALSE(shares.take(ip("2001:db8:1:2::3")));
    CHECK(shares.take(ip("2001:db8:1:3::1")));  // the next /64
    CHECK(shares.clients() == 2);
    shares.give_back(ip("2001:db8:1:2::1"));
    CHECK(shares.take(ip("2001:db8:1:2::abcd")));
}

TEST_CASE("a trusted proxy carries many clients and is not held to one client's share",
          "[http][share]") {
    auto proxies = std::vector<IpNetwork>{*IpNetwork::parse("10.0.0.0/8")};
    ClientShares shares(1, proxies);
    for (int i = 0; i < 50; ++i) CHECK(shares.take(ip("10.1.2.3")));
    CHECK(shares.clients() == 0);
    for (int i = 0; i < 50; ++i) shares.give_back(ip("10.1.2.3"));
    CHECK(shares.take(ip("192.0.2.1")));
    CHECK_FALSE(shares.take(ip("192.0.2.1")));
}

}  // namespace client_share_test
