#include "refgate/admin/sign_in_throttle.hpp"

#include <algorithm>
#include <limits>

namespace refgate::admin {
namespace {

constexpr std::size_t kNever = std::numeric_limits<std::size_t>::max();

std::string_view client_key(const domain::IpBytes& client) {
    return {reinterpret_cast<const char*>(client.data()), client.size()};
}

// FailureLimiter keeps the first 128 bytes of a key: a 16-byte address and a user name.
std::string pair_key(std::string_view name, const domain::IpBytes& client) {
    std::string key(client_key(client));
    key.push_back('\0');
    key.append(name);
    return key;
}

FailureLimits counting(std::chrono::seconds window, std::size_t lock_after,
                       std::size_t max_tracked) {
    return {.max_per_minute = lock_after,
            .max_addresses = max_tracked,
            .max_total_per_second = kNever,
            .window = window};
}

}  // namespace

SignInThrottle::SignInThrottle(SignInLimits limits, const domain::MonotonicClock* clock)
    : limits_(limits),
      pairs_(counting(limits.window, limits.max_per_name_and_client, limits.max_tracked), clock),
      names_(counting(limits.window, kNever, limits.max_tracked), clock),
      clients_(counting(limits.window, kNever, limits.max_tracked), clock) {}

std::chrono::milliseconds SignInThrottle::delay_for(std::size_t failures,
                                                    std::size_t ceiling) const {
    if (ceiling == 0 || failures < ceiling) return std::chrono::milliseconds{0};
    auto steps = static_cast<std::int64_t>(std::min<std::size_t>(failures / ceiling, 1'000));
    return std::min(limits_.max_delay, limits_.delay_step * steps);
}

SignInThrottle::Verdict SignInThrottle::before(std::string_view name,
                                               const domain::IpBytes& client) {
    Verdict verdict;
    verdict.retry_after = pairs_.retry_after(pair_key(name, client));
    if (verdict.retry_after > 0) return verdict;
    verdict.delay =
        std::max(delay_for(names_.failures(name), limits_.slow_name_after),
                 delay_for(clients_.failures(client_key(client)), limits_.slow_client_after));
    return verdict;
}

void SignInThrottle::failed(std::string_view name, const domain::IpBytes& client) {
    pairs_.record_failure(pair_key(name, client));
    names_.record_failure(name);
    clients_.record_failure(client_key(client));
}

}  // namespace refgate::admin
