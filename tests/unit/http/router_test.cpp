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

// The answer to GET `target` with the notes prepare() left for it.
std::string route_noted(Router& router, std::string_view target,
                        const refgate::http::RequestNotes& notes) {
    std::vector<refgate::http::HeaderField> fields;
    Request request;
    request.method = Method::get;
    request.target = target;
    request.fields = &fields;
    request.notes = notes;
    Response response;
    router.handle(request, response);
    return response.body();
}

TEST_CASE("a request is answered by the route noted for it, whatever came in between", "[router]") {
    Router router;
    router.prefix("/go/", named("go"));
    router.exact("/healthz", named("health"));
    router.exact("/readyz", named("ready"));
    // Two requests prepared before either is handled (pipelined, or on the blocking pool).
    refgate::http::RequestNotes first, second;
    router.prepare("/go/abc", Handler::Parsed::request_line, first);
    router.prepare("/readyz", Handler::Parsed::request_line, second);
    router.prepare("/readyz", Handler::Parsed::header, second);
    CHECK(route_noted(router, "/readyz", second) == "ready");
    CHECK(route_noted(router, "/go/abc", first) == "go");
    // Unprepared requests are searched for.
    CHECK(route(router, "/go/xyz") == "go");
    CHECK(route(router, "/healthz") == "health");
    int status = 0;
    CHECK(route(router, "/nothing", &status).find("Not Found") != std::string::npos);
    CHECK(status == 404);
    // A route added later is found.
    router.exact("/nothing", named("late"));
    CHECK(route(router, "/nothing") == "late");

    // Notes another router left are not taken for its own.
    Router other;
    other.exact("/readyz", named("other ready"));
    CHECK(route_noted(other, "/readyz", second) == "other ready");
    refgate::http::RequestNotes none;
    other.prepare("/go/abc", Handler::Parsed::request_line, none);  // a 404 there
    CHECK(route_noted(router, "/go/abc", none) == "go");
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
    void prepare(std::string_view path, Parsed, refgate::http::RequestNotes&) override {
        paths.emplace_back(path);
    }
    std::vector<std::string> paths;
};

TEST_CASE("a request is prepared by the handler its path resolves to, and only that one",
          "[router]") {
    auto go = std::make_shared<PreparedHandler>();
    auto health = std::make_shared<PreparedHandler>();
    Router router;
    router.prefix("/go/", go);
    router.exact("/healthz", health);
    refgate::http::RequestNotes a, b, c;
    router.prepare("/go/alpha", Handler::Parsed::request_line, a);
    router.prepare("/healthz", Handler::Parsed::header, b);
    router.prepare("/nowhere", Handler::Parsed::header, c);  // a 404: no handler is asked
    CHECK(go->paths == std::vector<std::string>{"/go/alpha"});
    CHECK(health->paths == std::vector<std::string>{"/healthz"});
}

}  // namespace router_test
