#pragma once

// The Redis side of counting: time buckets whose identity Redis chooses (from its own clock, kept
// monotonic), so that no delta can land in a bucket that was already closed and flushed.
//
// Keys:
//   refgate:bucket:<id>     hash  field "batch:<batch id>" -> lines "link|day|channel|class n"
//                                 (older buckets: field "link|day|channel|class" -> clicks)
//   refgate:buckets         set   ids of buckets not yet flushed
//   refgate:bucket:last     the newest bucket id written (never goes back)
//   refgate:bucket:closed   buckets with an id <= this are closed: nothing is added to them
//   refgate:batch:<id>      marks an instance's batch as applied (expires after a day)
//   refgate:hll:<day>:<link>, refgate:hll:dirty, refgate:salt:<day>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "refgate/clicks/click_shard.hpp"
#include "refgate/clicks/resp.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/redis/redis_client.hpp"
#include "refgate/runtime/background_thread.hpp"

namespace refgate::clicks {

using BatchCounts = std::vector<std::pair<CounterKey, std::uint64_t>>;

// Writes the command that adds a batch into the current bucket unless a batch with this id was
// applied before. Its reply is the bucket id, or -1 for a duplicate. The batch travels and is kept
// as one value (built in `scratch`): Redis does the same small work for any number of counts. A
// key may appear more than once in `counts` (from two shards); each delta is added when read.
void write_add_batch(RespWriter& out, std::string& scratch, std::int64_t bucket_seconds,
                     std::string_view batch_id, const BatchCounts& counts, CpuSlicer& slicer);

// Writes the commands that feed unique samples (sorted by day and link, no duplicates) to their
// daily HyperLogLogs. Only a HyperLogLog that changed gets its expiry renewed and is marked for
// the flusher (refgate:hll:dirty); one that did not change has nothing new to report.
void write_add_samples(RespWriter& out, const std::vector<UniqueSample>& samples);

struct ClosedBuckets {
    std::int64_t redis_now = 0;     // Redis' clock when they were closed
    std::vector<std::int64_t> ids;  // closed buckets still waiting, oldest first
};

// Closes every bucket older than the current one (and the current one too with
// `include_current`).
ClosedBuckets close_buckets(redis::RedisConnection& redis, std::int64_t bucket_seconds,
                            bool include_current);

// The counts of a bucket, one entry per counter field (batches summed); throws RedisError when a
// field is malformed.
std::vector<std::pair<std::string, std::uint64_t>> read_bucket(redis::RedisConnection& redis,
                                                               std::int64_t id);
void delete_bucket(redis::RedisConnection& redis, std::int64_t id);

std::string hll_key(std::int32_t day, std::int64_t link_id);

}  // namespace refgate::clicks
