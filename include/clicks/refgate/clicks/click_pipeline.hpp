#pragma once

// How counts move: in-process shards --(every window, pipelined)--> Redis time buckets
// --(every flush interval, closed buckets only, exactly once)--> PostgreSQL.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "refgate/clicks/click_shard.hpp"
#include "refgate/clicks/resp.hpp"
#include "refgate/clicks/salts.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/metrics/click_stats.hpp"
#include "refgate/metrics/health.hpp"
#include "refgate/redis/redis_client.hpp"
#include "refgate/runtime/background_thread.hpp"

namespace refgate::clicks {

struct ClickSenderOptions {
    redis::RedisAddress redis;
    std::chrono::milliseconds window{250};
    std::chrono::seconds bucket{10};
    std::size_t max_pending_keys = 1'000'000;
    std::string spill_file;  // empty: no spill (counts still in memory at stop are lost, loudly)
};

// Sends the shards' counts to Redis every window, in one pipelined round trip, each batch with an
// id that Redis records, so a batch retried after a lost reply is never applied twice. While
// Redis is down, counts wait in memory up to max_pending_keys; past that they are dropped and
// counted. stop() sends what is left, or writes it to the spill file, which start() replays.
class ClickSender {
  public:
    ClickSender(ClickSenderOptions options, std::vector<ClickShard*> shards, SaltBox& salts,
                HealthState& health, ClickStats& stats);
    ~ClickSender();
    ClickSender(const ClickSender&) = delete;
    ClickSender& operator=(const ClickSender&) = delete;

    void start();
    void stop();

  private:
    struct Batch {
        std::string id;
        // A key may appear twice (drained from two shards): Redis adds both deltas.
        std::vector<std::pair<CounterKey, std::uint64_t>> counts;
    };

    void run();
    bool send_round();  // collect() and send_all(): false when Redis failed
    void collect();
    void seal_pending();
    void seal(std::vector<std::pair<CounterKey, std::uint64_t>>& counts);
    std::vector<std::pair<CounterKey, std::uint64_t>> take_spare();
    void confirm_in_flight();
    void index_in_flight_keys();
    bool send_all();  // false when Redis failed
    void send_samples(redis::RedisConnection& redis);
    void refresh_salts(redis::RedisConnection& redis);
    void check_redis_config(redis::RedisConnection& redis);
    redis::RedisConnection* connection();
    void spill();
    void replay_spill();
    std::string next_batch_id();

    ClickSenderOptions options_;
    std::vector<ClickShard*> shards_;
    SaltBox& salts_;
    HealthState& health_;
    ClickStats& stats_;
    std::string instance_id_;
    std::uint64_t sequence_ = 0;

    DrainedClicks drained_;
    std::unordered_map<CounterKey, std::uint64_t, CounterKeyHash> pending_;
    std::deque<Batch> in_flight_;
    // The keys of in_flight_, built only when Redis did not take them at once (the bound on
    // distinct keys waiting needs it then); valid while in_flight_keys_indexed_.
    std::unordered_set<CounterKey, CounterKeyHash> in_flight_keys_;
    bool in_flight_keys_indexed_ = true;
    std::vector<std::vector<std::pair<CounterKey, std::uint64_t>>> spare_counts_;
    CpuSlicer slicer_;  // long loops of a window give the CPU to the I/O threads now and then
    RespWriter writer_;
    std::string batch_text_;  // a batch's counts as Redis keeps them (reused)
    std::vector<redis::Reply> replies_;
    std::size_t pending_new_keys_ = 0;  // keys in pending_ that no unconfirmed batch holds
    std::vector<UniqueSample> samples_;
    SentSamples sent_samples_;
    std::unique_ptr<redis::RedisConnection> redis_;
    bool config_checked_ = false;
    bool spill_on_disk_ = false;
    std::chrono::steady_clock::time_point next_salt_check_{};
    std::chrono::steady_clock::time_point next_drop_log_{};

    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

struct FlusherOptions {
    redis::RedisAddress redis;
    std::string database_url;
    std::chrono::milliseconds interval{5'000};
    std::chrono::seconds bucket{10};
    ClickStats* stats = nullptr;    // flush figures for /metrics; none for `refgate flush`
    HealthState* health = nullptr;  // PostgreSQL errors and latency
};

struct FlushResult {
    std::size_t buckets = 0;          // applied to PostgreSQL
    std::size_t skipped_buckets = 0;  // already applied before (e.g. replayed from the AOF)
    std::size_t counters = 0;
    std::uint64_t clicks = 0;
    std::size_t unique_estimates = 0;
    bool busy = false;  // another instance was flushing
};

// Moves every closed Redis bucket into PostgreSQL, exactly once per bucket (the bucket id is
// recorded in the same transaction as the counts), then deletes it from Redis. With
// `close_current`, the bucket being filled is closed first, so everything counted before the call
// is moved. Throws redis::RedisError or std::runtime_error (PostgreSQL) on failure.
FlushResult flush_once(const FlusherOptions& options, bool close_current);

// The same over connections kept from one flush to the next (opened when missing). After a
// failure they are dropped, which also ends the flush's session lock, and opened again next time.
struct FlushConnections;
FlushResult flush_once(const FlusherOptions& options, bool close_current,
                       FlushConnections& connections);

// flush_once every interval on a thread of its own; failures are logged and retried.
class ClickFlusher {
  public:
    explicit ClickFlusher(FlusherOptions options);
    ~ClickFlusher();
    void start();
    void stop();

  private:
    void run();

    FlusherOptions options_;
    std::unique_ptr<FlushConnections> connections_;  // used by the flusher's thread only
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace refgate::clicks
