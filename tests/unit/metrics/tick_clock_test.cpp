// TickClock (the redirect's request durations) against steady_clock over spans a request can take:
// from the time-stamp counter where the kernel keeps time by it, from steady_clock elsewhere; on
// either path a span reads as what steady_clock saw, and never as less.
#include "refgate/metrics/tick_clock.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

namespace tick_clock_test {

using namespace std::chrono_literals;

TEST_CASE("a TickClock span reads as the span steady_clock saw", "[metrics][tick_clock]") {
    const refgate::TickClock clock;
    for (auto wait : {0ms, 3ms, 30ms}) {
        INFO("sleeping " << wait.count() << " ms");
        // The clock's span lies within steady_clock's: read after its start and before its end.
        auto outer_start = std::chrono::steady_clock::now();
        std::uint64_t start = clock.now();
        std::this_thread::sleep_for(wait);
        std::chrono::nanoseconds measured = clock.since(start);
        auto outer = std::chrono::steady_clock::now() - outer_start;
        INFO("TickClock " << measured.count() << " ns, steady_clock " << outer.count() << " ns");
        CHECK(measured >= wait);
        // The counter's rate is measured once over 2 ms: a few percent off at most, and the
        // reads between the two clocks' take microseconds.
        CHECK(measured <= outer * 1.05 + 20us);
    }
}

TEST_CASE("TickClocks made apart agree on a span", "[metrics][tick_clock]") {
    const refgate::TickClock first;
    const refgate::TickClock second;
    std::uint64_t a = first.now();
    std::uint64_t b = second.now();
    std::this_thread::sleep_for(5ms);
    auto by_first = first.since(a);
    auto by_second = second.since(b);
    CHECK(by_first >= 5ms);
    CHECK(by_second >= 5ms);
    // The same rate: the two spans differ by the moments between their reads, not by percents.
    CHECK(by_first - by_second < 1ms);
    CHECK(by_second - by_first < 1ms);
}

}  // namespace tick_clock_test
