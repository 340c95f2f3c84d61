#pragma once

// Figures of the link-health checker for /metrics: links per confirmed state (as PostgreSQL last
// said), checks by what they saw, and how long a check took.

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "refgate/domain/link_health.hpp"
#include "refgate/metrics/metrics.hpp"

namespace refgate::metrics {

// A check follows up to ten hops with a timeout each: tenths of a second to a minute.
inline constexpr runtime::HistogramBounds kLinkCheckDurationBounds = {
    0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0, 60.0};

struct LinkHealthStats {
    static constexpr std::size_t kFindings = std::size(domain::kAllFindings);
    std::array<std::atomic<std::int64_t>, kFindings> links{};    // by confirmed state
    std::array<std::atomic<std::uint64_t>, kFindings> checks{};  // by the finding seen
    runtime::LatencyHistogram duration{kLinkCheckDurationBounds};
    // Automatic fallback's switches made by this instance's checks: [0] to the fallback, [1]
    // back to the destination.
    std::array<std::atomic<std::uint64_t>, 2> fallback_switches{};
};

}  // namespace refgate::metrics

namespace prometheus {
struct MetricFamily;
}

namespace refgate::metrics {
// refgate_links_health{state}, refgate_link_checks_total{outcome},
// refgate_link_check_duration_seconds, refgate_link_fallback_switches_total{direction}.
void collect_link_health(const LinkHealthStats& stats, std::vector<prometheus::MetricFamily>& out);
}  // namespace refgate::metrics
