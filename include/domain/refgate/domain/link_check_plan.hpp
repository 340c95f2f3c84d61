#pragma once

// When the link-health checker checks what: the schedule's plan (every link once per interval,
// spread evenly, plus the confirmation of a pending finding) and the per-host pace. Which
// addresses an outbound request may reach is public_address() in ip_network.hpp. Pure: time
// comes in as values or through the Clock.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "refgate/domain/clock.hpp"
#include "refgate/domain/ip_network.hpp"
#include "refgate/domain/time.hpp"

namespace refgate::domain {

struct PlanLink {
    std::int64_t id = 0;
    std::optional<SysSeconds> last_checked;
    std::optional<SysSeconds> confirm_at;  // a pending finding's second check
};

// The links due at `now`, in id order. Link i of n (by id) owns the moments
// epoch + i * interval / n + k * interval: it is due when it was not checked since the latest
// of them, so over any interval each link is checked once and the checks are spread evenly.
// A link never checked is due at once; a pending finding is due at its confirm_at.
std::vector<std::int64_t> due_links(std::vector<PlanLink> links, SysSeconds now,
                                    std::chrono::seconds interval);

// At most one request per `gap` to one host. reserve() books the host's next free moment and
// says how long to wait for it.
class HostRateLimiter {
  public:
    HostRateLimiter(const MonotonicClock& clock, std::chrono::milliseconds gap)
        : clock_(clock), gap_(gap) {}
    std::chrono::milliseconds reserve(const std::string& host);

  private:
    const MonotonicClock& clock_;
    std::chrono::milliseconds gap_;
    std::unordered_map<std::string, std::chrono::steady_clock::time_point> next_;
};

}  // namespace refgate::domain
