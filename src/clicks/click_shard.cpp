#include "refgate/clicks/click_shard.hpp"

#include <sys/mman.h>

#include <thread>

#include "refgate/runtime/background_thread.hpp"

namespace refgate::clicks {

void CounterTable::resize(std::size_t slot_count) {
    Slots old(slot_count);
    old.swap(slots_);
    used_ = 0;
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
        if (slot.hash == 0) continue;
        std::size_t i = slot.hash & mask;
        while (slots_[i].hash != 0) i = (i + 1) & mask;
        slots_[i] = slot;
        ++used_;
    }
}

std::uint64_t SentSamples::fingerprint(const UniqueSample& s) {
    // The hash is already keyed per link and day (salt); the mix only keeps apart equal hashes of
    // different links or days. 0 marks an empty slot.
    std::uint64_t x = s.hash ^ (static_cast<std::uint64_t>(s.link_id) * 0x9e3779b97f4a7c15ULL) ^
                      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.day)) << 40);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    return x == 0 ? 1 : x;
}

namespace {

constexpr std::size_t kSentSlotBytes = sizeof(std::uint64_t) << SentSamples::kSlotBits;

}  // namespace

void SentSamples::Unmap::operator()(std::uint64_t* slots) const noexcept {
    ::munmap(slots, kSentSlotBytes);
}

bool SentSamples::contains(const UniqueSample& s) const {
    if (!slots_) return false;
    auto fp = fingerprint(s);
    return slots_[fp >> (64 - kSlotBits)] == fp;
}

void SentSamples::insert(const UniqueSample& s) {
    if (!slots_) {
        // An anonymous mapping rather than a zero-filled vector: zeroing would make every page
        // resident at once.
        void* p = ::mmap(nullptr, kSentSlotBytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return;
        // Where transparent huge pages are always on, one write would make the 2 MiB resident.
        ::madvise(p, kSentSlotBytes, MADV_NOHUGEPAGE);
        slots_.reset(static_cast<std::uint64_t*>(p));
    }
    auto fp = fingerprint(s);
    slots_[fp >> (64 - kSlotBits)] = fp;
}

void ClickShard::drain(DrainedClicks& out) {
    std::size_t taken = active_.load();
    active_.store(1 - taken);
    // A write that read the old side before the switch ends soon: an increment, or at worst the
    // growth of the table when more distinct keys than ever arrive.
    while (writing_.load()) std::this_thread::yield();
    // The recording thread now writes to the other side; this one is ours until the next switch.
    Side& side = sides_[taken];
    runtime::CpuSlicer slicer;
    side.counts.take_all(out.counts, [&] { slicer.step(); });
    out.samples.insert(out.samples.end(), side.samples.begin(), side.samples.end());
    side.samples.clear();
    out.samples_dropped += side.samples_dropped;
    side.samples_dropped = 0;
    out.capped += side.capped;
    out.identifiers += side.identifiers;
    side.capped = side.identifiers = 0;
}

}  // namespace refgate::clicks
