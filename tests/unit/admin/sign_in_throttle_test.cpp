#include "refgate/admin/sign_in_throttle.hpp"

#include <catch2/catch.hpp>
#include <chrono>

#include "support/fake_clock.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace sign_in_throttle_test {

namespace {

using namespace std::chrono_literals;
using refgate::admin::SignInThrottle;

using refgate::testing::FakeMonotonicClock;

// An hour after the steady clock's epoch, as in a process that has run a while.
constexpr std::chrono::steady_clock::time_point kStart{std::chrono::hours{1}};

refgate::domain::IpBytes client(std::uint8_t n) {
    refgate::domain::IpBytes address{};
    address[10] = address[11] = 0xff;
    address[12] = 203;
    address[15] = n;
    return address;
}

}  // namespace

TEST_CASE("a client's failures on a name lock that name for that client only", "[admin][sign-in]") {
    FakeMonotonicClock clock{kStart};
    SignInThrottle throttle({}, &clock);
    for (int i = 0; i < 5; ++i) {
        REQUIRE(throttle.before("ada", client(1)).retry_after == 0);
        throttle.failed("ada", client(1));
    }
    auto locked = throttle.before("ada", client(1));
    CHECK(locked.retry_after > 14 * 60);
    // Another client, or another name from the same client, goes on as before.
    CHECK(throttle.before("ada", client(2)).retry_after == 0);
    CHECK(throttle.before("ada", client(2)).delay == 0ms);
    CHECK(throttle.before("bob", client(1)).retry_after == 0);
    clock.advance(15min);
    CHECK(throttle.before("ada", client(1)).retry_after == 0);
}

TEST_CASE("failures on one name from many clients delay attempts on it, growing, never refusing",
          "[admin][sign-in]") {
    FakeMonotonicClock clock{kStart};
    SignInThrottle throttle({}, &clock);
    for (int i = 0; i < 49; ++i) throttle.failed("ada", client(static_cast<std::uint8_t>(i)));
    CHECK(throttle.before("ada", client(200)).delay == 0ms);
    throttle.failed("ada", client(49));
    auto slowed = throttle.before("ada", client(200));
    CHECK(slowed.retry_after == 0);
    CHECK(slowed.delay == 250ms);
    for (int i = 0; i < 1000; ++i) throttle.failed("ada", client(static_cast<std::uint8_t>(i)));
    slowed = throttle.before("ada", client(200));
    CHECK(slowed.retry_after == 0);
    CHECK(slowed.delay == 3000ms);  // the ceiling
    CHECK(throttle.before("bob", client(200)).delay == 0ms);
    clock.advance(15min);
    CHECK(throttle.before("ada", client(200)).delay == 0ms);
}

TEST_CASE("one client's failures on many names delay that client's attempts only",
          "[admin][sign-in]") {
    FakeMonotonicClock clock{kStart};
    SignInThrottle throttle({}, &clock);
    for (int i = 0; i < 20; ++i) throttle.failed("user" + std::to_string(i), client(1));
    auto slowed = throttle.before("ada", client(1));
    CHECK(slowed.retry_after == 0);
    CHECK(slowed.delay == 250ms);
    CHECK(throttle.before("ada", client(2)).delay == 0ms);
}

}  // namespace sign_in_throttle_test
