#include "refgate/domain/stats_report.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "refgate/domain/counter_key.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace stats_report_test {

using namespace refgate;

namespace {

// How many times each day of [first, end) is covered: +1 for each day of an added span, -1 for
// each day of a subtracted one. Kept in a vector from the earliest day any span touches (the
// property loops below ask this some 17,000 times).
class DayCover {
  public:
    DayCover(std::int32_t first, std::int32_t end) : first_(first), end_(end) {}
    void add(std::int32_t from, std::int32_t to, int n) {
        first_ = std::min(first_, from);
        end_ = std::max(end_, to);
        spans_.push_back({from, to, n});
    }
    // Whether each day of [from, to] is covered once and every other day not at all.
    bool exact(std::int32_t from, std::int32_t to) const {
        std::vector<int> covered(static_cast<std::size_t>(end_ - first_), 0);
        for (const auto& s : spans_) {
            for (std::int32_t d = s.from; d < s.to; ++d) covered[d - first_] += s.n;
        }
        for (std::int32_t d = first_; d < end_; ++d) {
            if (covered[d - first_] != (d >= from && d <= to ? 1 : 0)) return false;
        }
        return true;
    }

  private:
    struct Span {
        std::int32_t from, to;
        int n;
    };
    std::int32_t first_, end_;
    std::vector<Span> spans_;
};

// Whether a day is the first of its month, read from format_day once per day of the years the
// property loops walk.
class FirstOfMonth {
  public:
    FirstOfMonth(std::int32_t first, std::int32_t end) : first_(first) {
        for (std::int32_t d = first; d < end; ++d)
            first_days_.push_back(domain::format_day(d).ends_with("-01"));
    }
    bool operator()(std::int32_t day) const {
        auto i = static_cast<std::size_t>(day - first_);
        return i < first_days_.size() ? first_days_[i] : domain::format_day(day).ends_with("-01");
    }

  private:
    std::int32_t first_;
    std::vector<bool> first_days_;
};

}  // namespace

TEST_CASE("stats dates are exactly YYYY-MM-DD and real days", "[stats]") {
    CHECK(domain::parse_day("1970-01-01") == 0);
    CHECK(domain::parse_day("2026-11-29") == domain::utc_day(1'795'910'400));
    CHECK(domain::format_day(*domain::parse_day("2024-02-29")) == "2024-02-29");
    CHECK_FALSE(domain::parse_day("2025-02-29"));
    CHECK_FALSE(domain::parse_day("2026-13-01"));
    CHECK_FALSE(domain::parse_day("2026-1-01"));
    CHECK_FALSE(domain::parse_day("2026-11-29T00:00:00Z"));
    CHECK_FALSE(domain::parse_day("yesterday"));
    CHECK_FALSE(domain::parse_day(""));
}

TEST_CASE("a stats range defaults to the last 30 days and refuses bad ones", "[stats]") {
    std::int32_t today = *domain::parse_day("2026-11-29");
    std::vector<domain::RangeProblem> problems;
    auto range = domain::parse_range(std::nullopt, std::nullopt, today, problems);
    REQUIRE(range);
    CHECK(domain::format_day(range->from) == "2026-10-31");
    CHECK(domain::format_day(range->to) == "2026-11-29");
    CHECK(range->days() == 30);

    range =
        domain::parse_range(std::string("2026-11-01"), std::string("2026-11-03"), today, problems);
    REQUIRE(range);
    CHECK(range->days() == 3);
    CHECK(problems.empty());

    CHECK_FALSE(
        domain::parse_range(std::string("2026-11-04"), std::string("2026-11-03"), today, problems));
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].field == "from");

    problems.clear();
    CHECK_FALSE(
        domain::parse_range(std::string("2025-01-01"), std::string("2026-11-03"), today, problems));
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].field == "to");

    problems.clear();
    CHECK(
        domain::parse_range(std::string("2025-10-26"), std::string("2026-11-29"), today, problems));
    CHECK(domain::parse_range(std::string("2025-10-25"), std::string("2026-11-29"), today,
                              problems) == std::nullopt);

    problems.clear();
    CHECK_FALSE(
        domain::parse_range(std::string("2026-02-30"), std::string("soon"), today, problems));
    CHECK(problems.size() == 2);
}

