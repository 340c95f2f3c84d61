#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/table_memory.hpp"

namespace refgate::clicks {

struct UniqueSample {
    std::int64_t link_id = 0;
    std::int32_t day = 0;
    std::uint64_t hash = 0;
};

// Remembers unique samples Redis already holds, so that a repeat (the same reader and link on the
// same day) is not sent again: adding it to its HyperLogLog again would change nothing. Bounded
// and direct-mapped (a 64-bit fingerprint per slot, 2 MiB of address space): a sample pushed out
// is merely sent again. The slots are the kernel's zero pages until a sample lands on one, so the
// memory it takes grows with the samples it holds (a page per 512 slots), not 2 MiB at the first.
class SentSamples {
  public:
    static constexpr unsigned kSlotBits = 18;
    bool contains(const UniqueSample& s) const;
    void insert(const UniqueSample& s);

  private:
    struct Unmap {
        void operator()(std::uint64_t* slots) const noexcept;
    };
    static std::uint64_t fingerprint(const UniqueSample& s);
    // Mapped on the first insert (none when the mapping fails: nothing is remembered); 0 is an
    // empty slot.
    std::unique_ptr<std::uint64_t[], Unmap> slots_;
};

// Clicks by counter key in one flat array (open addressing, linear probing): a click costs one
// probe, usually into a single slot, and no allocation. take_all() empties it but keeps its slots,
// sized for what the last window held, so steady traffic never makes the recording thread grow
// it; only more distinct keys than ever before do.
class CounterTable {
  public:
    CounterTable() : slots_(kMinSlots) {}

    void add(const domain::CounterKey& key) {
        const std::uint64_t hash = domain::CounterKeyHash{}(key) | 1;  // 0 marks an empty slot
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

    // Starts loading the slot where `key`'s probe begins (a hint: it changes nothing). Counting
    // spreads over thousands of links, so that slot is rarely in the cache; a caller that has
    // other work before add() hides the load behind it. Always inlined: GCC 12 takes a function
    // that only prefetches for a pure one and drops the call (its result is unused).
    [[gnu::always_inline]] void prefetch(const domain::CounterKey& key) const {
        const std::uint64_t hash = domain::CounterKeyHash{}(key) | 1;
        // A slot (80 bytes) always spans two cache lines, and the key's compare needs both.
        const auto* slot = reinterpret_cast<const char*>(&slots_[hash & (slots_.size() - 1)]);
        __builtin_prefetch(slot);
        __builtin_prefetch(slot + sizeof(Slot) - 1);
    }
    std::size_t size() const { return used_; }
    std::size_t slots() const { return slots_.size(); }

    // Appends every count to `out` and empties the table; then sizes it for a window like this
    // one. step() is called once per count taken and once per 32 slots visited.
    template <class Step>
    void take_all(std::vector<std::pair<domain::CounterKey, std::uint64_t>>& out, Step&& step) {
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
        if (wanted != slots_.size()) slots_ = Slots(wanted);
    }

  private:
    static constexpr std::size_t kMinSlots = 1'024;  // a power of two, like every size
    static constexpr std::size_t kMaxLoadNum = 3, kMaxLoadDen = 4;
    struct Slot {
        std::uint64_t hash = 0;
        std::uint64_t count = 0;
        domain::CounterKey key;
    };
    using Slots = std::vector<Slot, domain::TableAllocator<Slot>>;  // in huge pages from 1 MiB
    void resize(std::size_t slot_count);

    Slots slots_;
    std::size_t used_ = 0;
};

// Why a click counts under the channel "other" rather than its `src` (for the metric and log).
enum class OtherChannel : std::uint8_t {
    no,
    cap,         // its link had REFGATE_MAX_CHANNELS_PER_LINK_DAY channels that day already
    identifier,  // src looked like an e-mail address or an identifier (looks_like_identifier())
};

struct DrainedClicks {
    std::vector<std::pair<domain::CounterKey, std::uint64_t>> counts;
    std::vector<UniqueSample> samples;
    std::uint64_t samples_dropped = 0;
    std::uint64_t capped = 0;       // clicks counted as "other" past the channel cap
    std::uint64_t identifiers = 0;  // clicks counted as "other" for an identifier-like src
};

// One per I/O thread: the thread that records into it is the only writer, and the sender takes its
// contents once per aggregation window. Counts go into one of two sides. The writer takes no lock:
// it raises `writing_` and reads which side is active; drain() switches sides, waits out a write
// that may still be in the old side (an increment, rarely a growth of its table), and copies that
// side without blocking the writer. Raising the flag and reading the side, like switching sides and
// reading the flag, are sequentially consistent, so either drain() sees the flag raised and waits,
// or the writer sees the new side (the Dekker pattern); lowering the flag is a release, which is
// all drain() needs to see the write it waited for (and on x86 a plain store, not an exchange).
// A side keeps its table's slots from one window to the next, so the steady state allocates
// nothing.
class ClickShard {
  public:
    explicit ClickShard(std::size_t max_samples = 65'536) {
        for (auto& side : sides_) side.samples.reserve(max_samples);
    }

    void count(const domain::CounterKey& key, OtherChannel other = OtherChannel::no) {
        Writing writing(*this);
        writing.side.counts.add(key);
        if (other == OtherChannel::cap) ++writing.side.capped;
        if (other == OtherChannel::identifier) ++writing.side.identifiers;
    }
    // CounterTable::prefetch in the side being recorded into.
    void prefetch(const domain::CounterKey& key) {
        Writing writing(*this);
        writing.side.counts.prefetch(key);
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
        std::uint64_t capped = 0;
        std::uint64_t identifiers = 0;
    };
    // The writer's mark for the length of one write.
    struct Writing {
        explicit Writing(ClickShard& shard)
            : shard(shard),
              side((shard.writing_.store(true), shard.sides_[shard.active_.load()])) {}
        ~Writing() { shard.writing_.store(false, std::memory_order_release); }
        Writing(const Writing&) = delete;
        Writing& operator=(const Writing&) = delete;
        ClickShard& shard;
        Side& side;
    };
    std::array<Side, 2> sides_;
    std::atomic<std::size_t> active_{0};  // the side being recorded into
    std::atomic<bool> writing_{false};    // the writer is inside a side
};

}  // namespace refgate::clicks
