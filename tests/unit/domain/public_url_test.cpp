#include "refgate/domain/public_url.hpp"

#include <catch2/catch.hpp>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace public_url_test {

using refgate::domain::public_base_host;
using refgate::domain::public_link_url;

TEST_CASE("a link's public URL is on its domain, the public base URL's scheme and path kept",
          "[domains]") {
    CHECK(public_link_url("https://links.example.org", "", "deal") ==
          "https://links.example.org/go/deal");
    CHECK(public_link_url("https://links.example.org/r", "", "deal") ==
          "https://links.example.org/r/go/deal");
    CHECK(public_link_url("https://links.example.org/r", "de.example.com", "deal") ==
          "https://de.example.com/r/go/deal");
    CHECK(public_link_url("https://links.example.org:8443", "de.example.com", "deal") ==
          "https://de.example.com/go/deal");
    CHECK(public_link_url("", "de.example.com", "deal").empty());
}

TEST_CASE("the public base URL's host is its authority's, lower case and without a port",
          "[domains]") {
    CHECK(public_base_host("https://Links.Example.org:8443/r") == "links.example.org");
    CHECK(public_base_host("https://links.example.org") == "links.example.org");
    CHECK(public_base_host("").empty());
}

}  // namespace public_url_test
