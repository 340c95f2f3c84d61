#pragma once

// The Lua scripts of the Redis bucket store and the commands that call them, written in Redis'
// wire format into a reused buffer.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/clicks/bucket_store.hpp"
#include "refgate/clicks/resp.hpp"
#include "refgate/runtime/background_thread.hpp"

namespace refgate::clicks {

// Closes buckets; ARGV: bucket seconds, "1" to close the current one too. Replies Redis' clock,
// then the ids of the closed buckets still waiting.
extern const char* const kCloseScript;

// Writes the command that adds a batch into the current bucket unless a batch with this id was
// applied before. Its reply is the bucket id, or -1 for a duplicate. The batch travels and is kept
// as one value (built in `scratch`): Redis does the same small work for any number of counts. A
// key may appear more than once in `counts` (from two shards); each delta is added when read.
void write_add_batch(RespWriter& out, std::string& scratch, std::int64_t bucket_seconds,
                     std::string_view batch_id, const BatchCounts& counts,
                     runtime::CpuSlicer& slicer);

// Writes the commands that feed unique samples (sorted by day and link, no duplicates) to their
// daily HyperLogLogs. Only a HyperLogLog that changed gets its expiry (`ttl_seconds`) renewed and
// is marked for the flusher (refgate:hll:dirty); one that did not change has nothing new to report.
void write_add_samples(RespWriter& out, const std::vector<UniqueSample>& samples,
                       std::int64_t ttl_seconds);

// "2026-11-29:42": the member of refgate:hll:dirty and the tail of the HyperLogLog's key.
constexpr std::size_t kMaxHllMember = 40;
std::string_view hll_member(std::int32_t day, std::int64_t link_id, char (&buf)[kMaxHllMember]);

}  // namespace refgate::clicks
