#include "refgate/runtime/cap_flags.hpp"

#include <algorithm>

namespace refgate::runtime {

CapFlags::CapFlags(const domain::Snapshot& snapshot) {
    caps_.reserve(snapshot.caps().size());
    for (const auto& cap : snapshot.caps()) caps_.push_back({cap.link_id, cap.max_human_clicks});
    std::sort(caps_.begin(), caps_.end(),
              [](const Cap& a, const Cap& b) { return a.link_id < b.link_id; });
    flags_ = std::make_unique<std::atomic<bool>[]>(caps_.size());
}

std::size_t CapFlags::apply(
    const std::unordered_map<std::int64_t, std::uint64_t>& totals) const noexcept {
    std::size_t capped = 0;
    for (std::size_t i = 0; i < caps_.size(); ++i) {
        auto found = totals.find(caps_[i].link_id);
        std::uint64_t clicks = found == totals.end() ? 0 : found->second;
        bool reached = clicks >= static_cast<std::uint64_t>(caps_[i].max_human_clicks);
        flags_[i].store(reached, std::memory_order_relaxed);
        capped += reached ? 1 : 0;
    }
    return capped;
}

bool CapFlags::fits(const domain::Snapshot& snapshot) const {
    if (snapshot.caps().size() != caps_.size()) return false;
    for (const auto& cap : snapshot.caps()) {
        auto at = std::lower_bound(caps_.begin(), caps_.end(), cap.link_id,
                                   [](const Cap& c, std::int64_t id) { return c.link_id < id; });
        if (at == caps_.end() || at->link_id != cap.link_id ||
            at->max_human_clicks != cap.max_human_clicks)
            return false;
    }
    return true;
}

}  // namespace refgate::runtime
