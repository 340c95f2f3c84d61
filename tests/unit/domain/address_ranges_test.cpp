#include "refgate/domain/address_ranges.hpp"

#include <catch2/catch.hpp>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace address_ranges_test {

using namespace refgate;

namespace {
domain::IpBytes ip(const char* text) { return *domain::parse_ip(text); }
domain::Address128 n(const char* text) { return domain::address_number(ip(text)); }
}  // namespace

TEST_CASE("address ranges hold their ends and nothing beside them, in both families", "[ip]") {
    domain::AddressRanges ranges;
    ranges.add(n("198.51.100.0"), n("198.51.100.255"));
    ranges.add(n("203.0.113.7"), n("203.0.113.7"));
    ranges.add(n("2001:db8::"), n("2001:db8::ffff"));
    ranges.finish();
    CHECK(ranges.contains(ip("198.51.100.0")));
    CHECK(ranges.contains(ip("198.51.100.255")));
    CHECK_FALSE(ranges.contains(ip("198.51.99.255")));
    CHECK_FALSE(ranges.contains(ip("198.51.101.0")));
    CHECK(ranges.contains(ip("203.0.113.7")));
    CHECK_FALSE(ranges.contains(ip("203.0.113.6")));
    CHECK_FALSE(ranges.contains(ip("203.0.113.8")));
    CHECK(ranges.contains(ip("2001:db8::1")));
    CHECK_FALSE(ranges.contains(ip("2001:db8::1:0")));
    CHECK_FALSE(ranges.contains(ip("0.0.0.0")));
    CHECK_FALSE(ranges.contains(ip("::")));
}

TEST_CASE("overlapping and adjacent ranges merge, in any order", "[ip]") {
    domain::AddressRanges ranges;
    ranges.add(n("10.0.1.0"), n("10.0.1.255"));
    ranges.add(n("10.0.0.0"), n("10.0.0.255"));   // adjacent below
    ranges.add(n("10.0.1.128"), n("10.0.2.10"));  // overlapping
    ranges.add(n("10.0.5.0"), n("10.0.5.0"));
    ranges.add(n("10.0.3.0"), n("10.0.2.0"));  // ends before it starts: ignored
    ranges.finish();
    CHECK(ranges.size() == 2);
    CHECK(ranges.contains(ip("10.0.0.0")));
    CHECK(ranges.contains(ip("10.0.2.10")));
    CHECK_FALSE(ranges.contains(ip("10.0.2.11")));
    CHECK(ranges.contains(ip("10.0.5.0")));
}

TEST_CASE("a range across the IPv4-mapped block is split at its edges", "[ip]") {
    domain::AddressRanges ranges;
    ranges.add(n("::fffe:0:0"), n("::1:0:0:0"));  // covers all of ::ffff:0:0/96 and beyond
    ranges.add(0, 0);
    ranges.add(~domain::Address128{0}, ~domain::Address128{0});
    ranges.finish();
    CHECK(ranges.size() == 5);  // ::, below the block, the block, above it, the last address
    CHECK(ranges.contains(ip("0.0.0.0")));
    CHECK(ranges.contains(ip("255.255.255.255")));
    CHECK(ranges.contains(ip("::fffe:1:2")));
    CHECK(ranges.contains(ip("::1:0:0:0")));
    CHECK_FALSE(ranges.contains(ip("::1:0:0:1")));
    CHECK(ranges.contains(ip("::")));
    CHECK(ranges.contains(ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")));
    CHECK_FALSE(ranges.contains(ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe")));
}

}  // namespace address_ranges_test
