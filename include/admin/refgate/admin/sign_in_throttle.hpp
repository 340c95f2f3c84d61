#pragma once

// Failed sign-ins, counted in memory only (never stored or logged). A client's own failures on a
// name lock that name for that client alone; everyone's failures on one name, or one client's on
// many names, slow their next attempts down and never refuse them, so that no one can lock a
// chosen editor out, nor one person behind an office's address lock out the others.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "refgate/admin/failure_limiter.hpp"
#include "refgate/domain/ip_network.hpp"

namespace refgate::admin {

struct SignInLimits {
    std::chrono::seconds window{15 * 60};       // how long a failure is remembered
    std::size_t max_per_name_and_client = 5;    // then 429 for that name from that client
    std::size_t slow_name_after = 50;           // failures on a name from all clients, then delays
    std::size_t slow_client_after = 20;         // failures from a client on all names, then delays
    std::chrono::milliseconds delay_step{250};  // per multiple of the ceiling
    std::chrono::milliseconds max_delay{3000};
    std::size_t max_tracked = 10'000;  // keys remembered per table at most
};

class SignInThrottle {
  public:
    struct Verdict {
        int retry_after = 0;                 // seconds; above 0: answer 429, verify nothing
        std::chrono::milliseconds delay{0};  // wait this long before verifying the password
    };

    // `clock` must outlive the throttle; by default the steady clock.
    explicit SignInThrottle(SignInLimits limits = {},
                            const domain::MonotonicClock* clock = nullptr);

    Verdict before(std::string_view name, const domain::IpBytes& client);
    void failed(std::string_view name, const domain::IpBytes& client);

  private:
    std::chrono::milliseconds delay_for(std::size_t failures, std::size_t ceiling) const;

    SignInLimits limits_;
    FailureLimiter pairs_;
    FailureLimiter names_;
    FailureLimiter clients_;
};

}  // namespace refgate::admin
