#pragma once

// What a click leaves behind: a count per (link, UTC day, channel, class), and for human clicks a
// keyed hash that feeds the day's unique estimate. Nothing here can identify a reader: the hash
// key is a random salt that lives only in memory and in Redis, and changes every day.

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "refgate/core/metrics.hpp"

namespace refgate {

enum class ClickClass : std::uint8_t;

constexpr std::size_t kMaxChannelLength = 48;

// The channel of a click: the `src` query parameter when it matches [a-z0-9][a-z0-9._-]{0,47},
// otherwise "direct". The one place where channel tags are checked.
std::string_view channel_of(std::string_view raw_query);
bool valid_channel(std::string_view channel);

// Days since 1970-01-01 (UTC) and back.
std::int32_t utc_day(std::int64_t unix_seconds);
std::string format_day(std::int32_t day);  // "2026-11-29"
constexpr std::size_t kDayLength = 10;
void format_day(std::int32_t day, char (&out)[kDayLength]);  // the same, without allocating

struct CounterKey {
    std::int64_t link_id = 0;
    std::int32_t day = 0;
    std::uint8_t click_class = 0;
    std::uint8_t channel_length = 0;
    std::array<char, kMaxChannelLength> channel{};

    CounterKey() = default;
    CounterKey(std::int64_t link, std::int32_t d, ClickClass cls, std::string_view ch);
    std::string_view channel_view() const { return {channel.data(), channel_length}; }
    bool operator==(const CounterKey& other) const {
        return link_id == other.link_id && day == other.day && click_class == other.click_class &&
               channel_view() == other.channel_view();
    }
    // "42|2026-11-29|newsletter|human": the field name in Redis.
    std::string field() const;
    // The same into `out` (at least kMaxFieldLength bytes), without allocating; returns its length.
    static constexpr std::size_t kMaxFieldLength =
        20 + 1 + kDayLength + 1 + kMaxChannelLength + 1 + 8;
    std::size_t write_field(char* out) const;
    static bool parse_field(std::string_view field, CounterKey& out);
};

// A Redis bucket hash holds one field per batch of counts: "batch:<batch id>" -> one line
// "<counter field> <clicks>\n" per count, so that adding a batch costs Redis one HSET whatever its
// size. Buckets written by refgate before this form hold one field per counter
// ("<counter field>" -> clicks); both forms are read.
constexpr std::string_view kBatchFieldPrefix = "batch:";
void append_batch_line(std::string& blob, const CounterKey& key, std::uint64_t clicks);
// Calls `add(counter field, clicks)` for each count in one field of a bucket hash, in either form.
// False (after passing on the lines before it) at the first malformed line or count; the counter
// fields themselves are checked by the caller. A template: the flusher calls `add` for every line
// of every batch, hundreds of thousands per flush under load.
bool parse_bucket_count(std::string_view text, std::uint64_t& out);
template <typename Add>
bool decode_bucket_field(std::string_view name, std::string_view value, Add&& add) {
    std::uint64_t clicks = 0;
    if (!name.starts_with(kBatchFieldPrefix)) {
        if (!parse_bucket_count(value, clicks)) return false;
        add(name, clicks);
        return true;
    }
    while (!value.empty()) {
        auto eol = value.find('\n');
        if (eol == std::string_view::npos) return false;
        auto line = value.substr(0, eol);
        value.remove_prefix(eol + 1);
        auto space = line.rfind(' ');
        if (space == std::string_view::npos || !parse_bucket_count(line.substr(space + 1), clicks))
            return false;
        add(line.substr(0, space), clicks);
    }
    return true;
}

struct CounterKeyHash {
    // Called on every redirect: channels are short, so a byte loop beats a call into the
    // library's general string hash; the final mix spreads the bits over the whole word.
    std::size_t operator()(const CounterKey& k) const noexcept {
        std::uint64_t h = static_cast<std::uint64_t>(k.link_id) * 0x9e3779b97f4a7c15ULL;
        h ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.day)) << 8) | k.click_class;
        for (char c : k.channel_view()) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        return static_cast<std::size_t>(h);
    }
};

struct UniqueSample {
    std::int64_t link_id = 0;
    std::int32_t day = 0;
    std::uint64_t hash = 0;
};

// Remembers unique samples Redis already holds, so that a repeat (the same reader and link on the
// same day) is not sent again: adding it to its HyperLogLog again would change nothing. Bounded
// and direct-mapped (a 64-bit fingerprint per slot, 2 MiB once used): a sample pushed out is
// merely sent again.
class SentSamples {
  public:
    static constexpr unsigned kSlotBits = 18;
    bool contains(const UniqueSample& s) const;
    void insert(const UniqueSample& s);

