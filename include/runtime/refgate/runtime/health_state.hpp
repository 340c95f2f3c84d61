#pragma once

// What the background workers last saw of PostgreSQL and Redis, the drain flag /readyz answers
// from, and the few figures about them that /metrics shows.

#include <atomic>
#include <cstdint>
#include <string_view>

#include "refgate/runtime/figures.hpp"

namespace refgate::runtime {

enum class DependencyState { unknown, up, down };

inline std::string_view to_string(DependencyState state) {
    switch (state) {
        case DependencyState::up:
            return "up";
        case DependencyState::down:
            return "down";
        default:
            return "unknown";
    }
}

// What the background workers last saw of PostgreSQL and Redis; read by /readyz.
struct HealthState {
    std::atomic<DependencyState> postgres{DependencyState::unknown};
    std::atomic<DependencyState> redis{DependencyState::unknown};
    // Set at the first stop signal: /readyz answers 503 so that load balancers take the instance
    // out while its listeners still serve (drain_ms).
    std::atomic<bool> draining{false};
    // For /metrics.
    std::atomic<std::uint64_t> postgres_errors{0};           // failed connections or statements
    LatencyHistogram postgres_latency;                       // snapshot checks and flush commits
    std::atomic<std::uint64_t> snapshot_reload_failures{0};  // reloads that kept the old snapshot
    std::atomic<std::int64_t> snapshot_checked_at{0};  // unix s the snapshot was last confirmed
    // Whether the flusher's PostgreSQL has synchronous standbys (synchronous_standby_names set),
    // as seen at its last connect: 1 yes, 0 no, -1 not known yet.
    std::atomic<int> postgres_sync_replication{-1};
    // The stats roll-ups as the flusher last saw them: 1 complete (the stats read them), 0 being
    // built (the stats read the counts, slower), -1 not known yet.
    std::atomic<int> stats_rollups_complete{-1};
    // The targeting rules' country database: 1 loaded, 0 none (country rules skipped), -1 not
    // loaded yet.
    std::atomic<int> country_db{-1};
};

// Seconds since the snapshot was last confirmed current against PostgreSQL (loaded from it, or
// its version re-checked), as /readyz and refgate_snapshot_age_seconds report it. A snapshot never
// confirmed (loaded from the local file while PostgreSQL is away) counts from its loading.
inline std::int64_t snapshot_age_seconds(std::int64_t now, std::int64_t built_at,
                                         std::int64_t checked_at) {
    std::int64_t confirmed = checked_at > 0 ? checked_at : built_at;
    return now > confirmed ? now - confirmed : 0;
}

}  // namespace refgate::runtime
