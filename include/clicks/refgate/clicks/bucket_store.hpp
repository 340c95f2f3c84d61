#pragma once

// Where counts wait between the instances and PostgreSQL: time buckets whose identity the store
// chooses from its own clock, kept monotonic, so that no batch can land in a bucket that was
// already closed and flushed (DESIGN.md, guarantee 3). One implementation talks to Redis
// (redis_bucket_store.hpp) and holds every Redis key and script; tests use a fake.

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "refgate/clicks/click_shard.hpp"
#include "refgate/clicks/result.hpp"
#include "refgate/clicks/salts.hpp"
#include "refgate/domain/counter_key.hpp"

namespace refgate::clicks {

// A unique estimate is kept this many days after its last change: long enough for the flusher to
// read it after midnight and for the stats API to answer recent days from it.
constexpr std::int32_t kUniqueRetentionDays = 3;

// A key may appear twice (drained from two shards): each delta is added.
using BatchCounts = std::vector<std::pair<domain::CounterKey, std::uint64_t>>;

// An instance's counts of one window. The id is unique across instances and kept on every resend,
// so the store applies a batch once however often it is sent.
struct Batch {
    std::string id;
    BatchCounts counts;
};

// A bucket's counts: counter field ("42|2026-11-29|newsletter|human") -> clicks, each field once.
using BucketCounts = std::vector<std::pair<std::string, std::uint64_t>>;

struct ClosedBuckets {
    std::int64_t store_now = 0;     // the store's clock (unix s) when they were closed
    std::vector<std::int64_t> ids;  // closed buckets still waiting, oldest first
};

struct UniqueEstimate {
    std::int64_t link_id = 0;
    std::int32_t day = 0;
    std::uint64_t estimate = 0;
};

// What GET /api/v1/stats/live answers from, kept by the sender beside each batch (short-lived
// Redis keys; the store's clock): human clicks per link in 10-second slots kept 330 s, and clicks
// per class per hour kept 50 h.
struct LiveCounts {
    std::int64_t store_now = 0;  // the store's clock (unix s)
    std::int64_t window_seconds = 0;
    // Human clicks per link over the last `window_seconds` (its 10-second slots), by link id.
    std::vector<std::pair<std::int64_t, std::uint64_t>> human_by_link;
    // Per class in kClickClasses' order: today (UTC, by the store's clock) so far, and yesterday
    // over the same hours (its hour in progress in proportion to the part of this hour gone).
    std::array<std::uint64_t, 4> today{};
    std::array<std::uint64_t, 4> yesterday_same_hours{};
};

// Whether the store keeps what it acknowledged (Redis: AOF on, no eviction).
struct Durability {
    bool known = false;  // false: the store would not say
    std::string appendonly;
    std::string eviction_policy;
    bool risky() const { return !known || appendonly != "yes" || eviction_policy != "noeviction"; }
};

class BucketStore {
  public:
    virtual ~BucketStore() = default;

    // The sender's side. Adds every batch to the current bucket (`bucket` long), skipping any
    // batch whose id was added before: one round trip. A fault leaves it unknown which were added.
    virtual Status add_batches(std::span<const Batch> batches, std::chrono::seconds bucket) = 0;
    // Feeds unique samples (sorted by day and link, no repeats) to their daily estimates.
    virtual Status add_samples(const std::vector<UniqueSample>& samples) = 0;
    // The salt of a UTC day, shared by every instance: the first one to ask creates it.
    virtual Result<SaltKey> daily_salt(std::int32_t day) = 0;
    virtual Result<Durability> durability() = 0;

    // The flusher's side. Closes every bucket older than the current one (and the current one
    // with `include_current`): nothing is added to a closed bucket.
    virtual Result<ClosedBuckets> close_buckets(std::chrono::seconds bucket,
                                                bool include_current) = 0;
    virtual Result<BucketCounts> read_bucket(std::int64_t id) = 0;
    virtual Status delete_bucket(std::int64_t id) = 0;
    // Buckets not yet flushed (closed or not), in no order.
    virtual Result<std::vector<std::int64_t>> pending_buckets() = 0;
    // Takes up to `max` estimates that changed since they were last taken.
    virtual Result<std::vector<UniqueEstimate>> take_changed_estimates(std::size_t max) = 0;
    // Marks estimates as changed again (their write to PostgreSQL failed).
    virtual Status mark_changed(const std::vector<UniqueEstimate>& estimates) = 0;

    // The stats API's side: the live figures (a store without them says so with a fault).
    virtual Result<LiveCounts> live_counts() {
        return Fault{Dependency::redis, "no live figures in this store"};
    }
    // A link's unique estimate for each of `days` (0: none kept).
    virtual Result<std::vector<std::uint64_t>> unique_estimates(
        std::int64_t link_id, const std::vector<std::int32_t>& days) = 0;
    // The same for many links: out[i] is links[i]'s. A store may ask for them together.
    virtual Result<std::vector<std::vector<std::uint64_t>>> unique_estimates(
        const std::vector<std::int64_t>& links, const std::vector<std::int32_t>& days) {
        std::vector<std::vector<std::uint64_t>> out;
        out.reserve(links.size());
        for (std::int64_t link : links) {
            auto one = unique_estimates(link, days);
            if (!one) return one.fault();
            out.push_back(std::move(*one));
        }
        return out;
    }
};

}  // namespace refgate::clicks
