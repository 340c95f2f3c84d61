#pragma once

// Click caps (issue 44): the cap worker's verdict per capped link, the state that changes while a
// snapshot is served (the snapshot itself is immutable and, in the domain, has no atomics). Made
// for a snapshot's caps and published beside it (SnapshotStore::cap_flags()); a redirect of a link
// with a cap reads it with a binary search by link id and one relaxed atomic load, nothing
// allocated. Keyed by link id, flags made for an earlier snapshot keep answering for the links it
// shares with a newer one until the cap worker publishes the newer one's (within kCapApplyTick).

#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "refgate/domain/snapshot.hpp"

namespace refgate::runtime {

class CapFlags {
  public:
    // One flag per cap of `snapshot` (Snapshot::caps()), none set.
    explicit CapFlags(const domain::Snapshot& snapshot);

    // Sets each flag from the fleet's human clicks per link id (a link missing from `totals` has
    // none): set once they reach the link's max_human_clicks. Returns how many are set.
    std::size_t apply(const std::unordered_map<std::int64_t, std::uint64_t>& totals) const noexcept;

    // Whether link `link_id`'s cap is reached; false for a link without a cap here.
    bool capped(std::int64_t link_id) const noexcept {
        std::size_t lo = 0, hi = caps_.size();
        while (lo < hi) {
            std::size_t mid = lo + (hi - lo) / 2;
            if (caps_[mid].link_id < link_id) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo < caps_.size() && caps_[lo].link_id == link_id &&
               flags_[lo].load(std::memory_order_relaxed);
    }

    // Whether these flags were made for caps like `snapshot`'s: the same links, the same maxima.
    bool fits(const domain::Snapshot& snapshot) const;
    std::size_t size() const noexcept { return caps_.size(); }

  private:
    struct Cap {
        std::int64_t link_id = 0;
        std::int64_t max_human_clicks = 0;
    };
    std::vector<Cap> caps_;  // by link id
    // The verdicts: a published CapFlags is const, its flags are not.
    std::unique_ptr<std::atomic<bool>[]> flags_;
};

}  // namespace refgate::runtime
