#include "refgate/domain/request_host.hpp"

#include <catch2/catch.hpp>
#include <string>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace request_host_test {

using refgate::domain::absolute_form_authority;
using refgate::domain::authority_host;
using refgate::domain::lower_host;

TEST_CASE("a request's host comes without its port, its case kept for a case-insensitive lookup",
          "[domains]") {
    CHECK(authority_host("go.example.com") == "go.example.com");
    CHECK(authority_host("go.example.com:8080") == "go.example.com");
    CHECK(authority_host("Go.EXAMPLE.com:443") == "Go.EXAMPLE.com");
    CHECK(authority_host("go.example.com.") == "go.example.com");
    CHECK(authority_host("go.example.com.:80") == "go.example.com");
    CHECK(authority_host("go.example.com:") == "go.example.com");  // an empty port is allowed
    CHECK(authority_host("127.0.0.1:8080") == "127.0.0.1");
    std::array<char, refgate::domain::kMaxRequestHost> buffer{};
    CHECK(lower_host("Go.EXAMPLE.com", buffer) == "go.example.com");
    CHECK(lower_host("", buffer).empty());
}

TEST_CASE("IPv6 literals keep their brackets; their port is stripped", "[domains]") {
    CHECK(authority_host("[::1]") == "[::1]");
    CHECK(authority_host("[::1]:8080") == "[::1]");
    CHECK(authority_host("[2001:DB8::1]:80") == "[2001:DB8::1]");
    CHECK(authority_host("[::1").empty());
    CHECK(authority_host("[::1]x").empty());
    CHECK(authority_host("[]").empty());
    CHECK(authority_host("[g::1]").empty());
}

TEST_CASE("no host, or one a client may not send, is empty: an unknown host", "[domains]") {
    CHECK(authority_host("").empty());
    CHECK(authority_host(":8080").empty());
    CHECK(authority_host("user@go.example.com").empty());
    CHECK(authority_host("go.example.com:80a").empty());
    CHECK(authority_host("go.example.com:80:80").empty());
    CHECK(authority_host("go example.com").empty());
    CHECK(authority_host("go.example.com/x").empty());
    CHECK(authority_host(std::string(254, 'a')).empty());
    CHECK(authority_host(std::string(253, 'a')).size() == 253);
}

TEST_CASE("an absolute-form target names its authority", "[domains]") {
    CHECK(absolute_form_authority("http://go.example.com/go/deal") == "go.example.com");
    CHECK(absolute_form_authority("HTTPS://Go.Example.com:8443/go/deal?x=1") ==
          "Go.Example.com:8443");
    CHECK(absolute_form_authority("http://[::1]:80?x") == "[::1]:80");
    CHECK(absolute_form_authority("http://go.example.com") == "go.example.com");
    CHECK(absolute_form_authority("/go/deal").empty());
    CHECK(absolute_form_authority("ftp://go.example.com/go/deal").empty());
    CHECK(absolute_form_authority("http:///go/deal").empty());
}

}  // namespace request_host_test
