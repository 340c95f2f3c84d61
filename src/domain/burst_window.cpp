#include "refgate/domain/burst_window.hpp"

#include <algorithm>
#include <stdexcept>

namespace refgate::domain {

BurstWindow::BurstWindow(unsigned links, std::int64_t seconds)
    : links_(links), seconds_(seconds), slots_(kSlots) {
    if (links < 2 || links > kMaxLinks || seconds < 1)
        throw std::invalid_argument("a burst window needs 2 to 8 links and at least 1 second");
}

bool BurstWindow::fetch(std::uint64_t client, std::int64_t link_id, std::int64_t now) noexcept {
    Slot& slot = slots_[client % kSlots];
    bool scanner = slot.used && slot.client == client && slot.count >= links_;
    // A run ends when its window is over; a scanner's run goes on while it keeps fetching.
    bool same_run = slot.used && slot.client == client &&
                    (scanner ? now - slot.last < seconds_ : now - slot.first < seconds_);
    if (!same_run) {
        slot = Slot{};
        slot.used = true;
        slot.client = client;
        slot.first = now;
    }
    slot.last = now;
    // Links are compared by their low 32 bits: a collision only makes two links count as one.
    auto link = static_cast<std::uint32_t>(link_id);
    auto seen = slot.links + std::min<unsigned>(slot.count, kMaxLinks);
    if (slot.count < kMaxLinks && std::find(slot.links, seen, link) == seen) {
        slot.links[slot.count++] = link;
    }
    return slot.count >= links_;
}

}  // namespace refgate::domain
