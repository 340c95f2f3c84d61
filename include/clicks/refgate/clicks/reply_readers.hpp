#pragma once

// Readers of what Redis answers the bucket store (redis_bucket_store.cpp): pure functions over a
// reply copied out of hiredis, fuzzed with replies hiredis's own reader builds from raw bytes
// (tests/fuzz/fuzz_redis_replies.cpp). Each returns the value or what was wrong with the reply;
// none throws, and none reads a number out of text that holds more than the number, so a reply
// of an unexpected shape is a fault of the store, never counts misread.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "refgate/clicks/bucket_store.hpp"
#include "refgate/clicks/salts.hpp"
#include "refgate/redis/reply.hpp"

namespace refgate::clicks {

// Why a reply was not what the command answers.
struct ReplyProblem {
    std::string what;
};
// The value read, or the problem.
template <typename T>
using ReplyRead = std::variant<T, ReplyProblem>;

// A whole decimal int64 ("-5", "1795975200"), as a string (bulk or status) or an integer reply.
ReplyRead<std::int64_t> read_int64(const redis::Reply& reply);
// A count (WAIT, PFCOUNT): an integer reply >= 0.
ReplyRead<std::uint64_t> read_count(const redis::Reply& reply);
// The close script's answer: [store's unix time, closed bucket id...]; the ids sorted.
ReplyRead<ClosedBuckets> read_closed_buckets(const redis::Reply& reply);
// SMEMBERS of the pending buckets: bucket ids >= 0.
ReplyRead<std::vector<std::int64_t>> read_bucket_ids(const redis::Reply& reply);
// GET of a daily salt: 32 hex digits.
ReplyRead<SaltKey> read_salt(const redis::Reply& reply);
// CONFIG GET <name>: [name, value].
ReplyRead<std::string> read_config_value(const redis::Reply& reply, std::string_view name);
// SPOP of changed estimates: members "<day>:<link id>" (estimate 0). A member of another form is
// skipped (it names no estimate this version keeps); a reply that is no array of strings is not.
ReplyRead<std::vector<UniqueEstimate>> read_changed_members(const redis::Reply& reply);
// "2026-11-29:42" back to its day and link (a link id >= 0, nothing after it).
bool parse_hll_member(std::string_view member, UniqueEstimate& out);

}  // namespace refgate::clicks
