// AuthCache: how long a checked credential is kept, and what forgets it.

#include "refgate/admin/auth_cache.hpp"

#include <catch2/catch.hpp>

#include "support/fake_clock.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace auth_cache_test {
namespace {

using namespace refgate::admin;
using namespace std::chrono_literals;
using refgate::testing::FakeClock;
using refgate::testing::FakeMonotonicClock;
using refgate::testing::unix_time;

constexpr std::int64_t kNoon = 1'764'936'000;  // 2025-12-05T12:00:00Z

struct Fixture {
    FakeClock wall{unix_time(kNoon)};
    FakeMonotonicClock steady;
    AuthCache cache{{.lifetime = 5s, .max_entries = 3, .clock = &wall, .monotonic = &steady}};

    void put(const std::string& key, const std::string& actor,
             AuthCache::WallTime until = AuthCache::WallTime::max()) {
        cache.put(key, {.actor = {.name = actor}}, until, cache.generation());
    }
    bool kept(const std::string& key) const { return cache.find(key).has_value(); }
};

}  // namespace

TEST_CASE("a checked credential is kept for the lifetime, never past its own expiry",
          "[auth_cache]") {
    Fixture f;
    f.put("t:a", "ci");
    f.put("t:b", "ci", unix_time(kNoon + 2));
    CHECK(f.cache.find("t:a")->actor.name == "ci");
    f.steady.advance(1s);
    f.wall.advance(2s);  // b's token expired
    CHECK(f.kept("t:a"));
    CHECK_FALSE(f.kept("t:b"));
    f.steady.advance(4s);  // 5 s since it was checked
    CHECK_FALSE(f.kept("t:a"));
    // Already expired: not kept at all.
    f.put("t:c", "ci", unix_time(kNoon));
    CHECK_FALSE(f.kept("t:c"));
}

TEST_CASE("a wall clock stepped back keeps nothing longer than the lifetime", "[auth_cache]") {
    Fixture f;
    f.put("t:a", "ci");
    f.wall.advance(-1h);
    f.steady.advance(5s);
    CHECK_FALSE(f.kept("t:a"));
}

TEST_CASE("forgetting a key, an actor or everything", "[auth_cache]") {
    Fixture f;
    f.put("t:a", "ci");
    f.put("s:b", "user:eddie");
    f.put("s:c", "user:eddie");
    f.cache.forget_actor("user:eddie");
    CHECK(f.kept("t:a"));
    CHECK_FALSE(f.kept("s:b"));
    CHECK_FALSE(f.kept("s:c"));
    f.cache.forget("t:a");
    CHECK_FALSE(f.kept("t:a"));
    f.put("t:a", "ci");
    f.cache.clear();
    CHECK(f.cache.size() == 0);
}

TEST_CASE("a lookup that raced a revocation does not bring the credential back", "[auth_cache]") {
    Fixture f;
    auto before_lookup = f.cache.generation();
    f.cache.forget_actor("ci");  // the revocation lands while the database is asked
    f.cache.put("t:a", {.actor = {.name = "ci"}}, AuthCache::WallTime::max(), before_lookup);
    CHECK_FALSE(f.kept("t:a"));
}

TEST_CASE("a full cache is emptied, and the newcomer kept", "[auth_cache]") {
    Fixture f;
    f.put("t:a", "a");
    f.put("t:b", "b");
    f.put("t:c", "c");
    f.put("t:a", "a");  // a key it holds replaces its entry
    CHECK(f.cache.size() == 3);
    f.put("t:d", "d");
    CHECK(f.cache.size() == 1);
    CHECK(f.kept("t:d"));
}

TEST_CASE("a lifetime of 0 keeps nothing", "[auth_cache]") {
    AuthCache off;
    CHECK_FALSE(off.enabled());
    off.put("t:a", {}, AuthCache::WallTime::max(), off.generation());
    CHECK_FALSE(off.find("t:a"));
}

}  // namespace auth_cache_test
