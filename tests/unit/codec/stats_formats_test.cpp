#include "refgate/codec/stats_formats.hpp"

#include <catch2/catch.hpp>

#include "refgate/domain/counter_key.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace stats_formats_test {

using namespace refgate;

TEST_CASE("stats CSV has a header row, CRLF line ends and RFC 4180 quoting", "[stats]") {
    CHECK(codec::csv_field("plain") == "plain");
    CHECK(codec::csv_field("a,b") == "\"a,b\"");
    CHECK(codec::csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(codec::csv_field("two\nlines") == "\"two\nlines\"");

    domain::LinkStats s;
    s.link = "alpha";
    s.partner = "tailscale";
    s.range = {*domain::parse_day("2026-11-28"), *domain::parse_day("2026-11-29")};
    s.days.push_back({s.range.from, {3, 1, 0}, 2, {{"direct", 2}, {"news", 1}}});
    s.days.push_back({s.range.to, {0, 0, 4}, 0, {}});
    CHECK(codec::to_csv(s) ==
          "day,human,bot,prefetch,unique_estimate,human:direct,human:news\r\n"
          "2026-11-28,3,1,0,2,2,1\r\n"
          "2026-11-29,0,0,4,0,0,0\r\n");
    auto json = codec::to_json(s);
    CHECK(json["totals"]["human"] == 3);
    CHECK(json["totals"]["prefetch"] == 4);
    CHECK(json["totals"]["human_by_channel"]["news"] == 1);
    CHECK(json["days"][0]["unique_estimate"] == 2);
}

TEST_CASE("top links are ranked by human clicks, then by slug", "[stats]") {
    std::vector<domain::TopEntry> entries = {{"b", "p", {5, 0, 0}, ""},
                                             {"a", "p", {5, 9, 0}, ""},
                                             {"c", "q", {7, 0, 0}, ""},
                                             {"d", "q", {1, 0, 0}, ""}};
    domain::rank_top(entries, 3);
    REQUIRE(entries.size() == 3);
    CHECK(entries[0].link == "c");
    CHECK(entries[1].link == "a");
    CHECK(entries[2].link == "b");
    CHECK(codec::top_to_csv(entries).starts_with(
        "rank,link,partner,human,bot,prefetch,domain\r\n1,c,q,7,0,0,\r\n"));
}

TEST_CASE("a link's stats list clicks per country and per rule branch only for a targeted link",
          "[stats]") {
    domain::LinkStats stats{
        .link = "kindle", .partner = "amazon-us", .range = {0, 0}, .days = {{}}};
    auto plain = codec::to_json(stats);
    CHECK_FALSE(plain.contains("by_country"));
    CHECK_FALSE(plain.contains("by_rule"));

    stats.targeting.emplace();
    auto empty = codec::to_json(stats);
    CHECK(empty["by_country"] == nlohmann::ordered_json::array());
    CHECK(empty["by_rule"] == nlohmann::ordered_json::array());

    stats.targeting->add("US", "10", 0, 2);
    stats.targeting->add("DE", "1", 0, 5);
    stats.targeting->add("DE", "1", 1, 1);
    stats.targeting->add("NZ", "4.2", 0, 1);
    stats.targeting->add("US", "4.1", 0, 3);
    stats.targeting->add("US", "0", 2, 1);
    auto j = codec::to_json(stats);
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

}  // namespace stats_formats_test
