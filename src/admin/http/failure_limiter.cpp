#include "refgate/admin/failure_limiter.hpp"

namespace refgate::admin {
namespace {

constexpr std::chrono::seconds kSecond{1};
constexpr std::size_t kMaxKeyBytes = 128;

std::string_view peer_key(const http::PeerAddress& peer) {
    return {reinterpret_cast<const char*>(peer.bytes.data()), peer.bytes.size()};
}

const domain::MonotonicClock& steady_clock_source() {
    static const domain::SteadyClock clock;
    return clock;
}

}  // namespace

FailureLimiter::FailureLimiter(FailureLimits limits, const domain::MonotonicClock* clock)
    : limits_(limits), clock_(clock != nullptr ? *clock : steady_clock_source()) {}

bool FailureLimiter::over(const Window& w, TimePoint now) const {
    return now - w.start >= limits_.window;
}

void FailureLimiter::forget(Windows::iterator it) {
    (it->second.locked ? locked_ : unlocked_).erase(it->second.position);
    windows_.erase(it);
}

// Frees one place: a locked window whose minute is over, else the oldest unlocked window, and
// only when every tracked address is locked, the oldest locked one.
void FailureLimiter::evict_one(TimePoint now) {
    std::list<std::string>* from = &locked_;
    if (locked_.empty() || (!unlocked_.empty() && !over(windows_.at(locked_.front()), now)))
        from = &unlocked_;
    forget(windows_.find(from->front()));
}

int FailureLimiter::retry_after(const http::PeerAddress& peer) {
    return retry_after(peer_key(peer));
}

int FailureLimiter::record_failure(const http::PeerAddress& peer) {
    return record_failure(peer_key(peer));
}

const FailureLimiter::Window* FailureLimiter::live_window(std::string_view key, TimePoint now) {
    auto it = windows_.find(std::string(key.substr(0, kMaxKeyBytes)));
    if (it == windows_.end()) return nullptr;
    if (over(it->second, now)) {
        forget(it);
        return nullptr;
    }
    return &it->second;
}

int FailureLimiter::retry_after(std::string_view key) {
    TimePoint now = clock_.now();
    std::lock_guard lock(mutex_);
    const Window* window = live_window(key, now);
    if (window == nullptr || !window->locked) return 0;
    auto left =
        std::chrono::duration_cast<std::chrono::seconds>(limits_.window - (now - window->start));
    return static_cast<int>(left.count()) + 1;
}

std::size_t FailureLimiter::failures(std::string_view key) {
    TimePoint now = clock_.now();
    std::lock_guard lock(mutex_);
    const Window* window = live_window(key, now);
    return window == nullptr ? 0 : window->failures;
}

int FailureLimiter::record_failure(std::string_view failed) {
    TimePoint now = clock_.now();
    std::lock_guard lock(mutex_);
    std::string key(failed.substr(0, kMaxKeyBytes));
    auto it = windows_.find(key);
    if (it != windows_.end() && over(it->second, now)) {
        forget(it);
        it = windows_.end();
    }
    if (it == windows_.end()) {
        while (!windows_.empty() && windows_.size() >= limits_.max_addresses) evict_one(now);
        it = windows_.emplace(key, Window{now, 0, false, {}}).first;
        it->second.position = unlocked_.insert(unlocked_.end(), key);
    }
    Window& window = it->second;
    if (++window.failures >= limits_.max_per_minute && !window.locked) {
        locked_.splice(locked_.end(), unlocked_, window.position);
        window.locked = true;
    }
    if (now - second_start_ >= kSecond) {
        second_start_ = now;
        second_failures_ = 0;
    }
    return ++second_failures_ > limits_.max_total_per_second ? 1 : 0;
}

std::size_t FailureLimiter::tracked() const {
    std::lock_guard lock(mutex_);
    return windows_.size();
}

}  // namespace refgate::admin
