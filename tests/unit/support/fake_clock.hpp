#pragma once

// The one hand-stepped clock of the unit tests. FakeClock stands in for the wall clock
// (refgate::domain::Clock: click days, expiries, scheduled codes, sessions), FakeMonotonicClock for
// elapsed time (refgate::domain::MonotonicClock: limits and timeouts). Each reads the time it was
// given, the epoch unless told, until a test sets or advances it: a test steps across midnight or
// past a lock-out without sleeping.

#include <chrono>
#include <cstdint>
#include <utility>

#include "refgate/domain/clock.hpp"

namespace refgate::testing {

template <class Interface>
class BasicFakeClock final : public Interface {
  public:
    using time_point = decltype(std::declval<const Interface&>().now());
    using duration = typename time_point::duration;

    BasicFakeClock() = default;
    explicit BasicFakeClock(time_point start) : now_(start) {}

    time_point now() const override { return now_; }
    void set(time_point at) { now_ = at; }
    void advance(duration by) { now_ += by; }

  private:
    time_point now_{};
};

using FakeClock = BasicFakeClock<domain::Clock>;
using FakeMonotonicClock = BasicFakeClock<domain::MonotonicClock>;

// The wall clock's time `seconds` after the Unix epoch: FakeClock clock{unix_time(kNoon)}.
inline std::chrono::system_clock::time_point unix_time(std::int64_t seconds) {
    return std::chrono::system_clock::time_point{std::chrono::seconds{seconds}};
}

}  // namespace refgate::testing
