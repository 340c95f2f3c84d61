#include "refgate/domain/stats_report.hpp"

#include <catch2/catch.hpp>
#include <map>

#include "refgate/domain/counter_key.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace stats_report_test {

using namespace refgate;

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
    for (std::int32_t through_month = 0; through_month < 25; through_month += 3) {
        // The first of a month, through_month months after the start.
        std::int32_t through = start;
        for (int m = 0; m < through_month; ++m)
            through = domain::whole_months({through, through + 40}).end;
        for (std::int32_t from = start; from < start + 420; from += 13) {
            for (std::int32_t to = from; to < from + 400; to += 17) {
                domain::DayRange range{from, to};
                domain::RollupReads r = domain::rollup_reads(range, through);
                std::map<std::int32_t, int> covered;
                for (std::int32_t d = r.months.first; d < r.months.end; ++d) ++covered[d];
                for (const domain::DaySpan& s : {r.before, r.after}) {
                    for (std::int32_t d = s.first; d < s.end; ++d)
                        covered[d] += s.subtract ? -1 : 1;
                }
                bool exact = true;
                for (const auto& [day, n] : covered) {
                    bool inside = day >= from && day <= to;
                    if (n != (inside ? 1 : 0)) exact = false;
                }
                for (std::int32_t d = from; d <= to; ++d) {
                    if (covered[d] != 1) exact = false;
                }
                INFO(domain::format_day(from)
                     << " " << domain::format_day(to) << " " << domain::format_day(through));
                REQUIRE(exact);
                CHECK(r.months.first <= r.months.end);
                CHECK((r.months.first == r.months.end || r.months.end <= through));
                auto rows = [](const domain::RollupReads& x) {
                    std::int32_t months = 0;
                    for (std::int32_t d = x.months.first; d < x.months.end; ++d)
                        months += domain::format_day(d).ends_with("-01") ? 1 : 0;
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
                    std::map<std::int32_t, int> covered, link_days;
                    for (std::int32_t d = r.months.first; d < r.months.end; ++d) ++covered[d];
                    for (const domain::DaySpan& s : {r.before, r.after}) {
                        for (std::int32_t d = s.first; d < s.end; ++d) {
                            covered[d] += s.subtract ? -1 : 1;
                            ++link_days[d];
                        }
                    }
                    for (std::int32_t d = r.open.first; d < r.open.end; ++d) ++covered[d];
                    bool exact = true;
                    for (const auto& [day, n] : covered) {
                        if (n != (day >= from && day <= to ? 1 : 0)) exact = false;
                    }
                    for (std::int32_t d = from; d <= to; ++d) {
                        if (covered[d] != 1) exact = false;
                    }
                    INFO(domain::format_day(from) << " " << domain::format_day(to) << " "
                                                  << domain::format_day(months_through) << " "
                                                  << domain::format_day(days_through));
                    REQUIRE(exact);
                    CHECK(link_days.lower_bound(days_through) == link_days.end());
                    CHECK(r.open.first <= r.open.end);
                    CHECK((r.open.first == r.open.end || r.open.first >= days_through));
                }
            }
        }
    }
}

}  // namespace stats_report_test
