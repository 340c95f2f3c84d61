// The flusher over a fake store and sink: DESIGN.md §3 (a count is never applied twice, and every
// count the store kept reaches PostgreSQL) under the faults it names.

#include <catch2/catch.hpp>

#include "fakes.hpp"
#include "refgate/clicks/click_pipeline.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace click_flusher_test {

using namespace refgate;
using namespace refgate::clicks;
using namespace refgate::clicks::test;

namespace {

constexpr std::chrono::seconds kBucket{10};

struct Rig {
    FakeBucketStore store;
    FakeCountSink sink;
    metrics::ClickStats stats;
    runtime::HealthState health;

    // A bucket well in the past (closed), as the sender would have filled it.
    void fill(std::int64_t id, const Fields& fields) {
        for (const auto& [field, n] : fields) store.buckets[id][field] += n;
        store.last = std::max(store.last, id);
    }
    Result<FlushResult> flush(bool close_current = false) {
        // A new Flusher each time: as after a restart, nothing is remembered in memory.
        Flusher flusher(store, sink, {.bucket = kBucket, .stats = &stats, .health = &health});
        return flusher.flush(close_current);
    }
};

const Fields kFirst = {{"1|2024-10-04|direct|human", 5}, {"2|2024-10-04|news|bot", 2}};
const Fields kSecond = {{"1|2024-10-04|direct|human", 3}};

}  // namespace

