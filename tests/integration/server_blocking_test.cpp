// The server runs blocking handlers off its I/O threads, so other requests keep being answered.

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <future>
#include <thread>

#include "refgate/http/router.hpp"
#include "refgate/http/server.hpp"
#include "support/http_client.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace server_blocking_test {

using namespace refgate;
using namespace std::chrono_literals;

namespace {

class SlowHandler final : public http::Handler {
  public:
    void handle(const http::Request& request, http::Response& response) override {
        std::this_thread::sleep_for(400ms);
        response.json(200, std::string(request.target));
    }
    bool may_block() const override { return true; }
};

// Blocks until the test opens the gate (or a few seconds pass).
class GateHandler final : public http::Handler {
  public:
    explicit GateHandler(std::shared_future<void> gate) : gate_(std::move(gate)) {}
    void handle(const http::Request&, http::Response& response) override {
        gate_.wait_for(5s);
        response.json(200, "{}");
    }
    bool may_block() const override { return true; }

  private:
    std::shared_future<void> gate_;
};

class FastHandler final : public http::Handler {
  public:
    void handle(const http::Request&, http::Response& response) override {
        response.json(200, "{}");
    }
};

// Answers the scheduling of the thread it runs on: "<policy> <nice> <name>".
class PriorityHandler final : public http::Handler {
  public:
    explicit PriorityHandler(bool blocks) : blocks_(blocks) {}
    void handle(const http::Request&, http::Response& response) override {
        int policy = sched_getscheduler(0);
        int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
        char name[16] = {};
        pthread_getname_np(pthread_self(), name, sizeof name);
        std::string text = (policy == SCHED_BATCH   ? "batch "
                            : policy == SCHED_OTHER ? "other "
                                                    : "? ") +
                           std::to_string(nice) + " " + name;
        response.json(200, text);
    }
    bool may_block() const override { return blocks_; }

  private:
    bool blocks_;
};

}  // namespace

TEST_CASE(
    "blocking handlers (postbacks, the admin API) run at background priority, the I/O "
    "thread at its own",
    "[http][server]") {
    http::Server server(
        1, {{.name = "pool",
             .endpoint = {"127.0.0.1", 0},
             .handler_factory = [] { return std::make_unique<PriorityHandler>(true); }},
            {.name = "io", .endpoint = {"127.0.0.1", 0}, .handler_factory = [] {
                 return std::make_unique<PriorityHandler>(false);
             }}});
    server.bind();
    server.start();
    // Under CPU contention the pool's work gives way to redirects: SCHED_BATCH (a woken pool
    // thread does not preempt an I/O thread) at nice 10 or lower priority, whichever pool thread
    // takes a call (more calls at once than the pool has threads).
    std::vector<std::future<test::HttpResponse>> calls;
    for (int i = 0; i < 8; ++i) {
        calls.push_back(
            std::async(std::launch::async, [&] { return test::http_get(server.port(0), "/x"); }));
    }
    int own_nice = getpriority(PRIO_PROCESS, 0);
    for (auto& call : calls) {
        auto answer = call.get();
        REQUIRE(answer.status == 200);
        int nice = 0;
        char policy[8] = {};
        char name[16] = {};
        REQUIRE(std::sscanf(answer.body.c_str(), "%7s %d %15s", policy, &nice, name) == 3);
        CHECK(std::string(policy) == "batch");
        CHECK(nice >= 10);
        CHECK(nice >= own_nice);
        CHECK(std::string(name) == "rg-blocking");
    }
    // The I/O thread keeps the process's priority.
    auto io = test::http_get(server.port(1), "/y");
    REQUIRE(io.status == 200);
    CHECK(io.body.starts_with("other " + std::to_string(own_nice) + " "));
    server.shutdown(2s);
}

TEST_CASE(
    "after its first blocking request a connection is served by the blocking lane, rg-lane, at "
    "background priority",
    "[http][server]") {
    http::Server server(1, {{.name = "mixed", .endpoint = {"127.0.0.1", 0}, .handler_factory = [] {
                                 auto router = std::make_unique<http::Router>();
                                 router->prefix("/block", std::make_shared<PriorityHandler>(true));
                                 router->prefix("/here", std::make_shared<PriorityHandler>(false));
                                 return router;
                             }}});
    server.bind();
    server.start();
    test::RawConnection connection(server.port(0));
    auto ask = [&](const std::string& target) {
        REQUIRE(connection.send("GET " + target + " HTTP/1.1\r\nHost: t\r\n\r\n"));
        auto answer = connection.read_response(5s);
        REQUIRE(answer.has_value());
        CHECK(answer->status == 200);
        return answer->body;
    };
    int own_nice = getpriority(PRIO_PROCESS, 0);
    // On the I/O thread that accepted it.
    CHECK(ask("/here").starts_with("other " + std::to_string(own_nice) + " "));
    CHECK(server.stats(0).handed_off.load() == 0);
    // A blocking request: the pool answers it, and the connection moves.
    CHECK(ask("/block").ends_with(" rg-blocking"));
    CHECK(server.stats(0).handed_off.load() == 1);
    // From then on the lane answers what does not block, at the pool's priority.
    auto lane = ask("/here");
    int nice = 0;
    char policy[8] = {};
    char name[16] = {};
    REQUIRE(std::sscanf(lane.c_str(), "%7s %d %15s", policy, &nice, name) == 3);
    CHECK(std::string(policy) == "batch");
    CHECK(nice >= 10);
    CHECK(std::string(name) == "rg-lane");
    CHECK(ask("/block").ends_with(" rg-blocking"));
    CHECK(server.stats(0).handed_off.load() == 1);  // once per connection
    server.shutdown(2s);
}

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

