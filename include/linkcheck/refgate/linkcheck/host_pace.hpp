#pragma once

// The process's one per-host pace for outbound checks: the schedule's and the API's check-now
// share it, so "at most one request per gap to one host" holds across them; and its stop, which
// ends every wait and aborts the transfers in flight (the fetcher watches stopping()).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "refgate/domain/clock.hpp"
#include "refgate/domain/link_check_plan.hpp"

namespace refgate::linkcheck {

class HostPace {
  public:
    explicit HostPace(std::chrono::milliseconds gap) : limiter_(clock_, gap) {}
    HostPace(const HostPace&) = delete;
    HostPace& operator=(const HostPace&) = delete;

    // Waits for the host's next free moment (booked under a lock, so concurrent checks queue);
    // false when stopped meanwhile.
    bool wait(const std::string& host);
    void stop();
    const std::atomic<bool>& stopping() const { return stopping_; }

  private:
    domain::SteadyClock clock_;
    std::mutex mutex_;
    std::condition_variable stopped_;
    domain::HostRateLimiter limiter_;
    std::atomic<bool> stopping_{false};
};

}  // namespace refgate::linkcheck
