// TickClock (the redirect's request durations) against steady_clock over spans a request can take.
// Where the kernel keeps time by the TSC this checks the counter's measured rate (a wrong one
// reads every span too long or too short); elsewhere TickClock reads steady_clock itself, and this
// checks that its spans come out in nanoseconds.
#include "refgate/metrics/tick_clock.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

namespace tick_clock_test {

using namespace std::chrono_literals;

TEST_CASE("a TickClock span reads as the span steady_clock saw", "[metrics][tick_clock]") {
    const refgate::metrics::TickClock clock;
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
        // The counter's rate is measured once, to a few thousandths of a percent; the 5 % allow
        // for nothing but a grossly wrong rate, and the reads between the clocks' for time.
        CHECK(measured <= outer * 1.05 + 20us);
    }
}

}  // namespace tick_clock_test
