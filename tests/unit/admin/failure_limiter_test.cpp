#include "refgate/admin/failure_limiter.hpp"

#include <catch2/catch.hpp>
#include <chrono>

#include "support/fake_clock.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace failure_limiter_test {

namespace {

using namespace std::chrono_literals;
using refgate::admin::FailureLimiter;
using refgate::admin::FailureLimits;

using refgate::testing::FakeMonotonicClock;

// An hour after the steady clock's epoch, as in a process that has run a while.
constexpr std::chrono::steady_clock::time_point kStart{std::chrono::hours{1}};

refgate::http::PeerAddress address(std::uint32_t n) {
    refgate::http::PeerAddress peer;
    peer.bytes[12] = static_cast<std::uint8_t>(n >> 24);
    peer.bytes[13] = static_cast<std::uint8_t>(n >> 16);
    peer.bytes[14] = static_cast<std::uint8_t>(n >> 8);
    peer.bytes[15] = static_cast<std::uint8_t>(n);
    return peer;
}

// Locks `peer` with `limits.max_per_minute` failures.
void lock_out(FailureLimiter& limiter, const refgate::http::PeerAddress& peer, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) limiter.record_failure(peer);
}

}  // namespace

TEST_CASE("an address is locked for the rest of its minute after too many failures",
          "[admin][limiter]") {
    FakeMonotonicClock clock{kStart};
    FailureLimiter limiter({.max_per_minute = 3, .max_addresses = 10, .max_total_per_second = 100},
                           &clock);
    lock_out(limiter, address(1), 2);
    CHECK(limiter.retry_after(address(1)) == 0);
    limiter.record_failure(address(1));
    CHECK(limiter.retry_after(address(1)) == 61);
    clock.advance(45s);
    CHECK(limiter.retry_after(address(1)) == 16);
    CHECK(limiter.retry_after(address(2)) == 0);
    clock.advance(15s);
    CHECK(limiter.retry_after(address(1)) == 0);
}

TEST_CASE("a full table of addresses never unlocks a locked address", "[admin][limiter]") {
    FakeMonotonicClock clock{kStart};
    FailureLimiter limiter(
        {.max_per_minute = 3, .max_addresses = 100, .max_total_per_second = 1000000}, &clock);
    lock_out(limiter, address(1), 3);
    // Many more distinct addresses than the table holds, each failing once, all at once.
    for (std::uint32_t n = 2; n < 10'002; ++n) limiter.record_failure(address(n));
    CHECK(limiter.tracked() == 100);
    CHECK(limiter.retry_after(address(1)) > 0);
    // The oldest unlocked addresses went first; the newest are still counted.
    lock_out(limiter, address(10'001), 2);
    CHECK(limiter.retry_after(address(10'001)) > 0);
}

TEST_CASE("when every tracked address is locked, the oldest lock is the one forgotten",
          "[admin][limiter]") {
    FakeMonotonicClock clock{kStart};
    FailureLimiter limiter({.max_per_minute = 2, .max_addresses = 3, .max_total_per_second = 100},
                           &clock);
    for (std::uint32_t n = 1; n <= 3; ++n) {
        lock_out(limiter, address(n), 2);
        clock.advance(1s);
    }
    limiter.record_failure(address(4));
    CHECK(limiter.tracked() == 3);
    CHECK(limiter.retry_after(address(1)) == 0);
    CHECK(limiter.retry_after(address(2)) > 0);
    CHECK(limiter.retry_after(address(3)) > 0);
}

TEST_CASE("a locked address whose minute is over is forgotten before any unlocked one",
          "[admin][limiter]") {
    FakeMonotonicClock clock{kStart};
    FailureLimiter limiter({.max_per_minute = 2, .max_addresses = 2, .max_total_per_second = 100},
                           &clock);
    lock_out(limiter, address(1), 2);
    clock.advance(30s);
    limiter.record_failure(address(2));
    clock.advance(31s);  // address 1's minute is over; address 2's is not
    limiter.record_failure(address(3));
    lock_out(limiter, address(2), 1);
    CHECK(limiter.retry_after(address(2)) > 0);
}

TEST_CASE("over the ceiling of failures per second every failing address waits out that second",
          "[admin][limiter]") {
    FakeMonotonicClock clock{kStart};
    FailureLimiter limiter({.max_per_minute = 20, .max_addresses = 100, .max_total_per_second = 5},
                           &clock);
    for (std::uint32_t n = 1; n <= 5; ++n) CHECK(limiter.record_failure(address(n)) == 0);
    CHECK(limiter.record_failure(address(6)) == 1);
    CHECK(limiter.record_failure(address(7)) == 1);
    // Addresses that do not fail are not held back.
    CHECK(limiter.retry_after(address(8)) == 0);
    clock.advance(1s);
    CHECK(limiter.record_failure(address(9)) == 0);
}

TEST_CASE("failures counted under a name are remembered for the limiter's window",
          "[admin][limiter]") {
    FakeMonotonicClock clock{kStart};
    FailureLimiter limiter({.max_per_minute = 5,
                            .max_addresses = 10,
                            .max_total_per_second = 100,
                            .window = std::chrono::minutes{15}},
                           &clock);
    for (int i = 0; i < 5; ++i) {
        CHECK(limiter.retry_after("eddie") == 0);
        limiter.record_failure("eddie");
    }
    CHECK(limiter.retry_after("eddie") == 901);
    CHECK(limiter.retry_after("vera") == 0);
    clock.advance(14min);
    CHECK(limiter.retry_after("eddie") == 61);
    clock.advance(1min);
    CHECK(limiter.retry_after("eddie") == 0);
}

}  // namespace failure_limiter_test
