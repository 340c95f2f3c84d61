#pragma once

// The roll-ups of a bucket's counts (sql/014_rollups.sql, 015), summed in the flusher, which has
// every counter of the bucket in memory already: the flush's roll-up statement is then plain
// upserts of a row per (link, day) of a closed day (a late bucket's; sql/026), per (link, month)
// of an ended month, per (partner, day) and per (day, channel), without grouping or look-ups in SQL
// (issue 41: the flush with roll-ups at most 1.3x of the flush without).

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace refgate::clicks {

// The four click classes, in the roll-ups' column order: human, bot, prefetch, scanner.
using ClassSums = std::array<std::uint64_t, 4>;

// A row of refgate_click_counts as the flush adds it (after the channel cap's fold).
struct ChannelCountRow {
    std::int64_t link_id = 0;
    std::int32_t day = 0;  // days since 1970-01-01 (UTC)
    std::string channel;
    ClassSums classes{};
};

// What of refgate_rollup_state the sums depend on (read in the flush's transaction).
struct RollupScope {
    // Links with a greater id are not rolled up yet (the build reads them later); none once the
    // build is complete.
    std::optional<std::int64_t> rolled_up_through;
    std::optional<std::int32_t> base_from;    // the channels: only days from this one (retention)
    std::int32_t months_through = 0;          // first day of the first month without month sums
    std::int64_t months_closed_through = -1;  // ...except for these links while it is closed
    // The first day without link days (sql/026_rollup_open_days.sql: the open day, read from the
    // base table), except for the links up to days_closed_through while it is closed; a late
    // bucket's rows of the days before it are added to their link days. Default: every day has
    // link days.
    std::int32_t days_through = std::numeric_limits<std::int32_t>::max();
    std::int64_t days_closed_through = -1;
};

struct RollupSums {
    std::vector<std::tuple<std::int64_t, std::int32_t, ClassSums>> link_days;    // (link, day)
    std::vector<std::tuple<std::int64_t, std::int32_t, ClassSums>> link_months;  // (link, month)
    std::vector<std::tuple<std::int64_t, std::int32_t, ClassSums>> partner_days;
    std::vector<std::tuple<std::int32_t, std::string, ClassSums>> channel_days;
};

// The first day of `day`'s UTC month, and of the month after it (days since 1970-01-01).
std::int32_t month_start(std::int32_t day);
std::int32_t next_month_start(std::int32_t month);

// The roll-up rows of `rows` (sorted by link, day, channel), each list in its primary key's order;
// link days only of the days before `scope.days_through` (and of that day for the links it has
// closed).
// `partner_of`: the partner of every link that exists; only those count towards partners and
// channels (as the views join them), while link days and months keep a deleted link's counts.
RollupSums rollup_sums(const std::vector<ChannelCountRow>& rows, const RollupScope& scope,
                       const std::unordered_map<std::int64_t, std::int64_t>& partner_of);

}  // namespace refgate::clicks
