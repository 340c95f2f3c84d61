#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>

namespace refgate::runtime {

// Lets a degraded mode log at a bounded rate: allow() is true at most once a period, from any
// thread. What happens in between is counted in a metric, not logged.
class LogLimiter {
  public:
    explicit LogLimiter(std::chrono::steady_clock::duration period) : period_(period.count()) {}

    bool allow() noexcept {
        auto now = std::chrono::steady_clock::now().time_since_epoch().count();
        auto last = last_.load(std::memory_order_relaxed);
        if (last != kNever && now - last < period_) return false;
        return last_.compare_exchange_strong(last, now, std::memory_order_relaxed);
    }

  private:
    static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min();
    std::int64_t period_;
    std::atomic<std::int64_t> last_{kNever};
};

}  // namespace refgate::runtime
