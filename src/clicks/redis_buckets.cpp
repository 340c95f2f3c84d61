#include "clicks/redis_buckets.hpp"

#include <algorithm>

#include "refgate/core/clicks.hpp"

namespace refgate::clicks {
namespace {

constexpr const char* kAddBatch = R"lua(
if redis.call('SET', 'refgate:batch:' .. ARGV[2], '1', 'NX', 'EX', 86400) == false then
  return -1
end
local bs = tonumber(ARGV[1])
local now = tonumber(redis.call('TIME')[1])
local b = now - (now % bs)
local last = tonumber(redis.call('GET', 'refgate:bucket:last') or '0')
local closed = tonumber(redis.call('GET', 'refgate:bucket:closed') or '-1')
if b < last then b = last end
if b <= closed then b = closed + bs end
redis.call('SET', 'refgate:bucket:last', b)
local key = 'refgate:bucket:' .. b
for i = 3, #ARGV, 2 do
  redis.call('HINCRBY', key, ARGV[i], ARGV[i + 1])
end
redis.call('SADD', 'refgate:buckets', b)
return b
)lua";

constexpr const char* kClose = R"lua(
local bs = tonumber(ARGV[1])
local now = tonumber(redis.call('TIME')[1])
local cur = now - (now % bs)
local last = tonumber(redis.call('GET', 'refgate:bucket:last') or '0')
if last > cur then cur = last end
local fence = cur - 1
if ARGV[2] == '1' then fence = cur end
local closed = tonumber(redis.call('GET', 'refgate:bucket:closed') or '-1')
if fence > closed then
  redis.call('SET', 'refgate:bucket:closed', fence)
  closed = fence
end
local out = {tostring(now)}
for _, id in ipairs(redis.call('SMEMBERS', 'refgate:buckets')) do
  if tonumber(id) <= closed then table.insert(out, id) end
end
return out
)lua";

std::uint64_t to_u64(const std::string& text) { return std::stoull(text); }

}  // namespace

redis::Command add_batch_command(std::int64_t bucket_seconds, const std::string& batch_id,
                                 const std::vector<std::pair<std::string, std::uint64_t>>& counts) {
    redis::Command command{"EVAL", kAddBatch, "0", std::to_string(bucket_seconds), batch_id};
    command.reserve(command.size() + counts.size() * 2);
    for (const auto& [field, delta] : counts) {
        command.push_back(field);
        command.push_back(std::to_string(delta));
    }
    return command;
}

ClosedBuckets close_buckets(redis::RedisConnection& redis, std::int64_t bucket_seconds,
                            bool include_current) {
    auto reply = redis.command(
        {"EVAL", kClose, "0", std::to_string(bucket_seconds), include_current ? "1" : "0"});
    if (reply.is_error()) throw redis::RedisError("closing buckets: " + reply.str);
    ClosedBuckets closed;
    if (reply.elements.empty()) throw redis::RedisError("closing buckets: empty reply");
    closed.redis_now = std::stoll(reply.elements[0].str);
    for (std::size_t i = 1; i < reply.elements.size(); ++i)
        closed.ids.push_back(std::stoll(reply.elements[i].str));
    std::sort(closed.ids.begin(), closed.ids.end());
    return closed;
}

std::vector<std::pair<std::string, std::uint64_t>> read_bucket(redis::RedisConnection& redis,
                                                               std::int64_t id) {
    auto reply = redis.command({"HGETALL", "refgate:bucket:" + std::to_string(id)});
    if (reply.is_error()) throw redis::RedisError("reading bucket: " + reply.str);
    std::vector<std::pair<std::string, std::uint64_t>> counts;
    for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
        counts.emplace_back(reply.elements[i].str, to_u64(reply.elements[i + 1].str));
    }
    return counts;
}

void delete_bucket(redis::RedisConnection& redis, std::int64_t id) {
    auto replies = redis.pipeline({{"DEL", "refgate:bucket:" + std::to_string(id)},
                                   {"SREM", "refgate:buckets", std::to_string(id)}});
    for (const auto& r : replies) {
        if (r.is_error()) throw redis::RedisError("deleting bucket: " + r.str);
    }
}

std::string hll_key(std::int32_t day, std::int64_t link_id) {
    return "refgate:hll:" + format_day(day) + ":" + std::to_string(link_id);
}

}  // namespace refgate::clicks
