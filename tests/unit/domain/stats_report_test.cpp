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

TEST_CASE("stats CSV has a header row, CRLF line ends and RFC 4180 quoting", "[stats]") {
    CHECK(csv_field("plain") == "plain");
    CHECK(csv_field("a,b") == "\"a,b\"");
    CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(csv_field("two\nlines") == "\"two\nlines\"");

    LinkStats s;
    s.link = "alpha";
    s.partner = "tailscale";
    s.range = {*parse_day("2026-11-28"), *parse_day("2026-11-29")};
    s.days.push_back({s.range.from, {3, 1, 0}, 2, {{"direct", 2}, {"news", 1}}});
    s.days.push_back({s.range.to, {0, 0, 4}, 0, {}});
    CHECK(to_csv(s) ==
          "day,human,bot,prefetch,unique_estimate,human:direct,human:news\r\n"
          "2026-11-28,3,1,0,2,2,1\r\n"
          "2026-11-29,0,0,4,0,0,0\r\n");
    auto json = to_json(s);
    CHECK(json["totals"]["human"] == 3);
    CHECK(json["totals"]["prefetch"] == 4);
    CHECK(json["totals"]["human_by_channel"]["news"] == 1);
    CHECK(json["days"][0]["unique_estimate"] == 2);
}

TEST_CASE("top links are ranked by human clicks, then by slug", "[stats]") {
    std::vector<TopEntry> entries = {
        {"b", "p", {5, 0, 0}}, {"a", "p", {5, 9, 0}}, {"c", "q", {7, 0, 0}}, {"d", "q", {1, 0, 0}}};
    rank_top(entries, 3);
    REQUIRE(entries.size() == 3);
    CHECK(entries[0].link == "c");
    CHECK(entries[1].link == "a");
    CHECK(entries[2].link == "b");
    CHECK(
        top_to_csv(entries).starts_with("rank,link,partner,human,bot,prefetch\r\n1,c,q,7,0,0\r\n"));
}

TEST_CASE("a link's stats list clicks per country and per rule branch only for a targeted link",
          "[stats]") {
    LinkStats stats{.link = "kindle", .partner = "amazon-us", .range = {0, 0}, .days = {{}}};
    auto plain = to_json(stats);
    CHECK_FALSE(plain.contains("by_country"));
    CHECK_FALSE(plain.contains("by_rule"));

    stats.targeting.emplace();
    auto empty = to_json(stats);
    CHECK(empty["by_country"] == nlohmann::ordered_json::array());
    CHECK(empty["by_rule"] == nlohmann::ordered_json::array());

    stats.targeting->add("US", "10", 0, 2);
    stats.targeting->add("DE", "1", 0, 5);
    stats.targeting->add("DE", "1", 1, 1);
    stats.targeting->add("NZ", "4.2", 0, 1);
    stats.targeting->add("US", "4.1", 0, 3);
    stats.targeting->add("US", "0", 2, 1);
    auto j = to_json(stats);
    // Countries by human clicks (then by code), rule branches in the rules' order (not as text
    // sorts "10").
    CHECK(j["by_country"] == nlohmann::ordered_json::parse(R"([
        {"country": "DE", "human": 5, "bot": 1, "prefetch": 0},
        {"country": "US", "human": 5, "bot": 0, "prefetch": 1},
        {"country": "NZ", "human": 1, "bot": 0, "prefetch": 0}])"));
    std::vector<std::string> rules;
    for (const auto& r : j["by_rule"]) rules.push_back(r["rule"]);
    CHECK(rules == std::vector<std::string>{"0", "1", "4.1", "4.2", "10"});
    CHECK(j["by_rule"][1]["human"] == 5);
    CHECK(j["by_rule"][1]["bot"] == 1);
}

}  // namespace stats_report_test
