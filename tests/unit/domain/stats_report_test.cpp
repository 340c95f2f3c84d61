#include "refgate/domain/stats_report.hpp"

#include <catch2/catch.hpp>

#include "refgate/domain/counter_key.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace stats_report_test {

using namespace refgate;

TEST_CASE("stats dates are exactly YYYY-MM-DD and real days", "[stats]") {
    CHECK(parse_day("1970-01-01") == 0);
    CHECK(parse_day("2026-11-29") == utc_day(1'795'910'400));
    CHECK(format_day(*parse_day("2024-02-29")) == "2024-02-29");
    CHECK_FALSE(parse_day("2025-02-29"));
    CHECK_FALSE(parse_day("2026-13-01"));
    CHECK_FALSE(parse_day("2026-1-01"));
    CHECK_FALSE(parse_day("2026-11-29T00:00:00Z"));
    CHECK_FALSE(parse_day("yesterday"));
    CHECK_FALSE(parse_day(""));
}

TEST_CASE("a stats range defaults to the last 30 days and refuses bad ones", "[stats]") {
    std::int32_t today = *parse_day("2026-11-29");
    std::vector<RangeProblem> problems;
    auto range = parse_range(std::nullopt, std::nullopt, today, problems);
    REQUIRE(range);
    CHECK(format_day(range->from) == "2026-10-31");
    CHECK(format_day(range->to) == "2026-11-29");
    CHECK(range->days() == 30);

    range = parse_range(std::string("2026-11-01"), std::string("2026-11-03"), today, problems);
    REQUIRE(range);
    CHECK(range->days() == 3);
    CHECK(problems.empty());

    CHECK_FALSE(parse_range(std::string("2026-11-04"), std::string("2026-11-03"), today, problems));
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].field == "from");

    problems.clear();
    CHECK_FALSE(parse_range(std::string("2025-01-01"), std::string("2026-11-03"), today, problems));
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].field == "to");

    problems.clear();
    CHECK(parse_range(std::string("2025-10-26"), std::string("2026-11-29"), today, problems));
    CHECK(parse_range(std::string("2025-10-25"), std::string("2026-11-29"), today, problems) ==
          std::nullopt);

    problems.clear();
    CHECK_FALSE(parse_range(std::string("2026-02-30"), std::string("soon"), today, problems));
    CHECK(problems.size() == 2);
}

TEST_CASE("a range's whole calendar months are the ones it covers from the 1st to the last day",
          "[stats]") {
    auto span = [](const char* from, const char* to) {
        auto months = whole_months({*parse_day(from), *parse_day(to)});
        return format_day(months.first) + " " + format_day(months.end);
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

}  // namespace stats_report_test
