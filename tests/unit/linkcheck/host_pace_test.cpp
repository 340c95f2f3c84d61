#include "refgate/linkcheck/host_pace.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>
#include <vector>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace host_pace_test {

using namespace refgate::linkcheck;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("two checks running at once are spaced to one request per gap to the same host",
          "[linkhealth][pace]") {
    HostPace pace(200ms);
    std::mutex mutex;
    std::vector<Clock::time_point> shop, other;
    // (Catch2's assertions are not thread-safe: the threads only record.)
    auto check = [&](int requests) {
        for (int i = 0; i < requests; ++i) {
            if (!pace.wait("shop.test")) return;
            std::lock_guard lock(mutex);
            shop.push_back(Clock::now());
        }
    };
    auto started = Clock::now();
    std::thread scheduled(check, 3);
    std::thread on_demand(check, 3);
    // Another host is not held up by them.
    REQUIRE(pace.wait("other.test"));
    other.push_back(Clock::now());
    scheduled.join();
    on_demand.join();
    REQUIRE(shop.size() == 6);
    std::sort(shop.begin(), shop.end());
    // Each wakes at its booked moment or later: the bookings are 200 ms apart from the start, so
    // the k-th request in time is never before the k-th booking (to the millisecond a wait is
    // given in). A busy machine's scheduler may wake one late, which shortens the gap after it:
    // so no check on the gaps themselves.
    for (std::size_t i = 0; i < shop.size(); ++i) {
        INFO("request " << i);
        CHECK(shop[i] - started >= static_cast<int>(i) * 200ms - 2ms);
    }
    CHECK(other[0] - started < 150ms);
}

TEST_CASE("a stop ends a wait for a host's turn at once", "[linkhealth][pace]") {
    HostPace pace(10s);
    REQUIRE(pace.wait("shop.test"));
    auto started = Clock::now();
    std::thread stopper([&] {
        std::this_thread::sleep_for(50ms);
        pace.stop();
    });
    CHECK_FALSE(pace.wait("shop.test"));
    stopper.join();
    CHECK(Clock::now() - started < 2s);
    CHECK(pace.stopping().load());
    CHECK_FALSE(pace.wait("other.test"));
}

}  // namespace host_pace_test
