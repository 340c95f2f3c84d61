#pragma once

#include <chrono>
#include <cstdint>

namespace refgate::domain {

// The wall clock for every day-sensitive read (click days, expiries, scheduled codes, ages), as
// an interface so that tests can step across days.
class Clock {
  public:
    virtual ~Clock() = default;
    virtual std::chrono::system_clock::time_point now() const = 0;
    std::int64_t unix_seconds() const {
        return std::chrono::duration_cast<std::chrono::seconds>(now().time_since_epoch()).count();
    }
};

class SystemClock final : public Clock {
  public:
    std::chrono::system_clock::time_point now() const override {
        return std::chrono::system_clock::now();
    }
};

// Elapsed time for limits and timeouts: never jumps with the wall clock. Tests step a manual one.
class MonotonicClock {
  public:
    virtual ~MonotonicClock() = default;
    virtual std::chrono::steady_clock::time_point now() const = 0;
};

class SteadyClock final : public MonotonicClock {
  public:
    std::chrono::steady_clock::time_point now() const override {
        return std::chrono::steady_clock::now();
    }
};

}  // namespace refgate::domain
