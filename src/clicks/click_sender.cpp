#include <algorithm>
#include <cstdio>
#include <tuple>

#include "random_hex.hpp"
#include "refgate/clicks/click_pipeline.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::clicks {
namespace {

constexpr std::size_t kMaxFieldsPerBatch = 10'000;
constexpr std::chrono::seconds kSaltCheckInterval{30};
constexpr std::chrono::seconds kDropLogInterval{10};
constexpr std::chrono::seconds kOtherLogInterval{60};
// Batch vectors kept for reuse once the store confirmed their batch.
constexpr std::size_t kMaxSpareVectors = 8;

}  // namespace

ClickSender::ClickSender(ClickSenderOptions options, BucketStore& store,
                         std::vector<ClickShard*> shards, SaltBox& salts,
                         const domain::Clock& clock, runtime::HealthState& health,
                         metrics::ClickStats& stats)
    : options_(std::move(options)),
      store_(store),
      shards_(std::move(shards)),
      salts_(salts),
      clock_(clock),
      health_(health),
      stats_(stats),
      instance_id_(random_hex(8)),
      // Low, not idle: a kill -9 loses at most one window only while the sender keeps up, and
      // SCHED_IDLE gets no CPU at all beside any busy process (even at nice 19).
      worker_({.name = "rg-click-sender",
               .priority = runtime::BackgroundPriority::low,
               .interval = options_.window,
               .min_backoff = options_.window,
               .max_backoff = options_.window},
              [this] {
                  return send_round() ? runtime::RoundOutcome::done : runtime::RoundOutcome::failed;
              }) {}

ClickSender::~ClickSender() { stop(); }

void ClickSender::start() {
    replay_spill();
    started_ = true;
    worker_.start();
}

void ClickSender::stop() {
    if (!started_) return;
    started_ = false;
    worker_.stop();
    // The last round runs here, not on the worker's thread: that one runs at idle priority, and a
    // saturated machine must not hold up the shutdown (and with it the spill) behind other work.
    bool sent = send_round();
    if (!sent || !in_flight_.empty() || !pending_.empty()) spill();
}

std::string ClickSender::next_batch_id() {
    return instance_id_ + ":" + std::to_string(++sequence_);
}

bool ClickSender::send_round() {
    collect();
    Status sent = send_all();
    if (!sent) {
        report_failure(sent.fault());
        return false;
    }
    health_.redis = runtime::DependencyState::up;
    if (unreplicated_) runtime::log::info("redis_replicated");
    unreplicated_ = false;
    if (spill_on_disk_ && in_flight_.empty()) {
        std::remove(options_.spill_file.c_str());
        spill_on_disk_ = false;
        runtime::log::info("clicks_spill_replayed", {{"path", options_.spill_file}});
    }
    return true;
}

void ClickSender::report_failure(const Fault& fault) {
    if (fault.unreplicated) {
        // Redis is up and has the batches; they are resent (same ids) until replicas have them.
        stats_.redis_unreplicated_rounds.fetch_add(1, std::memory_order_relaxed);
        if (!unreplicated_) runtime::log::warn("redis_unreplicated", {{"error", fault.message}});
        unreplicated_ = true;
        return;
    }
    stats_.redis_errors.fetch_add(1, std::memory_order_relaxed);
    if (health_.redis.exchange(runtime::DependencyState::down) != runtime::DependencyState::down)
        runtime::log::warn("redis_unavailable", {{"error", fault.message}});
    stats_.dropped_samples.fetch_add(samples_.size(), std::memory_order_relaxed);
    samples_.clear();
}