TEST_CASE("a range's whole calendar months are the ones it covers from the 1st to the last day",
          "[stats]") {
    auto span = [](const char* from, const char* to) {
        auto months = domain::whole_months({*domain::parse_day(from), *domain::parse_day(to)});
        return domain::format_day(months.first) + " " + domain::format_day(months.end);
    };
    // The last 365 days on 2026-11-29: December to October whole, the edges by day.
    CHECK(span("2025-11-30", "2026-11-29") == "2025-12-01 2026-11-01");
    CHECK(span("2026-01-01", "2026-12-31") == "2026-01-01 2027-01-01");
    CHECK(span("2024-02-01", "2024-02-29") == "2024-02-01 2024-03-01");  // a leap February
    CHECK(span("2026-02-01", "2026-02-28") == "2026-02-01 2026-03-01");
    CHECK(span("2025-12-31", "2026-01-01") == "2026-01-02 2026-01-02");  // none: to + 1, twice
    CHECK(span("2026-10-31", "2026-11-29") == "2026-11-30 2026-11-30");
    CHECK(span("2026-11-02", "2026-11-30") == "2026-12-01 2026-12-01");
    CHECK(span("2026-11-01", "2026-11-01") == "2026-11-02 2026-11-02");
}

TEST_CASE(
    "a range's roll-up reads cover each of its days once, an edge month as its sum less "
    "the days outside",
    "[stats]") {
    auto reads = [](const char* from, const char* to, const char* months_through) {
        auto r = domain::rollup_reads({*domain::parse_day(from), *domain::parse_day(to)},
                                      *domain::parse_day(months_through));
        auto span = [](const domain::DaySpan& d) {
            return std::string(d.subtract ? "-" : "+") + domain::format_day(d.first) + ".." +
                   domain::format_day(d.end);
        };
        return domain::format_day(r.months.first) + ".." + domain::format_day(r.months.end) + " " +
               span(r.before) + " " + span(r.after);
    };
    // The last 365 days on 2026-12-05: December 2025 is its sum less its first 5 days.
    CHECK(reads("2025-12-06", "2026-12-05", "2026-12-01") ==
          "2025-12-01..2026-12-01 -2025-12-01..2025-12-06 +2026-12-01..2026-12-06");
    // Mostly outside the range: by day.
    CHECK(reads("2025-12-26", "2026-12-05", "2026-12-01") ==
          "2026-01-01..2026-12-01 +2025-12-26..2026-01-01 +2026-12-01..2026-12-06");
    // The last 30 days: November less its first 5 days; December (no sums yet) by day.
    CHECK(reads("2026-11-06", "2026-12-05", "2026-12-01") ==
          "2026-11-01..2026-12-01 -2026-11-01..2026-11-06 +2026-12-01..2026-12-06");
    // An ended last month mostly inside: its sum less the days after `to`.
    CHECK(reads("2026-09-20", "2026-11-27", "2026-12-01") ==
          "2026-10-01..2026-12-01 +2026-09-20..2026-10-01 -2026-11-28..2026-12-01");
    // Both edges, no whole month between them.
    CHECK(reads("2026-10-03", "2026-11-27", "2026-12-01") ==
          "2026-10-01..2026-12-01 -2026-10-01..2026-10-03 -2026-11-28..2026-12-01");
    // A month without its sum yet is read by day.
    CHECK(reads("2026-11-06", "2026-12-05", "2026-11-01") ==
          "2026-12-06..2026-12-06 +2026-11-06..2026-12-06 +2026-12-06..2026-12-06");

    // Every range of up to 400 days over two years, every months_through: each day once, and
    // never more rows a link than by day outside whole months.
    std::int32_t start = *domain::parse_day("2025-01-01");
    const FirstOfMonth first_of_month(start - 64, start + 1024);
    for (std::int32_t through_month = 0; through_month < 25; through_month += 3) {
        // The first of a month, through_month months after the start.
        std::int32_t through = start;
        for (int m = 0; m < through_month; ++m)
            through = domain::whole_months({through, through + 40}).end;
        for (std::int32_t from = start; from < start + 420; from += 13) {
            for (std::int32_t to = from; to < from + 400; to += 17) {
                domain::DayRange range{from, to};
                domain::RollupReads r = domain::rollup_reads(range, through);
                DayCover cover(from, to + 1);
                cover.add(r.months.first, r.months.end, 1);
                for (const domain::DaySpan& s : {r.before, r.after})
                    cover.add(s.first, s.end, s.subtract ? -1 : 1);
                INFO(domain::format_day(from)
                     << " " << domain::format_day(to) << " " << domain::format_day(through));
                REQUIRE(cover.exact(from, to));
                CHECK(r.months.first <= r.months.end);
                CHECK((r.months.first == r.months.end || r.months.end <= through));
                auto rows = [&](const domain::RollupReads& x) {
                    std::int32_t months = 0;
                    for (std::int32_t d = x.months.first; d < x.months.end; ++d)
                        months += first_of_month(d) ? 1 : 0;
                    return months + (x.before.end - x.before.first) + (x.after.end - x.after.first);
                };
                domain::MonthSpan plain = domain::whole_months(range);
                plain.end = std::max(plain.first, std::min(plain.end, through));
                domain::RollupReads by_day{
                    plain, {from, plain.first, false}, {plain.end, to + 1, false}};
                CHECK(rows(r) <= rows(by_day));
            }
        }
    }
}

