#include "redis_scripts.hpp"

#include <algorithm>
#include <charconv>

#include "refgate/clicks/bucket_format.hpp"

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
redis.call('HSET', 'refgate:bucket:' .. b, 'batch:' .. ARGV[2], ARGV[3])
redis.call('SADD', 'refgate:buckets', b)
return b
)lua";

// ARGV: ttl, then groups of (member "<day>:<link>", n, n hashes). PFADD answers 1 when the
// HyperLogLog changed (or was created); only then is its expiry renewed and the flusher told.
constexpr const char* kAddSamples = R"lua(
local ttl = ARGV[1]
local i = 2
local n = #ARGV
while i <= n do
  local member = ARGV[i]
  local count = tonumber(ARGV[i + 1])
  local key = 'refgate:hll:' .. member
  if redis.call('PFADD', key, unpack(ARGV, i + 2, i + 1 + count)) == 1 then
    redis.call('EXPIRE', key, ttl)
    redis.call('SADD', 'refgate:hll:dirty', member)
  end
  i = i + 2 + count
end
return 0
)lua";

// Lua's unpack() is limited by its C stack (about 8,000 values): hashes per PFADD call.
constexpr std::size_t kMaxHashesPerGroup = 1'000;
// Arguments per EVAL of samples, so that one script call stays short.
constexpr std::size_t kMaxArgsPerSampleCommand = 50'000;

}  // namespace

const char* const kCloseScript = R"lua(
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

std::string_view hll_member(std::int32_t day, std::int64_t link_id, char (&buf)[kMaxHllMember]) {
    char day_text[kDayLength];
    format_day(day, day_text);
    char* p = std::copy_n(day_text, kDayLength, buf);
    *p++ = ':';
    p = std::to_chars(p, buf + sizeof buf, link_id).ptr;
    return {buf, static_cast<std::size_t>(p - buf)};
}

void write_add_batch(RespWriter& out, std::string& scratch, std::int64_t bucket_seconds,
                     std::string_view batch_id, const BatchCounts& counts, CpuSlicer& slicer) {
    scratch.clear();
    for (const auto& [key, delta] : counts) {
        append_batch_line(scratch, key, delta);
        slicer.step();
    }
    out.command(6).arg("EVAL").arg(kAddBatch).arg("0");
    out.arg(bucket_seconds).arg(batch_id).arg(scratch);
}

void write_add_samples(RespWriter& out, const std::vector<UniqueSample>& samples,
                       std::int64_t ttl_seconds) {
    // Groups of equal (day, link), each cut to kMaxHashesPerGroup, then commands of whole groups.
    auto group_end = [&](std::size_t i) {
        std::size_t j = i;
        while (j < samples.size() && j - i < kMaxHashesPerGroup &&
               samples[j].day == samples[i].day && samples[j].link_id == samples[i].link_id) {
            ++j;
        }
        return j;
    };
    std::size_t i = 0;
    while (i < samples.size()) {
        // Count the arguments of this command first: RESP states them up front.
        std::size_t args = 4;  // EVAL script 0 ttl
        std::size_t end = i;
        while (end < samples.size() && args < kMaxArgsPerSampleCommand) {
            std::size_t next = group_end(end);
            args += 2 + (next - end);
            end = next;
        }
        out.command(args).arg("EVAL").arg(kAddSamples).arg("0").arg(ttl_seconds);
        char member[kMaxHllMember];
        while (i < end) {
            std::size_t next = group_end(i);
            out.arg(hll_member(samples[i].day, samples[i].link_id, member));
            out.arg(static_cast<std::uint64_t>(next - i));
            for (; i < next; ++i) out.arg(samples[i].hash);
        }
    }
}

}  // namespace refgate::clicks
