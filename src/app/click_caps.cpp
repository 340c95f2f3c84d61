#include "click_caps.hpp"

#include <vector>

#include "refgate/runtime/log.hpp"

namespace refgate::app {

ClickCapWorker::ClickCapWorker(runtime::SnapshotStore& snapshots, admin::StatsStore& stats,
                               std::chrono::milliseconds refresh)
    : snapshots_(snapshots),
      stats_(stats),
      refresh_(refresh),
      worker_(
          {.name = "rg-click-caps",
           .priority = runtime::BackgroundPriority::low,
           .interval = kCapApplyTick,
           .min_backoff = refresh,
           .max_backoff = 8 * refresh,
           .idle_tick = kCapApplyTick},
          [this] { return round(); }, [this] { carry_over(); }) {}

void ClickCapWorker::carry_over() {
    std::uint64_t generation = snapshots_.generation();
    if (generation == applied_generation_ || !counted_) return;
    if (auto snapshot = snapshots_.current()) apply(*snapshot);
    applied_generation_ = generation;
}

void ClickCapWorker::apply(const domain::Snapshot& snapshot) {
    auto flags = snapshots_.cap_flags().current();
    if (flags != nullptr && flags->fits(snapshot)) {
        flags->apply(totals_);
        return;
    }
    // Made whole before it is published: no redirect sees it without the last verdicts.
    auto fresh = std::make_shared<runtime::CapFlags>(snapshot);
    fresh->apply(totals_);
    snapshots_.cap_flags().publish(std::move(fresh));
}

runtime::RoundOutcome ClickCapWorker::round() {
    std::uint64_t generation = snapshots_.generation();
    auto snapshot = snapshots_.current();
    if (snapshot == nullptr || snapshot->caps().empty()) {
        // No link has a cap: no flags are kept for links that had one.
        if (snapshots_.cap_flags().current() != nullptr) snapshots_.cap_flags().publish(nullptr);
        applied_generation_ = generation;
        return runtime::RoundOutcome::done;
    }
    auto now = std::chrono::steady_clock::now();
    if (counted_ && now - counted_at_ < refresh_) {
        // Between counts: a snapshot published since gets the last verdicts at once.
        carry_over();
        return runtime::RoundOutcome::done;
    }
    std::vector<std::int64_t> ids;
    ids.reserve(snapshot->caps().size());
    for (const auto& cap : snapshot->caps()) ids.push_back(cap.link_id);
    try {
        totals_ = stats_.human_totals(ids);
    } catch (const std::exception& e) {
        // The flags stay as they were (and a snapshot published meanwhile gets them, the idle
        // duty's carry_over()): a cap reached stays reached, one not yet reached is found when
        // Redis and PostgreSQL answer again.
        runtime::log::warn("click_caps_failed", {{"error", e.what()}});
        return runtime::RoundOutcome::failed;
    }
    counted_ = true;
    counted_at_ = now;
    apply(*snapshot);
    applied_generation_ = generation;
    return runtime::RoundOutcome::done;
}

}  // namespace refgate::app
