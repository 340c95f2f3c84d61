#pragma once

// Where the stats API's figures come from, without seeing libpqxx or hiredis. Figures include the
// deltas still waiting in Redis, so they are current to the aggregation window, not to the last
// flush.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "refgate/domain/clock.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/stats_report.hpp"

namespace refgate::admin {

// The UTC day it is by `clock`: the stats' default range ends there.
inline std::int32_t utc_today(const Clock& clock) {
    auto now = std::chrono::floor<std::chrono::seconds>(clock.now());
    return utc_day(now.time_since_epoch().count());
}

// Methods throw StoreError (admin_store.hpp) when PostgreSQL or Redis cannot be read.
// Implementations are thread-safe.
class StatsStore {
  public:
    virtual ~StatsStore() = default;
    // nullopt: no such link.
    virtual std::optional<LinkStats> link(const std::string& slug, const DayRange& range) = 0;
    // nullopt: no such partner.
    virtual std::optional<PartnerStats> partner(const std::string& slug, const DayRange& range) = 0;
    // Links ranked by human clicks in the range (links without clicks are left out).
    virtual std::vector<TopEntry> top(const DayRange& range, std::size_t limit) = 0;
    // Partners ranked by their links' human clicks in the range (top_partners() of every link's
    // entry; a store may sum per partner without listing the links).
    virtual std::vector<TopEntry> top_partners(const DayRange& range, std::size_t limit) {
        return refgate::top_partners(top(range, SIZE_MAX), limit);
    }
    // Every link together, per day: the sums of what link() answers for each (`link` and
    // `partner` empty).
    virtual LinkStats overview(const DayRange& range) = 0;
};

}  // namespace refgate::admin
