#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>

#include "refgate/domain/click_classifier.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/metrics/metrics.hpp"

namespace refgate::metrics {

// Clicks by (link, class) since the exporter last took them; the sender adds every drained delta
// once per window, so the I/O threads never touch it.
class LinkClickTotals {
  public:
    using Classes = std::array<std::uint64_t, domain::kClickClassCount>;  // in ClickClass order
    void add(std::span<const std::pair<domain::CounterKey, std::uint64_t>> counts) {
        if (counts.empty()) return;
        std::lock_guard lock(mutex_);
        for (const auto& [key, n] : counts) {
            // A targeting counter (by country and rule) counts a click its channel counter did.
            if (key.click_class < domain::kClickClassCount && !key.is_targeting())
                totals_[key.link_id][key.click_class] += n;
        }
    }
    // Hands over what was added since the last take.
    std::unordered_map<std::int64_t, Classes> take() {
        std::lock_guard lock(mutex_);
        std::unordered_map<std::int64_t, Classes> out;
        out.swap(totals_);
        return out;
    }

  private:
    std::mutex mutex_;
    std::unordered_map<std::int64_t, Classes> totals_;
};

// What the counting pipeline reports about itself (for /readyz and, later, metrics).
struct ClickStats {
    std::atomic<std::uint64_t> pending_keys{0};     // waiting for Redis
    std::atomic<std::uint64_t> dropped_clicks{0};   // past the pending bound
    std::atomic<std::uint64_t> dropped_samples{0};  // unique samples not fed to Redis
    // Clicks counted under the channel "other": past the per-link daily channel cap (in memory or
    // by the flusher), or for a src that looked like an e-mail address or an identifier.
    std::atomic<std::uint64_t> channels_capped{0};
    std::atomic<std::uint64_t> channel_identifiers{0};
    std::atomic<std::uint64_t> batches_sent{0};
    std::atomic<std::uint64_t> redis_errors{0};
    std::atomic<std::uint64_t> redis_master_switches{0};  // +switch-master seen by the watcher
    // Send or flush rounds that fewer replicas acknowledged than REFGATE_REDIS_MIN_REPLICAS_ACKED
    std::atomic<std::uint64_t> redis_unreplicated_rounds{0};
    std::atomic<bool> redis_config_risky{false};
    // For /metrics.
    runtime::LatencyHistogram redis_latency;       // the sender's pipelined round trips
    std::atomic<std::uint64_t> flush_buckets{0};   // buckets applied to PostgreSQL
    std::atomic<std::uint64_t> flush_rows{0};      // counter rows upserted
    std::atomic<std::uint64_t> flush_failures{0};  // flush rounds that failed
    runtime::LatencyHistogram flush_duration{runtime::kFlushDurationBounds};  // whole flush rounds
    std::atomic<std::int64_t> oldest_unflushed{
        -1};                      // start (unix s) of the oldest bucket; -1: none
    LinkClickTotals link_clicks;  // clicks by link and class, for partners
};

}  // namespace refgate::metrics
