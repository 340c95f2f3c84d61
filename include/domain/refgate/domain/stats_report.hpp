#pragma once

// The stats API's figures, apart from where they come from and how they are shown (JSON and CSV:
// codec/stats_formats.hpp). Pure functions: the admin handler parses the query here, asks a
// StatsStore, renders with codec.

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace refgate::domain {

// Inclusive range of UTC days (days since 1970-01-01).
struct DayRange {
    std::int32_t from = 0;
    std::int32_t to = 0;
    std::size_t days() const { return static_cast<std::size_t>(to - from + 1); }
};

// The whole calendar months inside a range, [first, end) in days since the epoch; first == end ==
// range.to + 1 when there is none. Long ranges read these from per-month sums, the rest by day.
struct MonthSpan {
    std::int32_t first = 0;
    std::int32_t end = 0;
};
MonthSpan whole_months(const DayRange& range);

// How per-link sums over a range are read from the roll-ups (sql/014, 015): the month sums of the
// months starting in [months.first, months.end), and the link days of `before` and `after`
// ([first, end) in days), added, or subtracted where `subtract`. Only months before
// `months_through` have month sums. An edge month that has one and lies mostly inside the range
// is read as its sum less its days outside (the last 365 days: 11 + 1 month rows, 5 + 5 day rows
// a link instead of 11 month and 31 day rows), so that the rows an answer reads halve.
struct DaySpan {
    std::int32_t first = 0;
    std::int32_t end = 0;
    bool subtract = false;
};
//
// Only days before `days_through` have link days (sql/026: the open day, today, is not rolled up
// per link by the flush): the days of the range from it on are read from the base table, `open`
// (never subtracted). months_through <= days_through (a month is closed after its days).
struct RollupReads {
    MonthSpan months;
    DaySpan before;
    DaySpan after;
    DaySpan open;  // from the base table: [max(from, days_through), to]; empty: first == end
};
RollupReads rollup_reads(const DayRange& range, std::int32_t months_through,
                         std::int32_t days_through = std::numeric_limits<std::int32_t>::max());

constexpr std::int32_t kMaxStatsDays = 400;
constexpr std::int32_t kDefaultStatsDays = 30;

// "2026-11-29" -> days since the epoch; nullopt unless it is exactly YYYY-MM-DD and a real date.
std::optional<std::int32_t> parse_day(std::string_view text);

struct RangeProblem {
    std::string field;  // "from", "to"
    std::string message;
};

// from/to as given in the query (nullopt: absent). `to` defaults to today, `from` to the 30 days
// ending at `to`. Problems: a malformed date, from after to, more than kMaxStatsDays days.
std::optional<DayRange> parse_range(const std::optional<std::string>& from,
                                    const std::optional<std::string>& to, std::int32_t today,
                                    std::vector<RangeProblem>& problems);

struct ClassCounts {
    std::uint64_t human = 0;
    std::uint64_t bot = 0;
    std::uint64_t prefetch = 0;
    std::uint64_t scanner = 0;
    // class: 0 human, 1 bot, 2 prefetch, 3 scanner (ClickClass order)
    void add(std::uint8_t click_class, std::uint64_t n);
    void add(const ClassCounts& other);
    std::uint64_t total() const { return human + bot + prefetch + scanner; }
};

struct LinkDay {
    std::int32_t day = 0;
    ClassCounts clicks;
    std::uint64_t unique_estimate = 0;
    std::map<std::string, std::uint64_t> human_by_channel;
};

// A link's clicks over the range per reader country and per rule branch that answered (links
// with targeting rules, where a country database is configured): refgate_clicks_by_country_daily.
// Rule branches: "0" the link's own destination, "3" its third rule, "4.2" the second branch of
// its fourth rule's split; country "XX" when the address has none.
struct TargetingBreakdown {
    std::map<std::string, ClassCounts> by_country;
    std::map<std::string, ClassCounts> by_rule;
    // Adds one row of the view (`click_class` as ClassCounts::add takes it).
    void add(const std::string& country, const std::string& rule, std::uint8_t click_class,
             std::uint64_t n);
};

// A placement's human clicks in a link's stats (issue 42): the channel, the token the partner's
// Locations carry for it, and its clicks over the answer's range.
struct PlacementClicks {
    std::string channel;
    std::string token;
    std::uint64_t human_clicks = 0;
};

struct LinkStats {
    std::string link;
    std::string partner;
    DayRange range;
    std::vector<LinkDay> days;  // one per day of the range, in order
    // Present for a link with rules (or with such clicks in the range); none: the JSON has no
    // by_country or by_rule.
    std::optional<TargetingBreakdown> targeting;
    // Present for a link whose partner (or a rule's) has a sub-ID parameter: every channel with
    // human clicks in the range, most clicked first; none: the JSON has no placements.
    std::optional<std::vector<PlacementClicks>> placements;
    // The link's domain as stored (issue 46): empty on the default domain.
    std::string domain;
};

struct TopEntry {
    std::string link;
    std::string partner;
    ClassCounts clicks;
    // The link's domain as stored (issue 46): empty on the default domain, and in partners'
    // entries.
    std::string domain;
};

struct PartnerStats {
    std::string partner;
    DayRange range;
    std::vector<std::pair<std::int32_t, ClassCounts>> days;  // one per day of the range
    std::vector<TopEntry> links;  // every link of the partner, by slug then domain
};

// Orders by human clicks (most first), then by slug (then domain), and keeps `limit`.
void rank_top(std::vector<TopEntry>& entries, std::size_t limit);

// Partners ranked by human clicks (most first, then by slug), from the links' figures; `limit`
// kept.
std::vector<TopEntry> top_partners(const std::vector<TopEntry>& links, std::size_t limit);

}  // namespace refgate::domain
