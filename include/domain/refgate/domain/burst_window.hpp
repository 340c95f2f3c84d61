#pragma once

// Recognises a scanner by what no reader does: fetching many distinct links of one channel (one
// newsletter issue) within a few seconds. One window per I/O thread: not thread-safe, bounded
// (a fixed table made at construction), and it never allocates or waits afterwards. A client is
// known only by a keyed hash (the caller's: refgate uses the day's unique-estimate salt over the
// address and the channel), which is kept here in memory for the window's seconds and no longer
// matters after them.

#include <cstdint>
#include <vector>

namespace refgate::domain {

class BurstWindow {
  public:
    static constexpr unsigned kMaxLinks = 8;  // the largest threshold
    static constexpr std::size_t kSlots = 2048;

    // A client is a scanner from its `links`-th distinct link within `seconds` of its first, and
    // stays one while it goes on fetching with gaps under `seconds`. `links` from 2 to kMaxLinks.
    BurstWindow(unsigned links, std::int64_t seconds);

    // Notes that `client` fetched `link_id` at `now` (unix seconds); true when that makes (or
    // keeps) the client a scanner. Clients whose hashes share a slot evict each other: the newest
    // wins, so a flood of clients can only make the window forget, never flag a reader.
    bool fetch(std::uint64_t client, std::int64_t link_id, std::int64_t now) noexcept;

  private:
    struct Slot {
        std::uint64_t client = 0;
        std::int64_t first = 0;  // the first fetch of this run
        std::int64_t last = 0;   // the latest fetch
        std::uint32_t links[kMaxLinks] = {};
        std::uint8_t count = 0;  // distinct links seen in the run (at most kMaxLinks)
        bool used = false;
    };
    unsigned links_;
    std::int64_t seconds_;
    std::vector<Slot> slots_;
};

}  // namespace refgate::domain
