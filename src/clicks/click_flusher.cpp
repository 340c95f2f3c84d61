#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "fault_points.hpp"
#include "refgate/clicks/click_pipeline.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::clicks {
namespace {

// Early-flush records are kept this long (s) after their bucket: by then the store can no longer
// hand out the bucket's id.
constexpr std::int64_t kEarlyCountsKept = 86'400;
constexpr std::size_t kEstimatesPerFlush = 10'000;

std::uint64_t total_clicks(const BucketCounts& counts) {
    std::uint64_t total = 0;
    // A targeting counter ("42|day|@DE:3|human") counts a click its channel counter counted.
    for (const auto& [field, n] : counts)
        if (field.find("|@") == std::string::npos) total += n;
    return total;
}

}  // namespace

BucketCounts growth_since(const BucketCounts& before, const BucketCounts& now) {
    if (before.empty()) return {};
    std::unordered_map<std::string_view, std::uint64_t> had;
    for (const auto& [field, n] : before) had[field] = n;
    BucketCounts growth;
    for (const auto& [field, n] : now) {
        auto it = had.find(field);
        std::uint64_t old = it == had.end() ? 0 : it->second;
        if (n > old) growth.emplace_back(field, n - old);
    }
    return growth;
}

Flusher::Flusher(BucketStore& store, CountSink& sink, FlusherOptions options)
    : store_(store), sink_(sink), options_(options) {}

Result<FlushResult> Flusher::flush(bool close_current) {
    Result<bool> locked = sink_.try_lock();
    if (!locked) return locked.fault();
    if (!*locked) {
        record_backlog();
        FlushResult busy;
        busy.busy = true;
        return busy;
    }
    auto result = flush_locked(close_current);
    sink_.unlock();
    return result;
}

Result<FlushResult> Flusher::flush_locked(bool close_current) {
    FlushResult result;
    Result<ClosedBuckets> closed = store_.close_buckets(options_.bucket, close_current);
    if (!closed) return closed.fault();
    bool first = true;
    for (std::int64_t bucket : closed->ids) {
        if (!first) REFGATE_FAULT_POINT("between_buckets");
        first = false;
        // Closed before its time span ended: the store could still hand out this id again.
        bool early = bucket + options_.bucket.count() > closed->store_now;
        Status moved = move_bucket(bucket, early, result);
        if (!moved) return moved.fault();
    }
    Status forgotten = sink_.forget_early_counts_before(closed->store_now - kEarlyCountsKept);
    if (!forgotten) return forgotten.fault();
    Status estimates = move_estimates(result);
    if (!estimates) return estimates.fault();
    Status upkeep = sink_.maintain();
    if (!upkeep) return upkeep.fault();
    record_backlog();
    return result;
}

// One bucket, one transaction: the bucket's record and its counts commit together, and the bucket
// leaves the store only after that commit. A bucket recorded before (its delete lost, or the store
// brought it back) adds only what it gained since an early flush: nothing for any other bucket.
Status Flusher::move_bucket(std::int64_t bucket, bool early, FlushResult& result) {
    Result<BucketCounts> content = store_.read_bucket(bucket);
    if (!content) return content.fault();
    auto started = std::chrono::steady_clock::now();
    auto tx = sink_.begin();
    if (!tx) return tx.fault();
    CountTransaction& t = **tx;
    Result<bool> first_time = t.record_bucket(bucket, content->size(), total_clicks(*content));
    if (!first_time) return first_time.fault();
    BucketCounts growth;
    const BucketCounts* counts = &*content;
    if (!*first_time) {
        Result<BucketCounts> before = t.early_counts(bucket);
        if (!before) return before.fault();
        growth = growth_since(*before, *content);
        counts = &growth;
    }
    if (*first_time || !counts->empty()) {
        Result<AddedCounts> added = t.add_counts(bucket, *counts);
        if (!added) return added.fault();
        if (early || !*first_time) {
            Status remembered = t.remember_early_counts(bucket, *content);
            if (!remembered) return remembered;
        }
        REFGATE_FAULT_POINT("before_commit");
        Status committed = t.commit();
        if (!committed) return committed;
        if (options_.health != nullptr)
            options_.health->postgres_latency.observe(std::chrono::steady_clock::now() - started);
        REFGATE_FAULT_POINT("after_commit");
        ++result.buckets;
        result.counters += added->counters;
        result.clicks += added->clicks;
        result.capped_clicks += added->capped.clicks;
        result.capped_channels += added->capped.channels;
    } else {
        ++result.skipped_buckets;
        runtime::log::warn("bucket_already_flushed", {{"bucket", bucket}});
    }
    tx->reset();  // rolls back what was not committed
    return store_.delete_bucket(bucket);
}

