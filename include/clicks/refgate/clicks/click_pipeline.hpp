#pragma once

// How counts move: in-process shards --(every window, one round trip)--> the bucket store
// --(every flush interval, closed buckets only, exactly once)--> the count sink (PostgreSQL).
// The sender and the flusher are state machines over the BucketStore and CountSink interfaces;
// each runs its rounds on a PeriodicWorker.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "refgate/clicks/bucket_store.hpp"
#include "refgate/clicks/click_shard.hpp"
#include "refgate/clicks/count_sink.hpp"
#include "refgate/clicks/result.hpp"
#include "refgate/clicks/salts.hpp"
#include "refgate/domain/clock.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/metrics/click_stats.hpp"
#include "refgate/runtime/background_thread.hpp"
#include "refgate/runtime/health_state.hpp"
#include "refgate/runtime/periodic_worker.hpp"
#include "refgate/runtime/recent_room.hpp"

namespace refgate::clicks {

struct ClickSenderOptions {
    std::chrono::milliseconds window{250};
    std::chrono::seconds bucket{10};
    std::size_t max_pending_keys = 1'000'000;
    std::string spill_file;  // empty: no spill (counts still in memory at stop are lost, loudly)
};

// Sends the shards' counts to the store every window, in one round trip, each batch with an id
// that the store records, so a batch resent after a lost reply is never applied twice. While the
// store is down, counts wait in memory up to max_pending_keys; past that they are dropped and
// counted. stop() sends what is left, or writes it to the spill file, which start() replays.
class ClickSender {
  public:
    ClickSender(ClickSenderOptions options, BucketStore& store, std::vector<ClickShard*> shards,
                SaltBox& salts, const domain::Clock& clock, runtime::HealthState& health,
                metrics::ClickStats& stats);
    ~ClickSender();
    ClickSender(const ClickSender&) = delete;
    ClickSender& operator=(const ClickSender&) = delete;

    void start();
    void stop();
    // One round, as the worker runs it every window: drain the shards, send. False when the
    // store failed (the counts wait for the next round).
    bool send_round();

  private:
    void collect();
    void count_dropped(std::uint64_t dropped);
    void count_others(std::uint64_t capped, std::uint64_t identifiers);
    void seal_pending();
    void seal(BatchCounts& counts);
    BatchCounts take_spare();
    void confirm_in_flight();
    void index_in_flight_keys();
    Status send_all();
    Status send_batches();
    Status send_samples();
    Status refresh_salts();
    Status check_durability();
    void report_failure(const Fault& fault);
    void spill();
    void replay_spill();
    std::string next_batch_id();

    ClickSenderOptions options_;
    BucketStore& store_;
    std::vector<ClickShard*> shards_;
    SaltBox& salts_;
    const domain::Clock& clock_;
    runtime::HealthState& health_;
    metrics::ClickStats& stats_;
    std::string instance_id_;
    std::uint64_t sequence_ = 0;

    DrainedClicks drained_;
    std::unordered_map<domain::CounterKey, std::uint64_t, domain::CounterKeyHash> pending_;
    std::vector<Batch> in_flight_;
    // The keys of in_flight_, built only when the store did not take them at once (the bound on
    // distinct keys waiting needs it then); valid while in_flight_keys_indexed_.
    std::unordered_set<domain::CounterKey, domain::CounterKeyHash> in_flight_keys_;
    bool in_flight_keys_indexed_ = true;
    std::vector<BatchCounts> spare_counts_;
    runtime::CpuSlicer
        slicer_;  // long loops of a window give the CPU to the I/O threads now and then
    std::size_t pending_new_keys_ = 0;  // keys in pending_ that no unconfirmed batch holds
    std::vector<UniqueSample> samples_;
    // What recent windows drained: the counts vectors (drained_, the batches, the spares) and the
    // sample vectors keep that much room, not the busiest window's.
    runtime::RecentRoom keys_room_;
    runtime::RecentRoom samples_room_;
    SentSamples sent_samples_;
    std::optional<bool> durability_risky_;  // as last reported
    bool spill_on_disk_ = false;
    bool unreplicated_ = false;  // the last round's batches lacked replica acknowledgements
    bool started_ = false;
    std::chrono::steady_clock::time_point next_salt_check_{};
    bool salts_loaded_ = false;  // logged once: from then on uniques and splits use the shared key
    std::chrono::steady_clock::time_point next_drop_log_{};
    std::chrono::steady_clock::time_point next_other_log_{};
    runtime::PeriodicWorker worker_;  // last: stopped before the members its rounds use go
};

struct FlusherOptions {
    std::chrono::seconds bucket{10};
    metrics::ClickStats* stats = nullptr;    // flush figures for /metrics; none for `refgate flush`
    runtime::HealthState* health = nullptr;  // PostgreSQL errors and latency
};

struct FlushResult {
    std::size_t buckets = 0;          // applied to PostgreSQL
    std::size_t skipped_buckets = 0;  // already applied before (e.g. replayed from the AOF)
    std::size_t counters = 0;
    std::uint64_t clicks = 0;
    std::size_t unique_estimates = 0;
    // Moved to the channel "other" past the per-link daily channel cap (channel_cap.hpp).
    std::uint64_t capped_clicks = 0;
    std::size_t capped_channels = 0;
    bool busy = false;  // another instance was flushing
};

// Moves every closed bucket into the sink, exactly once per bucket: the bucket id is recorded in
// the same transaction as its counts, and a bucket recorded before is not applied again (only
// what an early-flushed bucket gained since). A bucket leaves the store only after its commit.
// With `close_current`, the bucket being filled is closed first, so everything counted before the
// call is moved.
class Flusher {
  public:
    Flusher(BucketStore& store, CountSink& sink, FlusherOptions options);
    Result<FlushResult> flush(bool close_current);

  private:
    Result<FlushResult> flush_locked(bool close_current);
    Status move_bucket(std::int64_t bucket, bool early, FlushResult& result);
    Status move_estimates(FlushResult& result);
    void record_backlog();

    BucketStore& store_;
    CountSink& sink_;
    FlusherOptions options_;
};

// What an early-flushed bucket gained since it was applied: per field, what exceeds `before` (the
// counts recorded at the early flush). Nothing when nothing was recorded: a bucket flushed after
// its time span cannot have grown.
BucketCounts growth_since(const BucketCounts& before, const BucketCounts& now);

// Flusher::flush every interval on a worker thread; failures are counted against the dependency
// that failed, logged once, and retried.
class ClickFlusher {
  public:
    ClickFlusher(BucketStore& store, CountSink& sink, FlusherOptions options,
                 std::chrono::milliseconds interval);
    void start();
    void stop();
    // One round, as the worker runs it.
    runtime::RoundOutcome flush_round();

  private:
    Flusher flusher_;
    FlusherOptions options_;
    bool failing_ = false;
    std::chrono::steady_clock::time_point next_cap_log_{};
    runtime::PeriodicWorker worker_;  // last: stopped before the members its rounds use go
};

}  // namespace refgate::clicks