TEST_CASE(
    "the open days of a range are read from the base table, each day once, and never from the "
    "link days",
    "[stats]") {
    auto reads = [](const char* from, const char* to, const char* months_through,
                    const char* days_through) {
        auto r = domain::rollup_reads({*domain::parse_day(from), *domain::parse_day(to)},
                                      *domain::parse_day(months_through),
                                      *domain::parse_day(days_through));
        auto span = [](const domain::DaySpan& d) {
            return std::string(d.subtract ? "-" : "+") + domain::format_day(d.first) + ".." +
                   domain::format_day(d.end);
        };
        return domain::format_day(r.months.first) + ".." + domain::format_day(r.months.end) + " " +
               span(r.before) + " " + span(r.after) + " " + span(r.open);
    };
    // The last 30 days on 2026-12-05, today open: December 1-4 by day, the 5th from the base.
    CHECK(reads("2026-11-06", "2026-12-05", "2026-12-01", "2026-12-05") ==
          "2026-11-01..2026-12-01 -2026-11-01..2026-11-06 +2026-12-01..2026-12-05 "
          "+2026-12-05..2026-12-06");
    // Three open days (upkeep behind), and a range before them: none open.
    CHECK(reads("2026-12-01", "2026-12-05", "2026-12-01", "2026-12-03") ==
          "2026-12-06..2026-12-06 +2026-12-01..2026-12-03 +2026-12-06..2026-12-06 "
          "+2026-12-03..2026-12-06");
    CHECK(reads("2026-11-06", "2026-11-27", "2026-11-01", "2026-12-03") ==
          "2026-11-28..2026-11-28 +2026-11-06..2026-11-28 +2026-11-28..2026-11-28 "
          "+2026-11-28..2026-11-28");
    // Every link day open (days_through before the range).
    CHECK(reads("2026-12-02", "2026-12-05", "2026-12-01", "2026-12-01") ==
          "2026-12-06..2026-12-06 +2026-12-02..2026-12-02 +2026-12-06..2026-12-06 "
          "+2026-12-02..2026-12-06");

    // Every range of up to 400 days over two years, months_through at a month's start and
    // days_through from it on: each day once, the open days only from the base table.
    std::int32_t start = *domain::parse_day("2025-01-01");
    for (std::int32_t through_month = 0; through_month < 25; through_month += 5) {
        std::int32_t months_through = start;
        for (int m = 0; m < through_month; ++m)
            months_through = domain::whole_months({months_through, months_through + 40}).end;
        for (std::int32_t open_after : {0, 1, 3, 17, 45}) {
            std::int32_t days_through = months_through + open_after;
            for (std::int32_t from = start; from < start + 420; from += 19) {
                for (std::int32_t to = from; to < from + 400; to += 23) {
                    domain::RollupReads r =
                        domain::rollup_reads({from, to}, months_through, days_through);
                    DayCover cover(from, to + 1);
                    cover.add(r.months.first, r.months.end, 1);
                    // The last day read from the link days, if any.
                    std::int32_t last_link_day = std::numeric_limits<std::int32_t>::min();
                    for (const domain::DaySpan& s : {r.before, r.after}) {
                        cover.add(s.first, s.end, s.subtract ? -1 : 1);
                        if (s.end > s.first) last_link_day = std::max(last_link_day, s.end - 1);
                    }
                    cover.add(r.open.first, r.open.end, 1);
                    INFO(domain::format_day(from) << " " << domain::format_day(to) << " "
                                                  << domain::format_day(months_through) << " "
                                                  << domain::format_day(days_through));
                    REQUIRE(cover.exact(from, to));
                    CHECK(last_link_day < days_through);
                    CHECK(r.open.first <= r.open.end);
                    CHECK((r.open.first == r.open.end || r.open.first >= days_through));
                }
            }
        }
    }
}

}  // namespace stats_report_test
