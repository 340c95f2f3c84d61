#pragma once

// Failed authentications on the admin API, counted in memory only (never stored or logged):
// per source address (or another key, such as a user name), with a bounded table, and in total
// per second.

#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "refgate/domain/time.hpp"
#include "refgate/http/request.hpp"

namespace refgate::admin {

struct FailureLimits {
    std::size_t max_per_minute = 20;        // per key (address) and window, then 429 till it ends
    std::size_t max_addresses = 10000;      // addresses tracked at most
    std::size_t max_total_per_second = 50;  // all addresses together, then 429 for that second
    std::chrono::seconds window{60};        // how long failures of one key are remembered
};

class FailureLimiter {
  public:
    // `clock` must outlive the limiter; by default the steady clock.
    explicit FailureLimiter(FailureLimits limits, const domain::MonotonicClock* clock = nullptr);

    // Seconds the address must wait before it may try again; 0 when it may try.
    int retry_after(const http::PeerAddress& peer);
    // Counts a failure. Returns the seconds to wait when failures from all addresses together
    // are over their ceiling this second (the failure is then answered 429); else 0.
    int record_failure(const http::PeerAddress& peer);
    // The same for any key (a user name); at most 128 bytes of it count.
    int retry_after(std::string_view key);
    int record_failure(std::string_view key);
    // The key's failures in its current window.
    std::size_t failures(std::string_view key);

    std::size_t tracked() const;

  private:
    using TimePoint = std::chrono::steady_clock::time_point;
    struct Window {
        TimePoint start;
        std::size_t failures = 0;
        bool locked = false;
        std::list<std::string>::iterator position;  // in unlocked_ or locked_
    };
    using Windows = std::unordered_map<std::string, Window>;

    bool over(const Window& w, TimePoint now) const;
    // The key's window while it lasts (one that is over is forgotten); null when none.
    const Window* live_window(std::string_view key, TimePoint now);
    void forget(Windows::iterator it);
    void evict_one(TimePoint now);

    FailureLimits limits_;
    const domain::MonotonicClock& clock_;
    mutable std::mutex mutex_;
    Windows windows_;
    // Keys by the moment they entered their list (a new window, or locking): the front is the
    // oldest. Unlocked windows are evicted first, so a full table never frees a locked address.
    std::list<std::string> unlocked_;
    std::list<std::string> locked_;
    TimePoint second_start_{};
    std::size_t second_failures_ = 0;
};

}  // namespace refgate::admin
