#include "refgate/console/console_handler.hpp"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace console_handler_test {

namespace {

namespace http = refgate::http;
using refgate::console::Asset;
using refgate::console::ConsoleHandler;
using Fields = std::vector<std::pair<std::string, std::string>>;

const Asset kAssets[] = {
    {"index.html", "text/html; charset=utf-8", "\"idx1\"",
     "<!doctype html><script type=\"module\" src=\"assets/app-AB12.js\"></script>", false},
    {"assets/app-AB12.js", "text/javascript; charset=utf-8", "\"js1\"", "console.log(1)", true},
};

std::optional<std::string> header(const http::Response& response, std::string_view name) {
    const std::string& text = response.headers();
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find("\r\n", pos);
        std::string line = text.substr(pos, end - pos);
        std::size_t colon = line.find(": ");
        if (http::iequals(line.substr(0, colon), name)) return line.substr(colon + 2);
        pos = end + 2;
    }
    return std::nullopt;
}

http::Response send(std::string_view target, const Fields& headers = {},
                    http::Method method = http::Method::get) {
    ConsoleHandler handler{kAssets};
    std::vector<http::HeaderField> fields;
    for (const auto& [n, v] : headers) fields.push_back({n, v});
    http::Request request;
    request.method = method;
    request.target = target;
    request.fields = &fields;
    http::Response response;
    handler.handle(request, response);
    return response;
}

void check_security_headers(const http::Response& response) {
    CHECK(header(response, "Content-Security-Policy") ==
          "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; "
          "base-uri 'none'; form-action 'self'");
    CHECK(header(response, "X-Content-Type-Options") == "nosniff");
    CHECK(header(response, "Referrer-Policy") == "no-referrer");
    CHECK(header(response, "X-Frame-Options") == "DENY");
}

}  // namespace

TEST_CASE("the console's page is served at /console/ with its CSP and no caching",
          "[console][handler]") {
    auto page = send("/console/");
    CHECK(page.status() == 200);
    CHECK(header(page, "Content-Type") == "text/html; charset=utf-8");
    CHECK(header(page, "Cache-Control") == "no-cache");
    CHECK(header(page, "ETag") == "\"idx1\"");
    CHECK(page.body() == kAssets[0].body);
    check_security_headers(page);
}

TEST_CASE("/console redirects to /console/ with 308", "[console][handler]") {
    auto redirect = send("/console");
    CHECK(redirect.status() == 308);
    CHECK(header(redirect, "Location") == "/console/");
    check_security_headers(redirect);
}

TEST_CASE("a content-hashed console asset is cached for good and revalidates to 304",
          "[console][handler]") {
    auto js = send("/console/assets/app-AB12.js?v=1");
    CHECK(js.status() == 200);
    CHECK(header(js, "Content-Type") == "text/javascript; charset=utf-8");
    CHECK(header(js, "Cache-Control") == "public, max-age=31536000, immutable");
    check_security_headers(js);

    auto again = send("/console/assets/app-AB12.js", {{"If-None-Match", "\"js1\""}});
    CHECK(again.status() == 304);
    CHECK(again.body().empty());
    CHECK(header(again, "ETag") == "\"js1\"");
    CHECK(send("/console/", {{"If-None-Match", "\"other\""}}).status() == 200);
}

TEST_CASE("HEAD of a console page answers like GET", "[console][handler]") {
    auto head = send("/console/", {}, http::Method::head);
    CHECK(head.status() == 200);
    CHECK(header(head, "ETag") == "\"idx1\"");
}

TEST_CASE("unknown console paths are 404 and other methods 405, both with the CSP",
          "[console][handler]") {
    auto missing = send("/console/assets/app-OLD.js");
    CHECK(missing.status() == 404);
    check_security_headers(missing);
    CHECK(send("/console/index.html/x").status() == 404);
    auto post = send("/console/", {}, http::Method::post);
    CHECK(post.status() == 405);
    CHECK(header(post, "Allow") == "GET, HEAD");
    check_security_headers(post);
}

}  // namespace console_handler_test