Status Flusher::move_estimates(FlushResult& result) {
    auto changed = store_.take_changed_estimates(kEstimatesPerFlush);
    if (!changed) return changed.fault();
    if (changed->empty()) return done();
    Status written = sink_.set_unique_estimates(*changed);
    if (!written) {
        // Put back for the next round: an estimate is only ever overwritten by a newer one.
        static_cast<void>(store_.mark_changed(*changed));
        return written;
    }
    result.unique_estimates += changed->size();
    return done();
}

// For the flush-lag metric: the start of the oldest bucket still in the store (a read-only look;
// a failure leaves the figure as it was).
void Flusher::record_backlog() {
    if (options_.stats == nullptr) return;
    auto pending = store_.pending_buckets();
    if (!pending) return;
    std::int64_t oldest = -1;
    if (!pending->empty()) oldest = *std::min_element(pending->begin(), pending->end());
    options_.stats->oldest_unflushed.store(oldest, std::memory_order_relaxed);
}

ClickFlusher::ClickFlusher(BucketStore& store, CountSink& sink, FlusherOptions options,
                           std::chrono::milliseconds interval)
    : flusher_(store, sink, options),
      options_(options),
      worker_({.name = "rg-flusher",
               .priority = runtime::BackgroundPriority::idle,
               .interval = interval,
               .min_backoff = interval,
               .max_backoff = interval,
               .first_round_at_once = false},
              [this] { return flush_round(); }) {}

void ClickFlusher::start() { worker_.start(); }

void ClickFlusher::stop() { worker_.stop(); }

runtime::RoundOutcome ClickFlusher::flush_round() {
    auto started = std::chrono::steady_clock::now();
    Result<FlushResult> r = flusher_.flush(false);
    if (!r) {
        const Fault& fault = r.fault();
        if (options_.stats != nullptr && fault.unreplicated) {
            // The round is skipped: the replicas lag behind the "closed" fence.
            options_.stats->redis_unreplicated_rounds.fetch_add(1, std::memory_order_relaxed);
        } else if (options_.stats != nullptr) {
            options_.stats->flush_failures.fetch_add(1, std::memory_order_relaxed);
            if (fault.dependency == Dependency::redis)
                options_.stats->redis_errors.fetch_add(1, std::memory_order_relaxed);
        }
        if (fault.dependency == Dependency::postgres && options_.health != nullptr)
            options_.health->postgres_errors.fetch_add(1, std::memory_order_relaxed);
        // Nothing is lost: buckets stay in the store until PostgreSQL has them.
        if (!failing_) runtime::log::warn("flush_failed", {{"error", fault.message}});
        failing_ = true;
        return runtime::RoundOutcome::failed;
    }
    if (options_.stats != nullptr) {
        options_.stats->channels_capped.fetch_add(r->capped_clicks, std::memory_order_relaxed);
        options_.stats->flush_buckets.fetch_add(r->buckets, std::memory_order_relaxed);
        options_.stats->flush_rows.fetch_add(r->counters, std::memory_order_relaxed);
        if (!r->busy)
            options_.stats->flush_duration.observe(std::chrono::steady_clock::now() - started);
    }
    if (r->buckets > 0 || r->skipped_buckets > 0) {
        runtime::log::info("flushed", {{"buckets", r->buckets},
                                       {"skipped_buckets", r->skipped_buckets},
                                       {"counters", r->counters},
                                       {"clicks", r->clicks},
                                       {"unique_estimates", r->unique_estimates}});
    }
    if (r->capped_clicks > 0 && started >= next_cap_log_) {
        // Several instances each kept within the cap in memory, together past it: the rest
        // counts as "other" (counts only in the line; the channels may name people).
        runtime::log::warn("channels_capped", {{"capped_clicks", r->capped_clicks},
                                               {"capped_channels", r->capped_channels},
                                               {"where", "flush"}});
        next_cap_log_ = started + std::chrono::minutes(1);
    }
    if (failing_) runtime::log::info("flush_recovered");
    failing_ = false;
    return runtime::RoundOutcome::done;
}

}  // namespace refgate::clicks
