#include "refgate/http/request.hpp"

#include <catch2/catch.hpp>
#include <vector>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace request_test {

TEST_CASE("request headers are found by case-insensitive name", "[request]") {
    std::vector<refgate::http::HeaderField> fields{
        {"Host", "picks.example.com"}, {"DNT", "1"}, {"dnt", "0"}};
    refgate::http::Request request;
    request.target = "/go/tailscale?utm_source=news";
    request.fields = &fields;
    CHECK(request.header("host") == "picks.example.com");
    CHECK(request.header("Dnt") == "1");
    CHECK(request.has_header("DNT"));
    CHECK_FALSE(request.has_header("Sec-GPC"));
    CHECK(request.header("Sec-GPC").empty());
    CHECK(request.path() == "/go/tailscale");
    CHECK(request.query() == "utm_source=news");

    refgate::http::Request bare;
    bare.target = "/go/tailscale";
    CHECK_FALSE(bare.has_header("Host"));
    CHECK(bare.query().empty());
}

TEST_CASE("header names compare without regard to ASCII case only", "[request]") {
    CHECK(refgate::http::iequals("Content-Type", "content-type"));
    CHECK_FALSE(refgate::http::iequals("Content-Type", "Content-Typ"));
    CHECK_FALSE(refgate::http::iequals("a", "b"));
}

TEST_CASE("an absolute-form target gives its path and query to handlers", "[request]") {
    using refgate::http::absolute_form_path;
    CHECK(absolute_form_path("http://picks.example.com/go/demo") == "/go/demo");
    CHECK(absolute_form_path("HTTPS://picks.example.com:8443/go/demo?src=news") ==
          "/go/demo?src=news");
    CHECK(absolute_form_path("http://picks.example.com?src=news") == "?src=news");
    CHECK(absolute_form_path("http://picks.example.com") == "");
    CHECK_FALSE(absolute_form_path("ftp://picks.example.com/go/demo"));
    CHECK_FALSE(absolute_form_path("http:///go/demo"));
    CHECK_FALSE(absolute_form_path("picks.example.com:443"));
    CHECK_FALSE(absolute_form_path("*"));
}

}  // namespace request_test
