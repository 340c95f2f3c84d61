// The sender over a fake store: DESIGN.md §3 and §4 from the sender's side (a batch is applied
// once however often it is sent; while the store is away counts wait up to a bound, and what
// does not fit is dropped and counted, never silently).

#include <catch2/catch.hpp>

#include "fakes.hpp"
#include "refgate/clicks/click_pipeline.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "support/fake_clock.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace click_sender_test {

using namespace refgate;
using namespace refgate::clicks;
using namespace refgate::clicks::test;
using refgate::testing::FakeClock;
using refgate::testing::unix_time;

namespace {

constexpr std::int32_t kDay = 20'000;  // 2024-10-04

domain::CounterKey key(std::int64_t link, std::string_view channel = "direct") {
    return domain::CounterKey(link, kDay, domain::ClickClass::human, channel);
}

struct Rig {
    FakeBucketStore store;
    FakeClock clock{unix_time(static_cast<std::int64_t>(kDay) * 86'400 + 3'600)};
    clicks::ClickShard shard;
    clicks::SaltBox salts;
    runtime::HealthState health;
    metrics::ClickStats stats;
    ClickSender sender;

    explicit Rig(std::size_t max_pending_keys = 1'000)
        : sender({.max_pending_keys = max_pending_keys}, store, {&shard}, salts, clock, health,
                 stats) {}

    void click(const domain::CounterKey& k, int times = 1) {
        for (int i = 0; i < times; ++i) shard.count(k);
    }
    std::uint64_t in_store(const domain::CounterKey& k) {
        auto totals = store.totals();
        auto it = totals.find(k.field());
        return it == totals.end() ? 0 : it->second;
    }
};

}  // namespace

TEST_CASE("a batch whose reply was lost is sent again under its id and counted once",
          "[clicks][sender]") {
    Rig rig;
    rig.click(key(1), 5);
    rig.store.lost_replies = 1;
    CHECK_FALSE(rig.sender.send_round());
    CHECK(rig.in_store(key(1)) == 5);  // the store applied it; the sender could not know

    rig.click(key(1), 3);
    CHECK(rig.sender.send_round());
    CHECK(rig.in_store(key(1)) == 8);
    CHECK(rig.stats.redis_errors.load() == 1);
    CHECK(rig.stats.pending_keys.load() == 0);

    CHECK(rig.sender.send_round());  // nothing new: nothing sent again
    CHECK(rig.in_store(key(1)) == 8);
}

TEST_CASE("batches too few replicas acknowledged are resent under their ids and counted once",
          "[clicks][sender]") {
    Rig rig;
    rig.click(key(1), 4);
    rig.store.unreplicated = 2;
    CHECK_FALSE(rig.sender.send_round());
    CHECK_FALSE(rig.sender.send_round());
    CHECK(rig.stats.redis_unreplicated_rounds.load() == 2);
    CHECK(rig.stats.redis_errors.load() == 0);  // Redis is up: it only lacks replicas
    CHECK(rig.stats.pending_keys.load() > 0);   // the batch is kept

    rig.click(key(1), 1);
    CHECK(rig.sender.send_round());
    CHECK(rig.in_store(key(1)) == 5);
    CHECK(rig.stats.pending_keys.load() == 0);
}

TEST_CASE(
    "counts wait while the store is down for many windows, up to the bound, and then are "
    "dropped and counted",
    "[clicks][sender]") {
    Rig rig(10);
    rig.store.down = true;
    for (int window = 0; window < 30; ++window) {
        rig.click(key(1));                // a key seen every window
        rig.click(key(100 + window), 2);  // a new key every window
        CHECK_FALSE(rig.sender.send_round());
    }
    // Key 1 and the first nine new keys fit the bound of ten; the other 21 new keys did not.
    CHECK(rig.stats.pending_keys.load() == 10);
    CHECK(rig.stats.dropped_clicks.load() == 21 * 2);
    CHECK(rig.store.buckets.empty());

    rig.store.down = false;
    CHECK(rig.sender.send_round());
    CHECK(rig.in_store(key(1)) == 30);
    for (int window = 0; window < 9; ++window) CHECK(rig.in_store(key(100 + window)) == 2);
    CHECK(rig.in_store(key(109)) == 0);
    std::uint64_t delivered = 0;
    for (const auto& [field, n] : rig.store.totals()) delivered += n;
    CHECK(delivered + rig.stats.dropped_clicks.load() == 30 * 3);
    CHECK(rig.stats.pending_keys.load() == 0);
}

TEST_CASE("clicks counted as other for the channel cap or an identifier reach the metric once",
          "[clicks][sender]") {
    Rig rig;
    rig.shard.count(key(1, "other"), clicks::OtherChannel::cap);
    rig.shard.count(key(1, "other"), clicks::OtherChannel::cap);
    rig.shard.count(key(1, "other"), clicks::OtherChannel::identifier);
    rig.shard.count(key(1, "blog"));
    CHECK(rig.sender.send_round());
    CHECK(rig.in_store(key(1, "other")) == 3);
    CHECK(rig.stats.channels_capped.load() == 2);
    CHECK(rig.stats.channel_identifiers.load() == 1);
    // Later windows add only what they counted.
    CHECK(rig.sender.send_round());
    rig.shard.count(key(2, "other"), clicks::OtherChannel::cap);
    CHECK(rig.sender.send_round());
    CHECK(rig.stats.channels_capped.load() == 3);
    CHECK(rig.stats.channel_identifiers.load() == 1);
}

TEST_CASE("a key waiting in an unconfirmed batch counts once against the pending bound",
          "[clicks][sender]") {
    Rig rig(2);
    rig.store.down = true;
    rig.click(key(1), 2);
    rig.click(key(2), 2);
    CHECK_FALSE(rig.sender.send_round());  // sealed into a batch that the store never confirmed
    rig.click(key(1));
    rig.click(key(2));
    rig.click(key(3), 3);  // a third key: past the bound
    CHECK_FALSE(rig.sender.send_round());
    CHECK(rig.stats.pending_keys.load() == 2);
    CHECK(rig.stats.dropped_clicks.load() == 3);

    rig.store.down = false;
    CHECK(rig.sender.send_round());
    CHECK(rig.in_store(key(1)) == 3);
    CHECK(rig.in_store(key(2)) == 3);
    CHECK(rig.in_store(key(3)) == 0);
}

TEST_CASE("the sender keeps the salts of the clock's day and the next one", "[clicks][sender]") {
    Rig rig;
    rig.clock.set(unix_time(static_cast<std::int64_t>(kDay + 7) * 86'400 + 86'399));  // 23:59:59
    CHECK(rig.sender.send_round());
    clicks::SaltKey salt;
    CHECK(rig.salts.current().get(kDay + 7, salt));
    CHECK(salt == rig.store.salts.at(kDay + 7));
    CHECK(rig.salts.current().get(kDay + 8, salt));
    CHECK_FALSE(rig.salts.current().get(kDay, salt));
}

TEST_CASE("a store that is down marks Redis down, counts the error, and keeps the counts",
          "[clicks][sender]") {
    Rig rig;
    rig.store.down = true;
    rig.click(key(1), 4);
    CHECK_FALSE(rig.sender.send_round());
    CHECK(rig.health.redis.load() == runtime::DependencyState::down);
    CHECK(rig.stats.redis_errors.load() == 1);
    rig.store.down = false;
    CHECK(rig.sender.send_round());
    CHECK(rig.health.redis.load() == runtime::DependencyState::up);
    CHECK(rig.in_store(key(1)) == 4);
}

}  // namespace click_sender_test
