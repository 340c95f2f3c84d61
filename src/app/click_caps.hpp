#pragma once

// Click caps (issue 44), off the redirect path: every instance counts the capped links' human
// clicks across the fleet (flushed in PostgreSQL plus still in Redis, as the stats answers do)
// each refresh interval, and sets the per-link flags (runtime/cap_flags.hpp, published beside the
// snapshot) that the redirect reads with one atomic load. A snapshot published in between keeps
// the last verdicts of the links it shares with the one before (the flags are keyed by link id),
// and gets flags of its own caps, with the last verdicts, within kCapApplyTick.

#include <chrono>
#include <cstdint>
#include <unordered_map>

#include "refgate/admin/stats_store.hpp"
#include "refgate/runtime/periodic_worker.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace refgate::app {

// How often the capped links' clicks are counted.
constexpr std::chrono::milliseconds kClickCapRefresh{1'000};
// How often a newly published snapshot is looked for, to copy the last verdicts onto it.
constexpr std::chrono::milliseconds kCapApplyTick{100};

class ClickCapWorker {
  public:
    ClickCapWorker(runtime::SnapshotStore& snapshots, admin::StatsStore& stats,
                   std::chrono::milliseconds refresh);
    void start() { worker_.start(); }
    void stop() { worker_.stop(); }

  private:
    runtime::RoundOutcome round();
    // Sets the last count's verdicts on a snapshot published since they were last set.
    void carry_over();
    // Sets the last count's verdicts on flags for `snapshot`'s caps: the published ones when
    // they fit its caps, else new ones, published.
    void apply(const domain::Snapshot& snapshot);

    runtime::SnapshotStore& snapshots_;
    admin::StatsStore& stats_;
    std::chrono::milliseconds refresh_;
    std::chrono::steady_clock::time_point counted_at_{};
    std::uint64_t applied_generation_ = 0;
    bool counted_ = false;
    std::unordered_map<std::int64_t, std::uint64_t> totals_;  // the last count, by link id
    runtime::PeriodicWorker worker_;
};

}  // namespace refgate::app
