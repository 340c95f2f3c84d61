#include "refgate/http/router.hpp"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace router_test {

namespace {

using refgate::http::Handler;
using refgate::http::Method;
using refgate::http::Request;
using refgate::http::Response;
using refgate::http::Router;

// A handler that answers with its own name, so a test sees which route was taken.
class NamedHandler final : public Handler {
  public:
    explicit NamedHandler(std::string name) : name_(std::move(name)) {}
    void handle(const Request&, Response& response) override {
        response.set_status(200);
        response.body() = name_;
    }

  private:
    std::string name_;
};

std::shared_ptr<Handler> named(std::string name) {
    return std::make_shared<NamedHandler>(std::move(name));
}

// The body of the answer to GET `target`: the name of the handler that took it.
std::string route(Router& router, std::string_view target, int* status = nullptr) {
    std::vector<refgate::http::HeaderField> fields;
    Request request;
    request.method = Method::get;
    request.method_name = "GET";
    request.target = target;
    request.fields = &fields;
    Response response;
    router.handle(request, response);
    if (status != nullptr) *status = response.status();
    return response.body();
}

}  // namespace

TEST_CASE("each request is routed by its own path when the buffer holding it is reused",
          "[router]") {
    // The router remembers its last answer; a connection reads each request into the same
    // buffer, so the same bytes of memory hold another path of the same length next time.
    Router router;
    router.prefix("/go/", named("go"));
    router.exact("/healthz", named("health"));
    router.exact("/readyz", named("ready"));
    std::string buffer = "/go/abc";
    router.prepare(buffer, Handler::Parsed::request_line);
    CHECK(route(router, buffer) == "go");
    buffer = "/readyz";  // same length, same storage
    router.prepare(buffer, Handler::Parsed::request_line);
    CHECK(route(router, buffer) == "ready");
    buffer = "/go/xyz";
    CHECK(route(router, buffer) == "go");  // not told at the request line: still its own
    CHECK(route(router, "/healthz") == "health");
    int status = 0;
    CHECK(route(router, "/nothing", &status).find("Not Found") != std::string::npos);
    CHECK(status == 404);
    // A route added later is found (what was remembered is forgotten).
    router.exact("/nothing", named("late"));
    CHECK(route(router, "/nothing") == "late");
}

TEST_CASE("a path memo answers only for the same bytes and never for a path too long to keep",
          "[router]") {
    refgate::http::PathMemo<int> memo;
    CHECK(memo.find("") == nullptr);  // nothing remembered yet, not even the empty path
    std::string buffer = "/go/abc";
    memo.remember(buffer, 1);
    REQUIRE(memo.find("/go/abc") != nullptr);
    CHECK(*memo.find("/go/abc") == 1);
    buffer = "/go/abd";  // the same storage, other bytes
    CHECK(memo.find(buffer) == nullptr);
    CHECK(memo.find("/go/ab") == nullptr);
    const std::string long_path = "/go/" + std::string(refgate::http::PathMemo<int>::kMaxPath, 'a');
    memo.remember(long_path, 2);
    CHECK(memo.find(long_path) == nullptr);
    CHECK(memo.find("/go/abc") == nullptr);  // the long path displaced it
    memo.remember("", 3);
    REQUIRE(memo.find("") != nullptr);
    memo.forget();
    CHECK(memo.find("") == nullptr);

    // A router answers a path longer than its memo keeps, every time.
    Router router;
    router.prefix("/go/", named("go"));
    router.exact(long_path, named("long"));
    CHECK(route(router, long_path) == "long");
    CHECK(route(router, long_path) == "long");
    CHECK(route(router, "/go/x") == "go");
}

TEST_CASE("an exact path beats a prefix that also matches", "[router]") {
    Router router;
    router.prefix("/", named("root prefix"));
    router.prefix("/api/", named("api prefix"));
    router.exact("/api/v1/stats", named("stats"));
    CHECK(route(router, "/api/v1/stats") == "stats");
    CHECK(route(router, "/api/v1/stats?day=2026-11-29") == "stats");
    CHECK(route(router, "/api/v1/stats/x") == "api prefix");
}