namespace {

// A listener whose /api/ blocks until `gate` opens and whose /healthz answers at once.
http::ListenerOptions gated_listener(std::shared_future<void> gate,
                                     std::chrono::milliseconds wait = 2s,
                                     std::size_t max_queue = 64) {
    return {.name = "admin",
            .endpoint = {"127.0.0.1", 0},
            .handler_factory =
                [gate] {
                    auto router = std::make_unique<http::Router>();
                    router->prefix("/api/", std::make_shared<GateHandler>(gate));
                    router->exact("/healthz", std::make_shared<FastHandler>());
                    return router;
                },
            .blocking_wait = wait,
            .max_blocking_queue = max_queue};
}

// Sends a request on each of `n` new connections and leaves them waiting for the answer.
std::vector<std::unique_ptr<test::RawConnection>> hang(int port, int n) {
    std::vector<std::unique_ptr<test::RawConnection>> connections;
    for (int i = 0; i < n; ++i) {
        connections.push_back(std::make_unique<test::RawConnection>(port));
        REQUIRE(connections.back()->send("GET /api/x HTTP/1.1\r\nHost: t\r\n\r\n"));
        // One at a time, so that a pool thread has taken each before the next arrives.
        std::this_thread::sleep_for(20ms);
    }
    return connections;
}

}  // namespace

TEST_CASE("a quick route answers at once while the same listener's blocking routes are stuck",
          "[http][server]") {
    std::promise<void> open;
    http::Server server(1, {gated_listener(open.get_future().share())});
    server.bind();
    server.start();
    // More stuck calls than the blocking pool has threads: the rest wait in its queue.
    auto stuck = hang(server.port(0), 12);
    std::this_thread::sleep_for(100ms);

    auto started = std::chrono::steady_clock::now();
    auto health = test::http_get(server.port(0), "/healthz");
    CHECK(health.status == 200);
    CHECK(std::chrono::steady_clock::now() - started < 250ms);

    open.set_value();
    for (auto& c : stuck) CHECK(c->read_response(5s).value_or(test::HttpResponse{}).status == 200);
    server.shutdown(2s);
}

TEST_CASE("a blocking call that waits too long for the pool is answered 503 with Retry-After",
          "[http][server]") {
    std::promise<void> open;
    // A queue wait of two seconds, so that "at once" below (under one second) tells a refusal
    // from a wait even on a loaded machine (with 300 ms, six entries at a time and the fuzz
    // build beside them once took 350 ms to refuse).
    http::Server server(1, {gated_listener(open.get_future().share(), 2s, 2)});
    server.bind();
    server.start();
    // Four occupy the pool's threads, two wait in its queue (its bound).
    auto stuck = hang(server.port(0), 6);
    std::this_thread::sleep_for(100ms);

    // The queue is full: refused at once.
    auto started = std::chrono::steady_clock::now();
    auto refused = test::http_get(server.port(0), "/api/y");
    CHECK(refused.status == 503);
    CHECK(refused.header("Retry-After") == "1");
    CHECK(std::chrono::steady_clock::now() - started < 1s);

    // The queued ones are answered when their wait is over, on connections that stay usable.
    for (std::size_t i = 4; i < stuck.size(); ++i) {
        auto answer = stuck[i]->read_response(10s);
        REQUIRE(answer.has_value());
        CHECK(answer->status == 503);
        REQUIRE(stuck[i]->send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"));
        CHECK(stuck[i]->read_response(2s).value_or(test::HttpResponse{}).status == 200);
    }
    CHECK(server.stats(0).unavailable_requests.load() == 3);

    // The pool's threads finish their calls; then the queue takes calls again.
    open.set_value();
    for (std::size_t i = 0; i < 4; ++i)
        CHECK(stuck[i]->read_response(5s).value_or(test::HttpResponse{}).status == 200);
    std::this_thread::sleep_for(100ms);  // the pool's threads drop the calls answered already
    CHECK(test::http_get(server.port(0), "/api/z").status == 200);
    server.shutdown(2s);
}

}  // namespace server_blocking_test