  private:
    static std::uint64_t fingerprint(const UniqueSample& s);
    std::vector<std::uint64_t> slots_;  // allocated on the first insert; 0 is an empty slot
};

// Clicks by counter key in one flat array (open addressing, linear probing): a click costs one
// probe, usually into a single slot, and no allocation. take_all() empties it but keeps its slots,
// sized for what the last window held, so steady traffic never makes the recording thread grow
// it; only more distinct keys than ever before do.
class CounterTable {
  public:
    CounterTable() : slots_(kMinSlots) {}

    void add(const CounterKey& key) {
        const std::uint64_t hash = CounterKeyHash{}(key) | 1;  // 0 marks an empty slot
        std::size_t mask = slots_.size() - 1;
        for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
            Slot& slot = slots_[i];
            if (slot.hash == hash && slot.key == key) {
                ++slot.count;
                return;
            }
            if (slot.hash == 0) {
                if ((used_ + 1) * kMaxLoadDen > slots_.size() * kMaxLoadNum) {
                    resize(slots_.size() * 2);
                    add(key);
                    return;
                }
                slot.hash = hash;
                slot.count = 1;
                slot.key = key;
                ++used_;
                return;
            }
        }
    }

    std::size_t size() const { return used_; }
    std::size_t slots() const { return slots_.size(); }

    // Appends every count to `out` and empties the table; then sizes it for a window like this
    // one. step() is called once per count taken and once per 32 slots visited.
    template <class Step>
    void take_all(std::vector<std::pair<CounterKey, std::uint64_t>>& out, Step&& step) {
        const std::size_t held = used_;
        if (held > 0) {
            for (std::size_t i = 0; i < slots_.size(); ++i) {
                if (i % 32 == 0) step();
                Slot& slot = slots_[i];
                if (slot.hash == 0) continue;
                step();
                out.emplace_back(slot.key, slot.count);
                slot.hash = 0;
            }
            used_ = 0;
        }
        // Room for half as many keys again next time, or give back most of the room of a busier
        // past.
        std::size_t wanted = slots_.size();
        while (3 * held * kMaxLoadDen > 2 * wanted * kMaxLoadNum) wanted *= 2;
        while (wanted > kMinSlots && 8 * held * kMaxLoadDen < wanted * kMaxLoadNum) wanted /= 2;
        if (wanted != slots_.size()) slots_ = std::vector<Slot>(wanted);
    }

  private:
    static constexpr std::size_t kMinSlots = 1'024;  // a power of two, like every size
    static constexpr std::size_t kMaxLoadNum = 3, kMaxLoadDen = 4;
    struct Slot {
        std::uint64_t hash = 0;
        std::uint64_t count = 0;
        CounterKey key;
    };
    void resize(std::size_t slot_count);

    std::vector<Slot> slots_;
    std::size_t used_ = 0;
};

struct DrainedClicks {
    std::vector<std::pair<CounterKey, std::uint64_t>> counts;
    std::vector<UniqueSample> samples;
    std::uint64_t samples_dropped = 0;
};

// One per I/O thread: the thread that records into it is the only writer, and the sender takes its
// contents once per aggregation window. Counts go into one of two sides. The writer takes no lock:
// it raises `writing_` and reads which side is active; drain() switches sides, waits out a write
// that may still be in the old side (an increment, rarely a growth of its table), and copies that
// side without blocking the writer. All of it is sequentially consistent, so either drain() sees
// the flag raised and waits, or the writer sees the new side (the Dekker pattern). A side keeps its
// table's slots from one window to the next, so the steady state allocates nothing.
class ClickShard {
  public:
    explicit ClickShard(std::size_t max_samples = 65'536) {
        for (auto& side : sides_) side.samples.reserve(max_samples);
    }

    void count(const CounterKey& key) {
        Writing writing(*this);
        writing.side.counts.add(key);
    }
    void sample(const UniqueSample& s) {
        Writing writing(*this);
        Side& side = writing.side;
        if (side.samples.size() < side.samples.capacity()) {
            side.samples.push_back(s);
        } else {
            ++side.samples_dropped;
        }
    }
    // Appends what was counted since the last drain and resets it. One thread drains at a time,
    // and one thread records.
    void drain(DrainedClicks& out);

