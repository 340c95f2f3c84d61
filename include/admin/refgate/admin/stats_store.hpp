#pragma once

// Where the stats API's figures come from, without seeing libpqxx or hiredis. Figures include the
// deltas still waiting in Redis, so they are current to the aggregation window, not to the last
// flush.

#include <optional>
#include <string>
#include <vector>

#include "refgate/domain/stats_report.hpp"

namespace refgate::admin {

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
};

}  // namespace refgate::admin