TEST_CASE("an exact path registered after a prefix still wins", "[router]") {
    Router router;
    router.prefix("/healthz", named("prefix"));
    router.exact("/healthz", named("exact"));
    CHECK(route(router, "/healthz") == "exact");
    CHECK(route(router, "/healthzz") == "prefix");
}

TEST_CASE("the longest matching prefix wins whatever the order of registration", "[router]") {
    Router router;
    router.prefix("/go/special/", named("special"));
    router.prefix("/", named("root"));
    router.prefix("/go/", named("go"));
    CHECK(route(router, "/go/tailscale") == "go");
    CHECK(route(router, "/go/special/x") == "special");
    CHECK(route(router, "/disclosure") == "root");
}

TEST_CASE("a path that matches no route is answered 404", "[router]") {
    Router router;
    router.exact("/healthz", named("health"));
    router.prefix("/go/", named("go"));
    int status = 0;
    route(router, "/admin", &status);
    CHECK(status == 404);
    route(router, "/go", &status);
    CHECK(status == 404);
    route(router, "/healthz/", &status);
    CHECK(status == 404);
}

TEST_CASE("an empty router answers 404", "[router]") {
    Router router;
    int status = 0;
    route(router, "/", &status);
    CHECK(status == 404);
}

namespace {
class BlockingHandler final : public refgate::http::Handler {
  public:
    void handle(const refgate::http::Request&, refgate::http::Response&) override {}
    bool may_block() const override { return true; }
};
class QuickHandler final : public refgate::http::Handler {
  public:
    void handle(const refgate::http::Request&, refgate::http::Response&) override {}
};
}  // namespace

TEST_CASE("only the requests of a blocking route are answered off the I/O threads", "[router]") {
    std::vector<refgate::http::HeaderField> fields;
    auto request = [&](std::string_view target) {
        refgate::http::Request r;
        r.method = refgate::http::Method::get;
        r.target = target;
        r.fields = &fields;
        return r;
    };
    refgate::http::Router quick;
    quick.exact("/healthz", std::make_shared<QuickHandler>());
    CHECK_FALSE(quick.may_block());
    CHECK_FALSE(quick.blocking(request("/healthz")));
    refgate::http::Router admin;
    admin.exact("/healthz", std::make_shared<QuickHandler>());
    admin.exact("/metrics", std::make_shared<QuickHandler>());
    admin.prefix("/api/v1/", std::make_shared<BlockingHandler>());
    CHECK(admin.may_block());
    CHECK(admin.blocking(request("/api/v1/partners")));
    CHECK_FALSE(admin.blocking(request("/healthz")));
    CHECK_FALSE(admin.blocking(request("/metrics")));
    CHECK_FALSE(admin.blocking(request("/nowhere")));
}

// Counts the paths it is prepared for.
class PreparedHandler final : public Handler {
  public:
    void handle(const Request&, Response& response) override { response.set_status(200); }
    void prepare(std::string_view path, Parsed) override { paths.emplace_back(path); }
    std::vector<std::string> paths;
};

TEST_CASE("a request is prepared by the handler its path resolves to, and only that one",
          "[router]") {
    auto go = std::make_shared<PreparedHandler>();
    auto health = std::make_shared<PreparedHandler>();
    Router router;
    router.prefix("/go/", go);
    router.exact("/healthz", health);
    router.prepare("/go/alpha", Handler::Parsed::request_line);
    router.prepare("/healthz", Handler::Parsed::header);
    router.prepare("/nowhere", Handler::Parsed::header);  // a 404: no handler is asked
    CHECK(go->paths == std::vector<std::string>{"/go/alpha"});
    CHECK(health->paths == std::vector<std::string>{"/healthz"});
}

}  // namespace router_test
