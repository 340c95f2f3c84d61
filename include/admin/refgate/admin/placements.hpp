#pragma once

// Placements (issue 42) for the admin API and the CLI: a link's placement tokens with their
// human clicks, and the link and channel of a token. The clicks are the per-link stats' (deltas
// still in Redis included); the tokens are the admin store's.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "refgate/admin/admin_store.hpp"
#include "refgate/admin/stats_store.hpp"

namespace refgate::admin {

// The channels with human clicks of a link in `range`, most clicked first (then by name);
// nullopt when there is no such link.
std::optional<std::vector<std::pair<std::string, std::uint64_t>>> channel_clicks(
    StatsStore& stats, const std::string& slug, const domain::DayRange& range);
// The same from a link's stats.
std::vector<std::pair<std::string, std::uint64_t>> channel_clicks(const domain::LinkStats& stats);

// The placements of a link's stats answer (GET /api/v1/stats/links/{slug}): each channel with
// human clicks in the stats, its token and clicks, as GET /api/v1/links/{slug}/placements gives
// them; none when no partner of the link has a sub-ID parameter (or the link is gone).
std::optional<std::vector<domain::PlacementClicks>> stats_placements(
    AdminStore& store, const domain::LinkStats& stats);

// Every channel with human clicks in `range`, its token and clicks.
Result<codec::LinkPlacements> link_placements(AdminStore& store, StatsStore& stats,
                                              const std::string& slug,
                                              const domain::DayRange& range);
// The link and channel of a token: the channel is looked for among the link's channels with
// clicks in `range` (and "direct", "other"); none when none gives the token.
Result<codec::PlacementFound> find_placement(AdminStore& store, StatsStore& stats,
                                             const std::string& token,
                                             const domain::DayRange& range);

}  // namespace refgate::admin
