// Graceful drain: from SIGTERM on, /readyz says 503 while both listeners keep serving for
// drain_ms, so that a load balancer takes the instance out before its listeners close.

#include <catch2/catch.hpp>
#include <csignal>
#include <future>
#include <thread>

#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace drain_test {

using namespace refgate::test;
using namespace std::chrono_literals;

namespace {

// Waits for a service that should stop by itself; its exit code (SIGKILLed and failed if not).
int exit_code_of(ServiceProcess& service, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (service.running() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    return service.stop(SIGKILL);
}

}  // namespace

TEST_CASE("during the drain readyz answers 503 and every redirect on a new connection is served",
          "[ops][signals][drain]") {
    TestDatabase db;
    import_demo_links(db.url(), {{"demo"}});
    PrivateRedis redis;
    constexpr auto kDrain = 2'000ms;
    ServiceProcess service({.database_url = db.url(),
                            .redis_url = redis.url(),
                            .env = {{"REFGATE_DRAIN_MS", std::to_string(kDrain.count())}}});
    REQUIRE(http_get(service.port(), "/readyz").status == 200);
    REQUIRE(http_get(service.admin_port(), "/readyz").status == 200);

    // `Connection: close` on every request: each redirect comes over a new connection, as from
    // readers whose load balancer has not yet noticed the instance leaving.
    std::atomic<bool> stop_load{false};
    auto load = std::async(std::launch::async, [&] {
        return run_load(
            service.port(),
            {raw_request("GET", "/go/demo", {{"User-Agent", kBrowser}, {"Connection", "close"}})},
            LoadOptions{.total = 1'000'000,
                        .connections = 4,
                        .max_time = 30s,
                        .pipeline = 1,
                        .stop = &stop_load});
    });
    std::this_thread::sleep_for(200ms);
    auto signalled = std::chrono::steady_clock::now();
    REQUIRE(::kill(service.pid(), SIGTERM) == 0);
    REQUIRE(service.wait_for_log("\"draining\"", 1s));

    CHECK(http_get(service.port(), "/readyz").status == 503);
    CHECK(http_get(service.admin_port(), "/readyz").status == 503);
    CHECK(http_get(service.port(), "/healthz").status == 200);
    // Load keeps coming until shortly before the drain ends; the service is still up then.
    std::this_thread::sleep_until(signalled + kDrain - 500ms);
    CHECK(service.running());
    CHECK(http_get(service.port(), "/go/demo").status == 302);
    stop_load = true;
    auto result = load.get();
    INFO(result.summary());
    CHECK(result.connect_failures == 0);
    CHECK(result.failed == 0);
    CHECK(result.bad_responses == 0);
    CHECK(result.answered() > 0);
    CHECK(result.count(302) == result.answered());
    CHECK(result.answered_between(signalled + 100ms, signalled + kDrain - 600ms) > 0);

    CHECK(exit_code_of(service, kDrain + 15s) == 0);
    CHECK(std::chrono::steady_clock::now() - signalled >= kDrain);
    CHECK(service.log().find("\"drained\"") != std::string::npos);
}

TEST_CASE("a second stop signal ends the drain at once and the service still exits 0",
          "[ops][signals][drain]") {
    TestDatabase db;
    PrivateRedis redis;
    ServiceProcess service({.database_url = db.url(),
                            .redis_url = redis.url(),
                            .env = {{"REFGATE_DRAIN_MS", "60000"}}});
    REQUIRE(::kill(service.pid(), SIGTERM) == 0);
    REQUIRE(service.wait_for_log("\"draining\"", 2s));
    REQUIRE(::kill(service.pid(), SIGINT) == 0);
    CHECK(exit_code_of(service, 15s) == 0);
    CHECK(service.log().find("drain_cut_short") != std::string::npos);
}

}  // namespace drain_test
