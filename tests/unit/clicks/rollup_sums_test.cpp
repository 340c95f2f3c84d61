#include "refgate/clicks/rollup_sums.hpp"

#include <catch2/catch.hpp>

#include "refgate/domain/counter_key.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace rollup_sums_test {

using namespace refgate;

// 2026-11-29 and the days after it, as days since 1970-01-01.
const std::int32_t kNov29 = domain::utc_day(1'795'910'400);
const std::int32_t kNov30 = kNov29 + 1;
const std::int32_t kDec01 = kNov29 + 2;

using Rows = std::vector<clicks::ChannelCountRow>;
using Triple64 = std::tuple<std::int64_t, std::int32_t, clicks::ClassSums>;

TEST_CASE("the month of a day and the month after it", "[clicks][rollups]") {
    CHECK(domain::format_day(kNov29) == "2026-11-29");
    CHECK(domain::format_day(clicks::month_start(kNov29)) == "2026-11-01");
    CHECK(domain::format_day(clicks::month_start(kDec01)) == "2026-12-01");
    CHECK(clicks::next_month_start(clicks::month_start(kNov29)) == kDec01);
    CHECK(domain::format_day(clicks::next_month_start(
              clicks::month_start(domain::utc_day(1'798'675'200)))) == "2027-01-01");
}

TEST_CASE("a bucket's channels add up per link day, partner day and day channel",
          "[clicks][rollups]") {
    Rows rows{{7, kNov29, "direct", {1, 2, 0, 0}},
              {7, kNov29, "news", {3, 0, 1, 0}},
              {7, kNov30, "direct", {5, 0, 0, 1}},
              {8, kNov29, "news", {10, 0, 0, 0}},
              {9, kNov29, "direct", {100, 0, 0, 0}}};
    clicks::RollupScope scope;
    scope.months_through = clicks::month_start(kNov29);
    // Link 9 was deleted: its days stay per link, and leave the partners and channels.
    std::unordered_map<std::int64_t, std::int64_t> partner_of{{7, 1}, {8, 1}};
    clicks::RollupSums sums = rollup_sums(rows, scope, partner_of);
    CHECK(sums.link_days == std::vector<Triple64>{{7, kNov29, {4, 2, 1, 0}},
                                                  {7, kNov30, {5, 0, 0, 1}},
                                                  {8, kNov29, {10, 0, 0, 0}},
                                                  {9, kNov29, {100, 0, 0, 0}}});
    CHECK(sums.partner_days ==
          std::vector<Triple64>{{1, kNov29, {14, 2, 1, 0}}, {1, kNov30, {5, 0, 0, 1}}});
    CHECK(sums.channel_days ==
          std::vector<std::tuple<std::int32_t, std::string, clicks::ClassSums>>{
              {kNov29, "direct", {1, 2, 0, 0}},
              {kNov29, "news", {13, 0, 1, 0}},
              {kNov30, "direct", {5, 0, 0, 1}}});
    // The current month has no month sums: the answers read its days.
    CHECK(sums.link_months.empty());
}

TEST_CASE("month sums only of ended months, and of the month being closed for closed links",
          "[clicks][rollups]") {
    Rows rows{{7, kNov30, "direct", {1, 0, 0, 0}},
              {7, kDec01, "direct", {2, 0, 0, 0}},
              {8, kNov30, "direct", {4, 0, 0, 0}}};
    std::unordered_map<std::int64_t, std::int64_t> partner_of{{7, 1}, {8, 2}};
    clicks::RollupScope ended;
    ended.months_through = kDec01;  // November has ended and is closed
    CHECK(rollup_sums(rows, ended, partner_of).link_months ==
          std::vector<Triple64>{{7, clicks::month_start(kNov29), {1, 0, 0, 0}},
                                {8, clicks::month_start(kNov29), {4, 0, 0, 0}}});
    clicks::RollupScope closing;
    closing.months_through =
        clicks::month_start(kNov29);  // November is being closed, link 7 is done
    closing.months_closed_through = 7;
    CHECK(rollup_sums(rows, closing, partner_of).link_months ==
          std::vector<Triple64>{{7, clicks::month_start(kNov29), {1, 0, 0, 0}}});
}

TEST_CASE("links not built yet and channels of days before retention are left out",
          "[clicks][rollups]") {
    Rows rows{{7, kNov29, "direct", {1, 0, 0, 0}},
              {7, kNov30, "direct", {2, 0, 0, 0}},
              {8, kNov30, "direct", {4, 0, 0, 0}}};
    std::unordered_map<std::int64_t, std::int64_t> partner_of{{7, 1}, {8, 1}};
    clicks::RollupScope scope;
    scope.months_through = clicks::month_start(kNov29);
    scope.rolled_up_through = 7;
    scope.base_from = kNov30;
    clicks::RollupSums sums = rollup_sums(rows, scope, partner_of);
    CHECK(sums.link_days ==
          std::vector<Triple64>{{7, kNov29, {1, 0, 0, 0}}, {7, kNov30, {2, 0, 0, 0}}});
    CHECK(sums.partner_days ==
          std::vector<Triple64>{{1, kNov29, {1, 0, 0, 0}}, {1, kNov30, {2, 0, 0, 0}}});
    CHECK(sums.channel_days ==
          std::vector<std::tuple<std::int32_t, std::string, clicks::ClassSums>>{
              {kNov30, "direct", {2, 0, 0, 0}}});
}

TEST_CASE(
    "no link days of the open day, a late bucket's of closed days, and of the day being closed "
    "for the links it closed",
    "[clicks][rollups]") {
    Rows rows{{7, kNov29, "direct", {1, 0, 0, 0}},
              {7, kNov30, "direct", {2, 0, 0, 0}},
              {7, kDec01, "direct", {4, 0, 0, 0}},
              {8, kNov30, "news", {8, 0, 0, 0}},
              {8, kDec01, "news", {16, 0, 0, 0}}};
    std::unordered_map<std::int64_t, std::int64_t> partner_of{{7, 1}, {8, 1}};
    clicks::RollupScope open;
    open.months_through = clicks::month_start(kNov29);
    open.days_through = kDec01;  // December 1st is open: read from the base table
    clicks::RollupSums sums = rollup_sums(rows, open, partner_of);
    CHECK(sums.link_days == std::vector<Triple64>{{7, kNov29, {1, 0, 0, 0}},
                                                  {7, kNov30, {2, 0, 0, 0}},
                                                  {8, kNov30, {8, 0, 0, 0}}});
    // The partner and channel sums of every day, the open one too.
    CHECK(sums.partner_days == std::vector<Triple64>{{1, kNov29, {1, 0, 0, 0}},
                                                     {1, kNov30, {10, 0, 0, 0}},
                                                     {1, kDec01, {20, 0, 0, 0}}});
    CHECK(sums.channel_days.size() == 5);

    clicks::RollupScope closing = open;
    closing.days_through = kNov30;  // November 30th is being closed, link 7 is done
    closing.days_closed_through = 7;
    CHECK(rollup_sums(rows, closing, partner_of).link_days ==
          std::vector<Triple64>{{7, kNov29, {1, 0, 0, 0}}, {7, kNov30, {2, 0, 0, 0}}});
}

}  // namespace rollup_sums_test
