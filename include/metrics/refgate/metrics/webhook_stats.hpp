#pragma once

// Figures of webhook delivery (issue 44) for /metrics: attempts by outcome, webhooks disabled,
// and the age of the oldest delivery still waiting (as this instance last read it).

#include <atomic>
#include <cstdint>
#include <vector>

namespace refgate::metrics {

struct WebhookStats {
    std::atomic<std::uint64_t> delivered{0};  // answered 2xx
    std::atomic<std::uint64_t> retried{0};    // an attempt failed; another follows
    std::atomic<std::uint64_t> failed{0};     // failed past the give-up window: given up
    std::atomic<std::uint64_t> disabled{0};   // webhooks disabled after failing that long
    // Seconds the oldest pending delivery of an active webhook has waited; 0: none waits.
    std::atomic<std::int64_t> queue_age_seconds{0};
};

}  // namespace refgate::metrics

namespace prometheus {
struct MetricFamily;
}

namespace refgate::metrics {
// refgate_webhook_deliveries_total{outcome}, refgate_webhooks_disabled_total,
// refgate_webhook_queue_age_seconds.
void collect_webhooks(const WebhookStats& stats, std::vector<prometheus::MetricFamily>& out);
}  // namespace refgate::metrics