  private:
    struct Side {
        CounterTable counts;
        std::vector<UniqueSample> samples;
        std::uint64_t samples_dropped = 0;
    };
    // The writer's mark for the length of one write.
    struct Writing {
        explicit Writing(ClickShard& shard)
            : shard(shard),
              side((shard.writing_.store(true), shard.sides_[shard.active_.load()])) {}
        ~Writing() { shard.writing_.store(false); }
        Writing(const Writing&) = delete;
        Writing& operator=(const Writing&) = delete;
        ClickShard& shard;
        Side& side;
    };
    std::array<Side, 2> sides_;
    std::atomic<std::size_t> active_{0};  // the side being recorded into
    std::atomic<bool> writing_{false};    // the writer is inside a side
};

// Keyed 64-bit hash (SipHash-2-4) of a click's (client address, user agent, link) under the day's
// salt. One-way without the salt, and the salt is never written to disk, logs or PostgreSQL.
using SaltKey = std::array<std::uint8_t, 16>;
std::uint64_t siphash24(const SaltKey& key, std::string_view message);
std::uint64_t unique_hash(const SaltKey& salt, const std::array<std::uint8_t, 16>& address,
                          std::string_view user_agent, std::int64_t link_id);

struct Salts {
    std::array<std::pair<std::int32_t, SaltKey>, 2> slots{};  // day 0: empty
    // False when no salt for that day is known yet (the unique sample is skipped).
    bool get(std::int32_t day, SaltKey& out) const {
        for (const auto& [d, key] : slots) {
            if (d == day && d != 0) {
                out = key;
                return true;
            }
        }
        return false;
    }
};

// The daily salts the sender keeps fresh (today's and tomorrow's).
class SaltBox {
  public:
    void set(std::int32_t day, const SaltKey& key);
    Salts current() const;
    std::uint64_t generation() const noexcept {
        return generation_.load(std::memory_order_acquire);
    }

  private:
    mutable std::mutex mutex_;
    Salts salts_;
    std::atomic<std::uint64_t> generation_{0};
};

// A per-thread copy of the salts, refreshed only when they change: no shared lock per click.
class SaltReader {
  public:
    explicit SaltReader(const SaltBox& box) : box_(box) {}
    bool get(std::int32_t day, SaltKey& out) {
        auto generation = box_.generation();
        if (generation != generation_) {
            salts_ = box_.current();
            generation_ = generation;
        }
        return salts_.get(day, out);
    }

  private:
    const SaltBox& box_;
    Salts salts_;
    std::uint64_t generation_ = 0;
};

// Clicks by (link, class) since the exporter last took them; the sender adds every drained delta
// once per window, so the I/O threads never touch it.
class LinkClickTotals {
  public:
    using Classes = std::array<std::uint64_t, 3>;  // human, bot, prefetch (ClickClass order)
    void add(std::span<const std::pair<CounterKey, std::uint64_t>> counts) {
        if (counts.empty()) return;
        std::lock_guard lock(mutex_);
        for (const auto& [key, n] : counts) {
            if (key.click_class < 3) totals_[key.link_id][key.click_class] += n;
        }
    }
    // Hands over what was added since the last take.
    std::unordered_map<std::int64_t, Classes> take() {
        std::lock_guard lock(mutex_);
        std::unordered_map<std::int64_t, Classes> out;
        out.swap(totals_);
        return out;
    }

  private:
    std::mutex mutex_;
    std::unordered_map<std::int64_t, Classes> totals_;
};

// What the counting pipeline reports about itself (for /readyz and, later, metrics).
struct ClickStats {
    std::atomic<std::uint64_t> pending_keys{0};     // waiting for Redis
    std::atomic<std::uint64_t> dropped_clicks{0};   // past the pending bound
    std::atomic<std::uint64_t> dropped_samples{0};  // unique samples not fed to Redis
    std::atomic<std::uint64_t> batches_sent{0};
    std::atomic<std::uint64_t> redis_errors{0};
    std::atomic<bool> redis_config_risky{false};
    // For /metrics.
    LatencyHistogram redis_latency;                         // the sender's pipelined round trips
    std::atomic<std::uint64_t> flush_buckets{0};            // buckets applied to PostgreSQL
    std::atomic<std::uint64_t> flush_rows{0};               // counter rows upserted
    std::atomic<std::uint64_t> flush_failures{0};           // flush rounds that failed
    LatencyHistogram flush_duration{kFlushDurationBounds};  // whole flush rounds
    std::atomic<std::int64_t> oldest_unflushed{
        -1};                      // start (unix s) of the oldest bucket; -1: none
    LinkClickTotals link_clicks;  // clicks by link and class, for partners
};

}  // namespace refgate
