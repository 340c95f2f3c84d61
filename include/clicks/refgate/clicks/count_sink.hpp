#pragma once

// Where counts end: the system of record (PostgreSQL, pg_count_sink.hpp; a fake in tests). The
// flusher decides what to apply; the sink offers the transaction that makes a bucket's record and
// its counts one atomic step.

#include <cstdint>
#include <memory>
#include <vector>

#include "refgate/clicks/bucket_store.hpp"
#include "refgate/clicks/channel_cap.hpp"
#include "refgate/clicks/result.hpp"

namespace refgate::clicks {

struct AddedCounts {
    std::size_t counters = 0;  // the counter fields that parsed (others are logged and skipped)
    std::uint64_t clicks = 0;
    ChannelFold capped;  // moved to the channel "other" past the per-link daily channel cap
};

// One transaction: nothing of it is visible unless commit() succeeds; dropped, it rolls back.
class CountTransaction {
  public:
    virtual ~CountTransaction() = default;
    // Records that `bucket` is applied; false when it was recorded before.
    virtual Result<bool> record_bucket(std::int64_t bucket, std::size_t counters,
                                       std::uint64_t clicks) = 0;
    // The counts an early-flushed bucket held when it was applied (empty for any other bucket).
    virtual Result<BucketCounts> early_counts(std::int64_t bucket) = 0;
    virtual Status remember_early_counts(std::int64_t bucket, const BucketCounts& counts) = 0;
    virtual Result<AddedCounts> add_counts(std::int64_t bucket, const BucketCounts& counts) = 0;
    virtual Status commit() = 0;
};

class CountSink {
  public:
    virtual ~CountSink() = default;
    // The flush lock, one holder among all instances; false: another instance holds it.
    virtual Result<bool> try_lock() = 0;
    virtual void unlock() = 0;
    virtual Result<std::unique_ptr<CountTransaction>> begin() = 0;
    // Early-flush records of buckets older than `bucket` are no longer needed.
    virtual Status forget_early_counts_before(std::int64_t bucket) = 0;
    virtual Status set_unique_estimates(const std::vector<UniqueEstimate>& estimates) = 0;
    // Upkeep of the roll-ups of the counts, bounded in time, at the end of a round under the
    // flush lock (PostgreSQL: their build, retention). Nothing by default.
    virtual Status maintain() { return done(); }
};

}  // namespace refgate::clicks
