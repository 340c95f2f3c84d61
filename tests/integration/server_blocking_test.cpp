// The server runs blocking handlers off its I/O threads, so other requests keep being answered.

#include <catch2/catch.hpp>
#include <future>
#include <thread>

#include "refgate/http/server.hpp"
#include "support/http_client.hpp"

using namespace refgate;
using namespace std::chrono_literals;

namespace {

class SlowHandler final : public http::Handler {
  public:
    void handle(const http::Request& request, http::Response& response) override {
        std::this_thread::sleep_for(400ms);
        response.json(200, std::string(request.target));
    }
    bool blocking() const override { return true; }
};

class FastHandler final : public http::Handler {
  public:
    void handle(const http::Request&, http::Response& response) override {
        response.json(200, "{}");
    }
};

}  // namespace

TEST_CASE("a blocking handler does not hold up the I/O thread", "[http][server]") {
    // One I/O thread: if the slow handler ran on it, the fast listener would wait for it.
    http::Server server(1, {{.name = "slow",
                             .endpoint = {"127.0.0.1", 0},
                             .handler_factory = [] { return std::make_unique<SlowHandler>(); }},
                            {.name = "fast", .endpoint = {"127.0.0.1", 0}, .handler_factory = [] {
                                 return std::make_unique<FastHandler>();
                             }}});
    server.bind();
    server.start();

    auto slow =
        std::async(std::launch::async, [&] { return test::http_get(server.port(0), "/slow?x=1"); });
    std::this_thread::sleep_for(100ms);
    auto started = std::chrono::steady_clock::now();
    auto fast = test::http_get(server.port(1), "/fast");
    auto fast_took = std::chrono::steady_clock::now() - started;
    CHECK(fast.status == 200);
    CHECK(fast_took < 250ms);

    auto answer = slow.get();
    CHECK(answer.status == 200);
    CHECK(answer.body == "/slow?x=1");
    server.shutdown(2s);
}
