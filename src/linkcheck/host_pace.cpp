#include "refgate/linkcheck/host_pace.hpp"

namespace refgate::linkcheck {

bool HostPace::wait(const std::string& host) {
    std::unique_lock lock(mutex_);
    auto delay = limiter_.reserve(host);
    stopped_.wait_for(lock, delay, [this] { return stopping_.load(); });
    return !stopping_.load();
}

void HostPace::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_.store(true);
    }
    stopped_.notify_all();
}

}  // namespace refgate::linkcheck
