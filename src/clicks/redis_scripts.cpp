#include "redis_scripts.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include "refgate/clicks/bucket_format.hpp"
#include "refgate/domain/click_classifier.hpp"

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
local slot = now - (now % 10)
if ARGV[4] ~= '' then
  local lk = 'refgate:live:s:' .. slot
  redis.call('HSET', lk, 'batch:' .. ARGV[2], ARGV[4])
  redis.call('EXPIRE', lk, 330)
end
if #ARGV > 4 then
  local hk = 'refgate:live:h:' .. (now - (now % 3600))
  for i = 5, #ARGV, 2 do redis.call('HINCRBY', hk, ARGV[i], ARGV[i + 1]) end
  redis.call('EXPIRE', hk, 180000)
end
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
    char day_text[domain::kDayLength];
    domain::format_day(day, day_text);
    char* p = std::copy_n(day_text, domain::kDayLength, buf);
    *p++ = ':';
    p = std::to_chars(p, buf + sizeof buf, link_id).ptr;
    return {buf, static_cast<std::size_t>(p - buf)};
}

void write_add_batch(RespWriter& out, std::string& scratch, std::int64_t bucket_seconds,
                     std::string_view batch_id, const BatchCounts& counts,
                     runtime::CpuSlicer& slicer) {
    scratch.clear();
    // The live figures (GET /api/v1/stats/live) ride along: the human clicks of each channel
    // counter as "<link> <clicks>" lines after the batch's own, and the clicks per class.
    std::array<std::uint64_t, domain::kClickClassCount> per_class{};
    for (const auto& [key, delta] : counts) {
        append_batch_line(scratch, key, delta);
        if (!key.is_targeting() && key.click_class < per_class.size())
            per_class[key.click_class] += delta;
        slicer.step();
    }
    std::size_t batch_end = scratch.size();
    for (const auto& [key, delta] : counts) {
        if (key.is_targeting() ||
            key.click_class != static_cast<std::uint8_t>(domain::ClickClass::human))
            continue;
        // Each number's end leaves room for the character after it (a failed to_chars answers
        // its end).
        char line[20 + 1 + 20 + 1];
        char* p = std::to_chars(line, line + 20, key.link_id).ptr;
        *p++ = ' ';
        p = std::to_chars(p, line + sizeof line - 1, delta).ptr;
        *p++ = '\n';
        scratch.append(line, static_cast<std::size_t>(p - line));
        slicer.step();
    }
    std::size_t classes = 0;
    for (std::uint64_t n : per_class) classes += n > 0 ? 1 : 0;
    out.command(7 + 2 * classes).arg("EVAL").arg(kAddBatch).arg("0");
    std::string_view all(scratch);
    out.arg(bucket_seconds).arg(batch_id).arg(all.substr(0, batch_end)).arg(all.substr(batch_end));
    for (const auto& c : domain::kClickClasses) {
        std::uint64_t n = per_class[static_cast<std::size_t>(c.click_class)];
        if (n > 0) out.arg(c.name).arg(n);
    }
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
