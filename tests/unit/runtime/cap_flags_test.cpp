#include "refgate/runtime/cap_flags.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace cap_flags_test {

using refgate::domain::Link;
using refgate::runtime::CapFlags;
using refgate::testing::make_link;
using refgate::testing::make_snapshot;
using refgate::testing::tailscale;

Link capped_link(std::string slug, std::int64_t id, std::int64_t max) {
    Link link = make_link(std::move(slug));
    link.id = id;
    if (max > 0) link.max_human_clicks = max;
    return link;
}

TEST_CASE("cap flags: set by link id once the fleet's clicks reach the cap", "[caps]") {
    // Ids out of order in the snapshot: the flags find them by id.
    auto snapshot = make_snapshot({tailscale()}, {capped_link("c", 30, 5), capped_link("a", 10, 2),
                                                  capped_link("plain", 20, 0)});
    REQUIRE(snapshot->caps().size() == 2);
    CapFlags flags(*snapshot);
    CHECK(flags.size() == 2);
    CHECK_FALSE(flags.capped(10));
    CHECK_FALSE(flags.capped(30));

    std::unordered_map<std::int64_t, std::uint64_t> totals{{10, 2}, {30, 4}, {20, 1'000}};
    CHECK(flags.apply(totals) == 1);
    CHECK(flags.capped(10));
    CHECK_FALSE(flags.capped(30));
    CHECK_FALSE(flags.capped(20));  // no cap
    CHECK_FALSE(flags.capped(99));  // no such link

    totals[30] = 5;
    totals.erase(10);  // a link missing from the count has no clicks
    CHECK(flags.apply(totals) == 1);
    CHECK_FALSE(flags.capped(10));
    CHECK(flags.capped(30));
}

TEST_CASE("cap flags fit a snapshot with the same capped links and maxima only", "[caps]") {
    auto before = make_snapshot({tailscale()}, {capped_link("a", 10, 2), capped_link("b", 20, 3)});
    CapFlags flags(*before);
    CHECK(flags.fits(*before));
    CHECK(
        flags.fits(*make_snapshot({tailscale()}, {capped_link("b", 20, 3), capped_link("a", 10, 2),
                                                  capped_link("new", 30, 0)})));
    CHECK_FALSE(flags.fits(*make_snapshot({tailscale()}, {capped_link("a", 10, 2)})));
    CHECK_FALSE(flags.fits(
        *make_snapshot({tailscale()}, {capped_link("a", 10, 2), capped_link("b", 20, 4)})));
    CHECK_FALSE(flags.fits(
        *make_snapshot({tailscale()}, {capped_link("a", 10, 2), capped_link("c", 30, 3)})));
}

}  // namespace cap_flags_test
