#include "refgate/runtime/periodic_worker.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace periodic_worker_test {

using namespace refgate;
using namespace std::chrono_literals;

namespace {

// Polls until `done` or a generous deadline (a shared, loaded machine).
template <typename F>
bool eventually(F&& done) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

}  // namespace

TEST_CASE("failed rounds back off, doubling up to the maximum, and a success resets it",
          "[worker]") {
    runtime::PeriodicWorkerOptions options{
        .interval = 250ms, .min_backoff = 100ms, .max_backoff = 350ms};
    runtime::RoundPacing pacing(options);
    CHECK(pacing.after(runtime::RoundOutcome::failed) == 100ms);
    CHECK(pacing.after(runtime::RoundOutcome::failed) == 200ms);
    CHECK(pacing.after(runtime::RoundOutcome::failed) == 350ms);
    CHECK(pacing.after(runtime::RoundOutcome::failed) == 350ms);
    CHECK(pacing.after(runtime::RoundOutcome::done) == 250ms);
    CHECK(pacing.after(runtime::RoundOutcome::failed) == 100ms);
}

TEST_CASE("stop ends a long wait at once, and a stopped worker runs no more rounds", "[worker]") {
    std::atomic<int> rounds{0};
    runtime::PeriodicWorker worker({.name = "rg-test", .interval = 1h}, [&] {
        ++rounds;
        return runtime::RoundOutcome::done;
    });
    worker.start();
    REQUIRE(eventually([&] { return rounds == 1; }));
    auto started = std::chrono::steady_clock::now();
    worker.stop();
    CHECK(std::chrono::steady_clock::now() - started < 5s);
    worker.stop();  // twice is harmless
    CHECK(rounds == 1);
}

TEST_CASE("wake runs the next round now instead of after the interval", "[worker]") {
    std::atomic<int> rounds{0};
    runtime::PeriodicWorker worker({.name = "rg-test", .interval = 1h}, [&] {
        ++rounds;
        return runtime::RoundOutcome::done;
    });
    worker.start();
    REQUIRE(eventually([&] { return rounds == 1; }));
    worker.wake();
    CHECK(eventually([&] { return rounds == 2; }));
    worker.stop();
}

TEST_CASE("a worker that waits first runs no round before its interval", "[worker]") {
    std::atomic<int> rounds{0};
    runtime::PeriodicWorker worker(
        {.name = "rg-test", .interval = 1h, .first_round_at_once = false}, [&] {
            ++rounds;
            return runtime::RoundOutcome::done;
        });
    worker.start();
    std::this_thread::sleep_for(50ms);
    worker.stop();
    CHECK(rounds == 0);
}

TEST_CASE("while backing off the idle duty runs every tick, and not after a success", "[worker]") {
    std::atomic<int> rounds{0};
    std::atomic<int> idles{0};
    std::atomic<bool> fail{true};
    runtime::PeriodicWorker worker(
        {.name = "rg-test", .interval = 1h, .min_backoff = 1h, .max_backoff = 1h, .idle_tick = 5ms},
        [&] {
            ++rounds;
            return fail ? runtime::RoundOutcome::failed : runtime::RoundOutcome::done;
        },
        [&] { ++idles; });
    worker.start();
    CHECK(eventually([&] { return idles >= 3; }));
    CHECK(rounds == 1);
    fail = false;
    worker.wake();
    REQUIRE(eventually([&] { return rounds == 2; }));
    int after_success = idles;
    std::this_thread::sleep_for(50ms);
    CHECK(idles == after_success);
    worker.stop();
}

}  // namespace periodic_worker_test
