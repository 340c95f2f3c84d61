// An exception escaping a request handler costs that request a 500, never the I/O thread.

#include <catch2/catch.hpp>
#include <stdexcept>

#include "refgate/http/router.hpp"
#include "refgate/http/server.hpp"
#include "support/http_client.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace handler_error_test {

using namespace refgate;

namespace {

// Throws for /boom, answers 200 otherwise; blocks (runs on the pool) when asked to.
class ThrowingHandler final : public http::Handler {
  public:
    explicit ThrowingHandler(bool blocks) : blocks_(blocks) {}
    void handle(const http::Request& request, http::Response& response) override {
        if (request.path() == "/boom") throw std::runtime_error("handler bug");
        if (request.path() == "/int") throw 42;
        response.json(200, "{}");
    }
    bool may_block() const override { return blocks_; }

  private:
    bool blocks_;
};

http::ListenerOptions listener(std::string name, bool blocks) {
    return {.name = std::move(name), .endpoint = {"127.0.0.1", 0}, .handler_factory = [blocks] {
                return std::make_unique<ThrowingHandler>(blocks);
            }};
}

}  // namespace

TEST_CASE("a handler that throws answers 500 and the connection and its thread go on",
          "[http][server]") {
    // One I/O thread: had the exception ended it, nothing after it would be answered.
    http::Server server(1, {listener("inline", false), listener("pool", true)});
    server.bind();
    server.start();
    for (std::size_t index : {0u, 1u}) {
        INFO("listener " << index);
        test::RawConnection conn(server.port(index));
        REQUIRE(conn.send("GET /boom HTTP/1.1\r\nHost: x\r\n\r\n"));
        auto failed = conn.read_response();
        REQUIRE(failed);
        CHECK(failed->status == 500);
        CHECK(failed->reason == "Internal Server Error");
        // Pipelined behind it on the same connection: answered as usual.
        REQUIRE(
            conn.send("GET /int HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n"));
        auto odd = conn.read_response();
        REQUIRE(odd);
        CHECK(odd->status == 500);
        auto fine = conn.read_response();
        REQUIRE(fine);
        CHECK(fine->status == 200);
        CHECK(test::http_get(server.port(index), "/ok").status == 200);
        CHECK(server.stats(index).handler_errors.load() == 2);
    }
    server.shutdown(std::chrono::seconds{2});
}

}  // namespace handler_error_test
