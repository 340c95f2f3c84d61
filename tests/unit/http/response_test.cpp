#include "refgate/http/response.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "refgate/http/status.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace response_test {

namespace {

using refgate::http::Response;

}  // namespace

TEST_CASE("headers are kept as name: value lines in the order they were added", "[response]") {
    Response response;
    response.set_status(302);
    response.add_header("Location", "https://a.com/?ref=x");
    response.add_header("Cache-Control", "private, no-store");
    CHECK(response.status() == 302);
    CHECK(response.headers() ==
          "Location: https://a.com/?ref=x\r\nCache-Control: private, no-store\r\n");
}

TEST_CASE("a header value with CR or LF turns the response into a 500 without the header",
          "[response][security]") {
    const char* value = GENERATE("https://a.com/\r\nSet-Cookie: session=evil",
                                 "https://a.com/\nSet-Cookie: session=evil",
                                 "https://a.com/\rSet-Cookie: session=evil");
    Response response;
    response.set_status(302);
    response.add_header("Location", value);
    CHECK(response.status() == 500);
    CHECK(response.headers().find("Set-Cookie") == std::string::npos);
    CHECK(response.headers().find("Location") == std::string::npos);
    CHECK(response.body().find("Set-Cookie") == std::string::npos);
}

TEST_CASE("a header value with NUL turns the response into a 500", "[response][security]") {
    Response response;
    response.add_header("X-Test", std::string_view("a\0b", 3));
    CHECK(response.status() == 500);
    CHECK(response.headers().find("X-Test") == std::string::npos);
}

TEST_CASE("a simple page replaces earlier headers and has a one-line html body", "[response]") {
    Response response;
    response.add_header("Location", "https://a.com/");
    response.simple_page(404, "Link not found");
    CHECK(response.status() == 404);
    CHECK(response.headers() ==
          "Content-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\n");
    CHECK_THAT(response.body(), Catch::Contains("<title>Link not found</title>"));
}

TEST_CASE("a reset response is an empty 200 again", "[response]") {
    Response response;
    response.simple_page(503, "Service Unavailable");
    response.set_close();
    response.reset();
    CHECK(response.status() == 200);
    CHECK(response.headers().empty());
    CHECK(response.body().empty());
    CHECK_FALSE(response.close());
}

TEST_CASE("status codes have their reason phrases", "[response]") {
    CHECK(refgate::http::reason_phrase(302) == "Found");
    CHECK(refgate::http::reason_phrase(404) == "Not Found");
    CHECK(refgate::http::reason_phrase(410) == "Gone");
    CHECK(refgate::http::reason_phrase(431) == "Request Header Fields Too Large");
    CHECK(refgate::http::reason_phrase(599) != "Unknown");
}

TEST_CASE("every status refgate sends has its RFC 9110 reason phrase, 201 included", "[response]") {
    using refgate::http::reason_phrase;
    CHECK(reason_phrase(201) == "Created");
    CHECK(reason_phrase(406) == "Not Acceptable");
    CHECK(reason_phrase(413) == "Content Too Large");
    CHECK(reason_phrase(422) == "Unprocessable Content");
    for (const auto& status : refgate::http::kHttpStatuses) {
        INFO(status.code);
        CHECK(reason_phrase(status.code) == status.reason);
        CHECK_FALSE(status.reason.empty());
    }
}

TEST_CASE("a status outside refgate's table gets Beast's phrase or none, never a made-up one",
          "[response]") {
    using refgate::http::reason_phrase;
    CHECK(reason_phrase(507) == "Insufficient Storage");
    CHECK(reason_phrase(299).empty());
    CHECK(reason_phrase(42).empty());
    CHECK(reason_phrase(1200).empty());
}

}  // namespace response_test