TEST_CASE("closed buckets move to the sink once and leave the store", "[clicks][flusher]") {
    Rig rig;
    rig.fill(999'900, kFirst);
    rig.fill(999'910, kSecond);
    auto r = rig.flush();
    REQUIRE(r.ok());
    CHECK(r->buckets == 2);
    CHECK(r->clicks == 10);
    CHECK(rig.sink.total() == 10);
    CHECK(rig.sink.state.counts["1|2024-10-04|direct|human"] == 8);
    CHECK(rig.store.buckets.empty());
    CHECK_FALSE(rig.sink.state.lock_held);
}

TEST_CASE("a bucket committed but not deleted (the flusher died before DEL) is applied once",
          "[clicks][flusher]") {
    Rig rig;
    rig.fill(999'900, kFirst);
    rig.fill(999'910, kSecond);
    rig.store.failed_deletes = 1;
    auto failed = rig.flush();
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.fault().dependency == Dependency::redis);
    CHECK(rig.sink.total() == 7);           // the first bucket committed
    CHECK(rig.store.buckets.size() == 2);   // and is still in the store
    CHECK_FALSE(rig.sink.state.lock_held);  // the lock was given back

    auto again = rig.flush();
    REQUIRE(again.ok());
    CHECK(again->skipped_buckets == 1);
    CHECK(again->buckets == 1);
    CHECK(rig.sink.total() == 10);
    CHECK(rig.store.buckets.empty());
}

TEST_CASE("a bucket that reappears after it was flushed is skipped and deleted",
          "[clicks][flusher]") {
    Rig rig;
    rig.fill(999'900, kFirst);
    REQUIRE(rig.flush().ok());
    REQUIRE(rig.sink.total() == 7);

    rig.fill(999'900, kFirst);  // what an AOF replay that lost the DEL brings back
    auto again = rig.flush();
    REQUIRE(again.ok());
    CHECK(again->buckets == 0);
    CHECK(again->skipped_buckets == 1);
    CHECK(rig.sink.total() == 7);
    CHECK(rig.store.buckets.empty());
}

TEST_CASE("an early-flushed bucket that reappears with new clicks adds only the new ones",
          "[clicks][flusher]") {
    Rig rig;
    std::int64_t current = rig.store.now - rig.store.now % kBucket.count();
    rig.fill(current, kFirst);
    REQUIRE(rig.flush(true).ok());  // `refgate flush` closes the bucket being filled
    REQUIRE(rig.sink.total() == 7);

    // The store lost the flush's writes (the fence, the DEL) and then took new clicks.
    rig.store.closed = current - 1;
    rig.fill(current, kFirst);
    rig.fill(current, kSecond);
    auto again = rig.flush(true);
    REQUIRE(again.ok());
    CHECK(rig.sink.total() == 10);
    CHECK(rig.sink.state.counts["1|2024-10-04|direct|human"] == 8);
}

TEST_CASE("a flush that dies before its commit applies nothing, and the next applies it all once",
          "[clicks][flusher]") {
    Rig rig;
    rig.fill(999'900, kFirst);
    rig.sink.state.failed_commits = 1;
    auto failed = rig.flush();
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.fault().dependency == Dependency::postgres);
    CHECK(rig.sink.total() == 0);
    CHECK(rig.sink.state.flushed.empty());
    CHECK(rig.store.buckets.size() == 1);

    auto again = rig.flush();
    REQUIRE(again.ok());
    CHECK(again->buckets == 1);
    CHECK(rig.sink.total() == 7);
}

TEST_CASE(
    "a commit whose outcome is unknown is never followed by the bucket's delete, and the next "
    "flush settles it once",
    "[clicks][flusher]") {
    Rig rig;
    rig.fill(999'900, kFirst);
    rig.sink.state.lost_commit_replies = 1;
    auto failed = rig.flush();
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.fault().dependency == Dependency::postgres);
    CHECK(rig.sink.total() == 7);          // it did commit
    CHECK(rig.store.buckets.size() == 1);  // but the bucket stays

    auto again = rig.flush();
    REQUIRE(again.ok());
    CHECK(again->buckets == 0);
    CHECK(again->skipped_buckets == 1);
    CHECK(rig.sink.total() == 7);
    CHECK(rig.store.buckets.empty());
}

TEST_CASE("while another instance holds the flush lock nothing moves", "[clicks][flusher]") {
    Rig rig;
    rig.fill(999'900, kFirst);
    rig.sink.state.lock_held_elsewhere = true;
    auto r = rig.flush();
    REQUIRE(r.ok());
    CHECK(r->busy);
    CHECK(rig.sink.total() == 0);
    CHECK(rig.stats.oldest_unflushed.load() == 999'900);
}

TEST_CASE("a failed flush round is counted against the dependency that failed",
          "[clicks][flusher]") {
    Rig rig;
    rig.fill(999'900, kFirst);
    ClickFlusher flusher(rig.store, rig.sink,
                         {.bucket = kBucket, .stats = &rig.stats, .health = &rig.health},
                         std::chrono::hours(1));
    rig.store.down = true;
    CHECK(flusher.flush_round() == runtime::RoundOutcome::failed);
    CHECK(rig.stats.redis_errors.load() == 1);
    CHECK(rig.health.postgres_errors.load() == 0);
    rig.store.down = false;
    rig.sink.state.down = true;
    CHECK(flusher.flush_round() == runtime::RoundOutcome::failed);
    CHECK(rig.stats.redis_errors.load() == 1);
    CHECK(rig.health.postgres_errors.load() == 1);
    CHECK(rig.stats.flush_failures.load() == 2);
    rig.sink.state.down = false;
    CHECK(flusher.flush_round() == runtime::RoundOutcome::done);
    CHECK(rig.sink.total() == 7);
}

TEST_CASE("changed unique estimates reach the sink, and go back when it fails",
          "[clicks][flusher]") {
    Rig rig;
    rig.store.changed.insert({7, 20'000});
    rig.store.samples[{7, 20'000}] = {1, 2, 3};
    rig.sink.state.failed_commits = 0;
    rig.sink.state.down = false;
    auto r = rig.flush();
    REQUIRE(r.ok());
    CHECK(r->unique_estimates == 1);
    CHECK(rig.sink.state.estimates[{7, 20'000}] == 3);
    CHECK(rig.store.changed.empty());
}

TEST_CASE("growth since an early flush is what exceeds the recorded counts, per field",
          "[clicks][flusher]") {
    BucketCounts before = {{"a", 5}, {"b", 2}};
    BucketCounts now = {{"a", 7}, {"b", 2}, {"c", 1}};
    auto growth = growth_since(before, now);
    std::sort(growth.begin(), growth.end());
    CHECK(growth == BucketCounts{{"a", 2}, {"c", 1}});
}

}  // namespace click_flusher_test
