#include "refgate/domain/stats_report.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>

#include "refgate/domain/counter_key.hpp"

namespace refgate::domain {

void TargetingBreakdown::add(const std::string& country, const std::string& rule,
                             std::uint8_t click_class, std::uint64_t n) {
    by_country[country].add(click_class, n);
    by_rule[rule].add(click_class, n);
}

std::optional<std::int32_t> parse_day(std::string_view text) {
    if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
    auto number = [&](std::size_t at, std::size_t length) -> std::optional<int> {
        int value = 0;
        for (std::size_t i = at; i < at + length; ++i) {
            if (text[i] < '0' || text[i] > '9') return std::nullopt;
            value = value * 10 + (text[i] - '0');
        }
        return value;
    };
    auto y = number(0, 4), m = number(5, 2), d = number(8, 2);
    if (!y || !m || !d) return std::nullopt;
    std::chrono::year_month_day date{std::chrono::year{*y},
                                     std::chrono::month{static_cast<unsigned>(*m)},
                                     std::chrono::day{static_cast<unsigned>(*d)}};
    if (!date.ok() || *y < 1970) return std::nullopt;
    return static_cast<std::int32_t>(std::chrono::sys_days(date).time_since_epoch().count());
}

MonthSpan whole_months(const DayRange& range) {
    using namespace std::chrono;
    auto month_start = [](std::int32_t day) {
        year_month_day date{sys_days{days{day}}};
        return static_cast<std::int32_t>(
            sys_days{date.year() / date.month() / 1}.time_since_epoch().count());
    };
    std::int32_t first = month_start(range.from);
    if (first < range.from) {
        year_month_day date{sys_days{days{first}}};
        first = static_cast<std::int32_t>(
            sys_days{(date.year() / date.month() + months{1}) / 1}.time_since_epoch().count());
    }
    std::int32_t end = month_start(range.to + 1);
    if (first >= end) return {range.to + 1, range.to + 1};
    return {first, end};
}

namespace {

std::int32_t first_of_month(std::int32_t day) {
    using namespace std::chrono;
    year_month_day date{sys_days{days{day}}};
    return static_cast<std::int32_t>(
        sys_days{date.year() / date.month() / 1}.time_since_epoch().count());
}

std::int32_t first_of_next_month(std::int32_t day) {
    using namespace std::chrono;
    year_month_day date{sys_days{days{day}}};
    return static_cast<std::int32_t>(
        sys_days{(date.year() / date.month() + months{1}) / 1}.time_since_epoch().count());
}

}  // namespace

RollupReads rollup_reads(const DayRange& range, std::int32_t months_through,
                         std::int32_t days_through) {
    const std::int32_t end = range.to + 1;
    MonthSpan months = whole_months(range);
    months.end = std::max(months.first, std::min(months.end, months_through));
    // The days outside the month sums: [from, months.first) and [months.end, to].
    RollupReads reads{months, {range.from, months.first, false}, {months.end, end, false}};
    // The first month, partly in the range: its sum less the days before `from`, when those are
    // fewer and the month sums go on from the next month (or there are none yet).
    std::int32_t lead = first_of_month(range.from);
    std::int32_t lead_end = first_of_next_month(range.from);
    bool no_months = months.first == months.end;
    if (lead < range.from && lead < months_through && lead_end <= end &&
        range.from - lead < lead_end - range.from && (months.first == lead_end || no_months)) {
        reads.months = {lead, no_months ? lead_end : months.end};
        reads.before = {lead, range.from, true};
        reads.after = {reads.months.end, end, false};
    }
    // The last month, partly in the range: its sum less the days after `to`, the same way.
    std::int32_t trail = first_of_month(range.to);
    std::int32_t trail_end = first_of_next_month(range.to);
    if (end < trail_end && trail < months_through && trail >= range.from &&
        trail_end - end < end - trail &&
        (reads.months.end == trail || reads.months.first == reads.months.end)) {
        if (reads.months.first == reads.months.end) {
            reads.months = {trail, trail_end};
            reads.before = {range.from, trail, false};
        } else {
            reads.months.end = trail_end;
        }
        reads.after = {end, trail_end, true};
    }
    // The open days: from the base table, and not from the link days read by day.
    std::int32_t open = std::max(range.from, days_through);
    reads.open = open < end ? DaySpan{open, end, false} : DaySpan{end, end, false};
    for (DaySpan* s : {&reads.before, &reads.after}) {
        if (!s->subtract) s->end = std::max(s->first, std::min(s->end, reads.open.first));
    }
    return reads;
}

std::optional<DayRange> parse_range(const std::optional<std::string>& from,
                                    const std::optional<std::string>& to, std::int32_t today,
                                    std::vector<RangeProblem>& problems) {
    std::size_t before = problems.size();
    DayRange range{today - (kDefaultStatsDays - 1), today};
    if (to) {
        if (auto day = parse_day(*to)) {
            range.to = *day;
            range.from = *day - (kDefaultStatsDays - 1);
        } else {
            problems.push_back({"to", "must be a date written YYYY-MM-DD"});
        }
    }
    if (from) {
        if (auto day = parse_day(*from)) {
            range.from = *day;
        } else {
            problems.push_back({"from", "must be a date written YYYY-MM-DD"});
        }
    }
    if (problems.size() != before) return std::nullopt;
    if (range.from > range.to) {
        problems.push_back({"from", "must not be after to"});
        return std::nullopt;
    }
    if (range.to - range.from + 1 > kMaxStatsDays) {
        problems.push_back(
            {"to", "the range may span at most " + std::to_string(kMaxStatsDays) + " days"});
        return std::nullopt;
    }
    return range;
}

void ClassCounts::add(std::uint8_t click_class, std::uint64_t n) {
    switch (click_class) {
        case 0:
            human += n;
            break;
        case 1:
            bot += n;
            break;
        case 2:
            prefetch += n;
            break;
        case 3:
            scanner += n;
            break;
        default:
            break;
    }
}

void ClassCounts::add(const ClassCounts& other) {
    human += other.human;
    bot += other.bot;
    prefetch += other.prefetch;
    scanner += other.scanner;
}

void rank_top(std::vector<TopEntry>& entries, std::size_t limit) {
    std::sort(entries.begin(), entries.end(), [](const TopEntry& a, const TopEntry& b) {
        if (a.clicks.human != b.clicks.human) return a.clicks.human > b.clicks.human;
        if (a.link != b.link) return a.link < b.link;
        return a.domain < b.domain;
    });
    if (entries.size() > limit) entries.resize(limit);
}

std::vector<TopEntry> top_partners(const std::vector<TopEntry>& links, std::size_t limit) {
    std::map<std::string, ClassCounts> sums;
    for (const auto& e : links) sums[e.partner].add(e.clicks);
    std::vector<TopEntry> partners;
    for (const auto& [partner, clicks] : sums) partners.push_back({partner, partner, clicks, {}});
    rank_top(partners, limit);  // `link` holds the partner's slug: the tie-break
    return partners;
}

}  // namespace refgate::domain