// Moves the shards' counts into pending_, within the bound on distinct keys waiting for the store
// (those in pending_ and in unconfirmed batches, each counted once).
void ClickSender::collect() {
    keys_room_.fit(drained_.counts);
    samples_room_.fit(drained_.samples);
    std::erase_if(spare_counts_, [this](const BatchCounts& c) { return !keys_room_.fits(c); });
    drained_.samples_dropped = 0;
    drained_.capped = drained_.identifiers = 0;
    for (ClickShard* shard : shards_) shard->drain(drained_);
    keys_room_.note(drained_.counts.size());
    samples_room_.note(drained_.samples.size());
    std::span<const std::pair<domain::CounterKey, std::uint64_t>> drained(drained_.counts);
    for (std::size_t i = 0; i < drained.size(); i += runtime::CpuSlicer::kStepsPerSlice) {
        auto part = drained.subspan(
            i, std::min<std::size_t>(runtime::CpuSlicer::kStepsPerSlice, drained.size() - i));
        stats_.link_clicks.add(part);
        slicer_.step(static_cast<std::uint32_t>(part.size()));
    }
    std::uint64_t dropped = 0;
    if (in_flight_.empty() && pending_.empty() &&
        drained_.counts.size() <= options_.max_pending_keys) {
        // The usual window: the store took everything before, so what was drained becomes the
        // next batch as it is, without a hash map of its keys (only needed while the store lags).
        seal(drained_.counts);
    } else {
        index_in_flight_keys();
        for (const auto& [key, delta] : drained_.counts) {
            auto it = pending_.find(key);
            if (it != pending_.end()) {
                it->second += delta;
                continue;
            }
            bool known = in_flight_keys_.count(key) != 0;
            if (!known && in_flight_keys_.size() + pending_new_keys_ >= options_.max_pending_keys) {
                dropped += delta;
                continue;
            }
            pending_.emplace(key, delta);
            if (!known) ++pending_new_keys_;
        }
    }
    count_dropped(dropped);
    count_others(drained_.capped, drained_.identifiers);
    stats_.dropped_samples.fetch_add(drained_.samples_dropped, std::memory_order_relaxed);
    samples_.insert(samples_.end(), drained_.samples.begin(), drained_.samples.end());
    std::size_t in_flight_keys = in_flight_keys_.size();
    if (!in_flight_keys_indexed_) {
        in_flight_keys = 0;
        for (const auto& batch : in_flight_) in_flight_keys += batch.counts.size();
    }
    stats_.pending_keys.store(in_flight_keys + pending_new_keys_, std::memory_order_relaxed);
}

void ClickSender::count_dropped(std::uint64_t dropped) {
    if (dropped == 0) return;
    stats_.dropped_clicks.fetch_add(dropped, std::memory_order_relaxed);
    auto now = std::chrono::steady_clock::now();
    if (now < next_drop_log_) return;
    runtime::log::error("clicks_dropped", {{"clicks", dropped},
                                           {"total", stats_.dropped_clicks.load()},
                                           {"max_pending_keys", options_.max_pending_keys}});
    next_drop_log_ = now + kDropLogInterval;
}

// Clicks the I/O threads counted under "other" instead of their src: a metric, and a line at most
// once a minute (counts only; which channels were refused is not logged: they may name people).
void ClickSender::count_others(std::uint64_t capped, std::uint64_t identifiers) {
    if (capped == 0 && identifiers == 0) return;
    stats_.channels_capped.fetch_add(capped, std::memory_order_relaxed);
    stats_.channel_identifiers.fetch_add(identifiers, std::memory_order_relaxed);
    auto now = std::chrono::steady_clock::now();
    if (now < next_other_log_) return;
    runtime::log::warn("channels_capped", {{"capped_clicks", capped},
                                           {"identifier_clicks", identifiers},
                                           {"capped_total", stats_.channels_capped.load()},
                                           {"identifier_total", stats_.channel_identifiers.load()},
                                           {"where", "memory"}});
    next_other_log_ = now + kOtherLogInterval;
}

// A batch keeps its id and content until the store confirms it; new batches are made only once
// the previous ones are confirmed, so a resend never mixes old and new counts.
void ClickSender::seal_pending() {
    if (!in_flight_.empty() || pending_.empty()) return;
    auto counts = take_spare();
    counts.assign(pending_.begin(), pending_.end());
    seal(counts);
    spare_counts_.push_back(std::move(counts));
    // Only a lagging store fills these maps: their buckets go with them (at a million keys
    // waiting, 8 MiB of them).
    pending_ = {};
    pending_new_keys_ = 0;
}

// Turns `counts` into batches (of at most kMaxFieldsPerBatch) after the unconfirmed ones; leaves
// `counts` empty. Vectors are swapped with spare ones, so a steady window allocates nothing.
void ClickSender::seal(BatchCounts& counts) {
    if (counts.empty()) return;
    if (counts.size() <= kMaxFieldsPerBatch) {
        Batch batch{next_batch_id(), take_spare()};
        batch.counts.clear();
        batch.counts.swap(counts);
        in_flight_.push_back(std::move(batch));
    } else {
        for (std::size_t i = 0; i < counts.size(); i += kMaxFieldsPerBatch) {
            Batch batch{next_batch_id(), take_spare()};
            auto last = std::min(counts.size(), i + kMaxFieldsPerBatch);
            batch.counts.assign(counts.begin() + static_cast<std::ptrdiff_t>(i),
                                counts.begin() + static_cast<std::ptrdiff_t>(last));
            in_flight_.push_back(std::move(batch));
        }
        counts.clear();
    }
    in_flight_keys_indexed_ = false;
}

BatchCounts ClickSender::take_spare() {
    if (spare_counts_.empty()) return {};
    auto counts = std::move(spare_counts_.back());
    spare_counts_.pop_back();
    keys_room_.fit(counts);
    return counts;
}

