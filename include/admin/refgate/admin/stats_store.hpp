#pragma once

// Where the stats API's figures come from, without seeing libpqxx or hiredis. Figures include the
// deltas still waiting in Redis, so they are current to the aggregation window, not to the last
// flush.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "refgate/domain/clock.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/stats_report.hpp"

namespace refgate::admin {

// The UTC day it is by `clock`: the stats' default range ends there.
inline std::int32_t utc_today(const domain::Clock& clock) {
    auto now = std::chrono::floor<std::chrono::seconds>(clock.now());
    return domain::utc_day(now.time_since_epoch().count());
}

// GET /api/v1/stats/live: what the instances sent Redis lately, never a reader's anything.
struct LiveLink {
    std::string link;  // its slug
    std::uint64_t human_clicks = 0;
};
struct LiveStats {
    std::int64_t as_of = 0;  // unix seconds, Redis' clock
    std::int64_t window_seconds = 0;
    std::vector<LiveLink> links;  // human clicks over the window, most first
    // Per class in kClickClasses' order: today so far (UTC) and yesterday over the same hours.
    std::array<std::uint64_t, 4> today{};
    std::array<std::uint64_t, 4> yesterday_same_hours{};
};

// Issue 46: the links of one domain, as ?domain=HOST names it. The default domain's links are
// those without `domain` and those naming its host (a link saved on a domain that became the
// default later keeps the host it was saved with).
struct StatsDomain {
    std::string host;  // lower case
    bool is_default = false;
};

// Methods throw StoreError (admin_store.hpp) when PostgreSQL or Redis cannot be read.
// Implementations are thread-safe.
class StatsStore {
  public:
    virtual ~StatsStore() = default;
    // nullopt: no such link.
    virtual std::optional<domain::LinkStats> link(const std::string& slug,
                                                  const domain::DayRange& range) = 0;
    // nullopt: no such partner. With `domain`, only the partner's links on that domain.
    virtual std::optional<domain::PartnerStats> partner(const std::string& slug,
                                                        const domain::DayRange& range,
                                                        const StatsDomain* domain) = 0;
    // Links ranked by human clicks in the range (links without clicks are left out); with
    // `domain`, only the links on that domain.
    virtual std::vector<domain::TopEntry> top(const domain::DayRange& range, std::size_t limit,
                                              const StatsDomain* domain) = 0;
    // Partners ranked by their links' human clicks in the range (top_partners() of every link's
    // entry; a store may sum per partner without listing the links).
    virtual std::vector<domain::TopEntry> top_partners(const domain::DayRange& range,
                                                       std::size_t limit,
                                                       const StatsDomain* domain) {
        return refgate::domain::top_partners(top(range, SIZE_MAX, domain), limit);
    }
    // Every link together, per day: the sums of what link() answers for each (`link` and
    // `partner` empty).
    virtual domain::LinkStats overview(const domain::DayRange& range) = 0;
    // The live figures, from Redis only; a store may answer the same figures for a second or two
    // (the console polls them). Throws StoreError when it has none.
    virtual LiveStats live();
    // Click caps (issue 44): each link's human clicks over all days, flushed plus still in Redis
    // (as link() counts them); a link without clicks is left out.
    virtual std::unordered_map<std::int64_t, std::uint64_t> human_totals(
        const std::vector<std::int64_t>& link_ids) {
        (void)link_ids;
        return {};
    }
};

}  // namespace refgate::admin