// The store applied every unconfirmed batch: their vectors are kept for the next windows.
void ClickSender::confirm_in_flight() {
    for (auto& batch : in_flight_) {
        if (spare_counts_.size() < kMaxSpareVectors)
            spare_counts_.push_back(std::move(batch.counts));
    }
    in_flight_.clear();
    in_flight_keys_ = {};
    in_flight_keys_indexed_ = true;
}

void ClickSender::index_in_flight_keys() {
    if (in_flight_keys_indexed_) return;
    in_flight_keys_.clear();
    for (const auto& batch : in_flight_) {
        for (const auto& entry : batch.counts) in_flight_keys_.insert(entry.first);
    }
    in_flight_keys_indexed_ = true;
}

Status ClickSender::send_all() {
    Status status = check_durability();
    if (status) status = refresh_salts();
    // Samples before counts: once a click's count is in Redis its unique sample is too, so the
    // stats API's estimate never lags the counts it sits beside.
    if (status) status = send_samples();
    if (status) status = send_batches();
    if (!status) return status;
    stats_.pending_keys.store(pending_new_keys_, std::memory_order_relaxed);
    return done();
}

// Unconfirmed batches first, then what came since, in a second round trip.
Status ClickSender::send_batches() {
    for (int round = 0; round < 2 && (!in_flight_.empty() || !pending_.empty()); ++round) {
        seal_pending();
        auto sent_at = std::chrono::steady_clock::now();
        Status added = store_.add_batches(in_flight_, options_.bucket);
        if (!added) return added;
        stats_.redis_latency.observe(std::chrono::steady_clock::now() - sent_at);
        stats_.batches_sent.fetch_add(in_flight_.size(), std::memory_order_relaxed);
        confirm_in_flight();
    }
    return done();
}

Status ClickSender::send_samples() {
    if (samples_.empty()) return done();
    // Grouped by (day, link): one PFADD per HyperLogLog; a repeated hash adds nothing.
    auto order = [](const UniqueSample& a, const UniqueSample& b) {
        return std::tie(a.day, a.link_id, a.hash) < std::tie(b.day, b.link_id, b.hash);
    };
    auto same = [](const UniqueSample& a, const UniqueSample& b) {
        return a.day == b.day && a.link_id == b.link_id && a.hash == b.hash;
    };
    // Known samples are dropped before sorting: under steady traffic most are repeats, and the
    // sort is then over the few new ones.
    samples_.erase(std::remove_if(samples_.begin(), samples_.end(),
                                  [this](const UniqueSample& s) {
                                      slicer_.step();
                                      return sent_samples_.contains(s);
                                  }),
                   samples_.end());
    if (samples_.empty()) return done();
    std::sort(samples_.begin(), samples_.end(), order);
    samples_.erase(std::unique(samples_.begin(), samples_.end(), same), samples_.end());
    Status added = store_.add_samples(samples_);
    if (!added) return added;
    for (const auto& s : samples_) sent_samples_.insert(s);
    samples_room_.fit(samples_);
    return done();
}

// Today's and tomorrow's salt, by the clock's UTC day: the I/O threads never wait for a salt at
// midnight.
Status ClickSender::refresh_salts() {
    auto now = std::chrono::steady_clock::now();
    if (now < next_salt_check_) return done();
    std::int32_t today = domain::utc_day(clock_.unix_seconds());
    for (std::int32_t day : {today, today + 1}) {
        Result<SaltKey> salt = store_.daily_salt(day);
        if (!salt) return salt.fault();
        salts_.set(day, *salt);
    }
    if (!salts_loaded_) {
        // Until now unique estimates were not sampled and split rules drew with a key of this
        // process's own; from now on both use the fleet's daily salt.
        runtime::log::info("daily_salts_loaded", {{"day", today}});
        salts_loaded_ = true;
    }
    next_salt_check_ = now + kSaltCheckInterval;
    return done();
}

// Counts in a store that may forget what it acknowledged can be lost: said loudly when first seen
// and whenever it changes, and shown in /readyz.
Status ClickSender::check_durability() {
    Result<Durability> durability = store_.durability();
    if (!durability) return durability.fault();
    bool risky = durability->risky();
    stats_.redis_config_risky = risky;
    if (durability_risky_ == risky) return done();
    durability_risky_ = risky;
    if (!durability->known) {
        runtime::log::warn(
            "redis_config_unknown",
            {{"detail", "CONFIG GET refused; cannot check AOF and eviction policy"}});
    } else if (risky) {
        runtime::log::error("redis_config_risky",
                            {{"appendonly", durability->appendonly},
                             {"maxmemory_policy", durability->eviction_policy},
                             {"detail",
                              "counts can be lost: run Redis with appendonly yes and "
                              "maxmemory-policy noeviction"}});
    }
    return done();
}

}  // namespace refgate::clicks
