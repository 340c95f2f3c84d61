// Redis through Sentinel: a master, a replica and sentinels of each test's own (real servers on
// free loopback ports), the bucket store and the refgate binary finding the master through them,
// following SENTINEL FAILOVER, and the WAIT option (issue 17, "Redis: Sentinel").

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "refgate/clicks/redis_bucket_store.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/redis/redis_client.hpp"
#include "refgate/redis/sentinel_watcher.hpp"
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"
#include "support/test_env.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace sentinel_test {

using namespace refgate;
using namespace refgate::test;
using namespace std::chrono_literals;

constexpr std::chrono::seconds kBucket{10};
constexpr std::int32_t kDay = 20'000;

// A master with one replica, watched by sentinels.
struct Replicated {
    std::string name = "rg" + random_id(6);
    PrivateRedis master;
    PrivateRedis replica;
    std::unique_ptr<PrivateSentinels> sentinels;

    explicit Replicated(int sentinel_count = 2) {
        replica.replicate(master);
        sentinels = std::make_unique<PrivateSentinels>(master, name, sentinel_count);
        sentinels->wait_replicas(1);
    }

    redis::RedisAddress address() const { return *redis::parse_redis_url(sentinels->url()); }

    // After a failover the old master stays one until the sentinels convert it (10 s later): the
    // test demotes it at once, as they would.
    void demote_old_master(const PrivateRedis& old_master, const PrivateRedis& new_master) {
        old_master.cli("REPLICAOF 127.0.0.1 " + std::to_string(new_master.port()));
    }
};

clicks::Batch batch(const std::string& id, std::int64_t link, std::uint64_t clicks) {
    return clicks::Batch{
        id, {{domain::CounterKey(link, kDay, domain::ClickClass::human, "direct"), clicks}}};
}

// Every click the store holds, over all its buckets.
std::uint64_t total(clicks::BucketStore& store) {
    auto ids = store.pending_buckets();
    REQUIRE(ids.ok());
    std::uint64_t sum = 0;
    for (auto id : *ids) {
        auto counts = store.read_bucket(id);
        REQUIRE(counts.ok());
        for (const auto& [field, n] : *counts) sum += n;
    }
    return sum;
}

// A write on `master` after everything before it, and WAIT for one replica to have it: then the
// replica has everything written before.
void sync_replica(const PrivateRedis& master) {
    std::string out;
    run_shell("printf 'SET refgate:test:fence 1\\nWAIT 1 2000\\n' | redis-cli -p " +
                  std::to_string(master.port()),
              out);
    REQUIRE(out.find("\n1") != std::string::npos);
}

// Until a watcher (or anyone) is subscribed to a sentinel: a switch before it subscribed would
// be seen as the first master, not as a switch.
void wait_subscribed(const PrivateSentinels& sentinels, std::size_t count) {
    for (int i = 0; i < 300; ++i) {
        for (std::size_t s = 0; s < count; ++s) {
            if (sentinels.cli(s, "CLIENT LIST").find("cmd=subscribe") != std::string::npos) return;
        }
        std::this_thread::sleep_for(10ms);
    }
    FAIL("nothing subscribed to the sentinels");
}

void clicks_ok(int port, std::size_t total) {
    auto result = run_load(port, {raw_request("GET", "/go/alpha", {{"User-Agent", kBrowser}})},
                           LoadOptions{.total = total, .connections = 4, .max_time = 30s});
    INFO(result.summary());
    REQUIRE(result.count(302) == total);
}

bool add(clicks::BucketStore& store, const clicks::Batch& b) {
    auto added = store.add_batches(std::span<const clicks::Batch>(&b, 1), kBucket);
    if (!added.ok()) WARN("add_batches: " << added.fault().message);
    return added.ok();
}

}  // namespace sentinel_test

using namespace sentinel_test;

TEST_CASE("a store given sentinels counts into the master they name", "[redis][sentinel]") {
    Replicated r;
    auto store = clicks::make_redis_bucket_store({.address = r.address()});
    REQUIRE(add(*store, batch("i:1", 1, 3)));
    CHECK(total(*store) == 3);
    // On the master itself, not merely somewhere.
    CHECK(r.master.cli("SMEMBERS refgate:buckets").find_first_of("0123456789") !=
          std::string::npos);
}

TEST_CASE("an unknown master name fails the connection with what each sentinel said",
          "[redis][sentinel]") {
    Replicated r(1);
    auto address = r.address();
    address.master_name = "nosuch";
    redis::RedisConnection connection(address, 1'000ms);
    CHECK_FALSE(connection.ok());
    CHECK(connection.error().find("'nosuch'") != std::string::npos);
    CHECK(connection.error().find("no master named") != std::string::npos);
    CHECK(connection.error().find(std::to_string(r.sentinels->port(0))) != std::string::npos);
}

TEST_CASE("a dead first sentinel is skipped and the next one names the master",
          "[redis][sentinel]") {
    Replicated r(2);
    r.sentinels->kill(0);
    redis::RedisConnection connection(r.address(), 1'000ms);
    REQUIRE(connection.ok());
    CHECK(connection.command({"SET", "k", "v"}).str == "OK");
    CHECK(r.master.cli("GET k").find('v') != std::string::npos);
}

TEST_CASE("a store whose master was demoted gets READONLY, re-resolves, and counts once",
          "[redis][sentinel]") {
    Replicated r;
    auto store = clicks::make_redis_bucket_store({.address = r.address()});
    REQUIRE(add(*store, batch("i:1", 1, 2)));
    // Replicated before the switch: Redis replicates asynchronously, and a write the replica did
    // not have when it was promoted is gone (the WAIT option's case, tested below).
    sync_replica(r.master);
    r.sentinels->failover();
    r.demote_old_master(r.master, r.replica);
    // No watcher here: the store learns of the switch from the old master's READONLY.
    auto second = batch("i:2", 1, 5);
    CHECK_FALSE(add(*store, second));
    REQUIRE(add(*store, second));
    CHECK(total(*store) == 7);
    CHECK(r.replica.cli("ROLE").rfind("master", 0) == 0);
}

TEST_CASE("after +switch-master every store reconnects to the new master before its next command",
          "[redis][sentinel]") {
    Replicated r;
    std::atomic<int> switches{0};
    redis::SentinelWatcher watcher({.address = r.address(), .on_switch = [&] { ++switches; }});
    watcher.start();
    auto store = clicks::make_redis_bucket_store({.address = r.address()});
    wait_subscribed(*r.sentinels, 2);
    REQUIRE(add(*store, batch("i:1", 1, 2)));
    sync_replica(r.master);
    auto generation = redis::master_generation();
    r.sentinels->failover();
    for (int i = 0; i < 300 && redis::master_generation() == generation; ++i)
        std::this_thread::sleep_for(10ms);
    CHECK(redis::master_generation() > generation);
    CHECK(switches.load() == 1);
    // Not demoted yet: only the generation tells the store its master changed.
    CHECK(r.master.cli("ROLE").rfind("master", 0) == 0);
    CHECK(add(*store, batch("i:2", 1, 5)));
    CHECK(total(*store) == 7);
    CHECK(r.replica.cli("SMEMBERS refgate:buckets").find_first_of("0123456789") !=
          std::string::npos);
    watcher.stop();
}

TEST_CASE("a batch applied and replicated, then resent to the promoted replica, is counted once",
          "[redis][sentinel]") {
    Replicated r;
    auto store = clicks::make_redis_bucket_store({.address = r.address()});
    auto b = batch("i:1", 1, 4);
    REQUIRE(add(*store, b));
    sync_replica(r.master);
    r.sentinels->failover();
    r.demote_old_master(r.master, r.replica);
    // The sender never saw the reply (say), so it resends under the same id to the new master.
    for (int attempt = 0; attempt < 3 && !add(*store, b); ++attempt) {
    }
    CHECK(total(*store) == 4);
}

TEST_CASE("with a replica required, batches are kept while it is away and counted once when back",
          "[redis][wait]") {
    PrivateRedis master;
    PrivateRedis replica;
    replica.replicate(master);
    // A replica acknowledges at once, but a loaded machine may hold it up past the WAIT timeout:
    // the first batch is then sent again (its id is applied once) until a replica acknowledges.
    auto store = clicks::make_redis_bucket_store({.address = *redis::parse_redis_url(master.url()),
                                                  .min_replicas_acked = 1,
                                                  .wait_timeout = 1000ms});
    bool first = false;
    for (int attempt = 0; attempt < 5 && !first; ++attempt) first = add(*store, batch("i:1", 1, 1));
    REQUIRE(first);
    replica.kill();
    auto b = batch("i:2", 1, 6);
    auto r = store->add_batches(std::span<const clicks::Batch>(&b, 1), kBucket);
    REQUIRE_FALSE(r.ok());
    CHECK(r.fault().unreplicated);
    CHECK(r.fault().message.find("0 of 1") != std::string::npos);
    // The flusher does not rely on a "closed" fence the replicas lack.
    auto closed = store->close_buckets(kBucket, true);
    REQUIRE_FALSE(closed.ok());
    CHECK(closed.fault().unreplicated);

    replica.start();
    replica.replicate(master);
    // The same id again (applied once), and the close, each sent again while the machine holds
    // the replica's acknowledgement past the WAIT timeout, as the flusher sends them again.
    bool resent = false;
    for (int attempt = 0; attempt < 5 && !resent; ++attempt) resent = add(*store, b);
    CHECK(resent);
    CHECK(total(*store) == 7);
    bool closed_again = false;
    for (int attempt = 0; attempt < 5 && !closed_again; ++attempt)
        closed_again = store->close_buckets(kBucket, true).ok();
    CHECK(closed_again);
}

TEST_CASE("refgate on a redis+sentinel URL counts every click once across SENTINEL FAILOVER",
          "[redis][sentinel][clicks]") {
    TestDatabase db;
    import_demo_links(db.url());
    Replicated r;
    TempDir dir;
    ServiceProcess service({.database_url = db.url(),
                            .redis_url = r.sentinels->url(),
                            .env = {{"REFGATE_SPILL_FILE", dir.file("spill.json")},
                                    {"REFGATE_FLUSH_INTERVAL_MS", "3600000"}}});
    wait_subscribed(*r.sentinels, 2);
    clicks_ok(service.port(), 300);
    std::this_thread::sleep_for(1s);  // a few windows: every count is in Redis
    sync_replica(r.master);
    r.sentinels->failover();
    REQUIRE(service.wait_for_log("redis_master_switched"));
    clicks_ok(service.port(), 200);
    std::this_thread::sleep_for(1s);

    auto flushed = run_refgate(
        {"flush"}, {{"REFGATE_DATABASE_URL", db.url()}, {"REFGATE_REDIS_URL", r.sentinels->url()}});
    INFO(flushed.out << flushed.err);
    REQUIRE(flushed.exit_code == 0);
    CHECK(db.scalar("SELECT coalesce(sum(clicks), 0) FROM refgate_clicks") == "500");
    auto metrics = http_get(service.admin_port(), "/metrics");
    CHECK(metrics.body.find("refgate_redis_master_switches_total 1") != std::string::npos);
    CHECK(service.log().find("redis_unavailable") == std::string::npos);
}

TEST_CASE(
    "refgate with an unknown master name logs why, shows Redis down in /readyz, and redirects",
    "[redis][sentinel]") {
    TestDatabase db;
    import_demo_links(db.url());
    Replicated r(1);
    TempDir dir;
    std::string url = r.sentinels->url();
    url.replace(url.find(r.name), r.name.size(), "nosuch");
    ServiceProcess service({.database_url = db.url(),
                            .redis_url = url,
                            .env = {{"REFGATE_SPILL_FILE", dir.file("spill.json")}}});
    clicks_ok(service.port(), 10);
    REQUIRE(service.wait_for_log("redis_unavailable"));
    CHECK(service.log().find("no sentinel gave a master for 'nosuch'") != std::string::npos);
    CHECK(http_get(service.admin_port(), "/readyz").body.find("\"redis\":\"down\"") !=
          std::string::npos);
}

TEST_CASE("a bad sentinel URL stops refgate at start with the reason", "[redis][sentinel]") {
    auto result = run_refgate({"check-config"},
                              {{"REFGATE_REDIS_URL", "redis+sentinel://:pw@127.0.0.1:26379"}});
    CHECK(result.exit_code != 0);
    CHECK(result.err.find("master name") != std::string::npos);
    CHECK(result.err.find("pw@") == std::string::npos);
}

TEST_CASE(
    "refgate requiring a replica keeps its batches while the replica is away, then counts "
    "them once",
    "[redis][wait][clicks]") {
    TestDatabase db;
    import_demo_links(db.url());
    PrivateRedis master;
    PrivateRedis replica;
    replica.replicate(master);
    TempDir dir;
    EnvPairs wait = {{"REFGATE_REDIS_MIN_REPLICAS_ACKED", "1"},
                     {"REFGATE_REDIS_WAIT_TIMEOUT_MS", "300"}};
    EnvPairs env = wait;
    env.insert(env.end(), {{"REFGATE_SPILL_FILE", dir.file("spill.json")},
                           {"REFGATE_FLUSH_INTERVAL_MS", "3600000"}});
    ServiceProcess service({.database_url = db.url(), .redis_url = master.url(), .env = env});
    replica.kill();
    clicks_ok(service.port(), 100);
    REQUIRE(service.wait_for_log("redis_unreplicated"));
    auto metrics = http_get(service.admin_port(), "/metrics").body;
    CHECK(metrics.find("refgate_redis_unreplicated_rounds_total 0\n") == std::string::npos);

    replica.start();
    replica.replicate(master);
    REQUIRE(service.wait_for_log("redis_replicated"));
    // The flush asks the same one replica, with a timeout a loaded machine cannot miss: the
    // short one above only makes the service notice the missing replica quickly.
    EnvPairs flush_env = {{"REFGATE_REDIS_MIN_REPLICAS_ACKED", "1"},
                          {"REFGATE_REDIS_WAIT_TIMEOUT_MS", "10000"},
                          {"REFGATE_DATABASE_URL", db.url()},
                          {"REFGATE_REDIS_URL", master.url()}};
    auto flushed = run_refgate({"flush"}, flush_env);
    INFO(flushed.out << flushed.err);
    REQUIRE(flushed.exit_code == 0);
    CHECK(db.scalar("SELECT coalesce(sum(clicks), 0) FROM refgate_clicks") == "100");
}

// Run by hand (hidden): refgate_integration_tests "[wait-latency]". Prints the send round's p50
// and p99 with WAIT off and with one replica on loopback, for the README's trade-off line.
TEST_CASE("measure: the latency WAIT 1 adds to a send round", "[.][wait-latency]") {
    PrivateRedis master(false);
    PrivateRedis replica(false);
    replica.replicate(master);
    for (unsigned n : {0u, 1u}) {
        auto store = clicks::make_redis_bucket_store(
            {.address = *redis::parse_redis_url(master.url()), .min_replicas_acked = n});
        std::vector<double> micros;
        for (int round = 0; round < 2'000; ++round) {
            clicks::Batch b{"m" + std::to_string(n) + ":" + std::to_string(round), {}};
            for (int link = 0; link < 100; ++link)
                b.counts.emplace_back(
                    domain::CounterKey(link, kDay, domain::ClickClass::human, "direct"), 1);
            auto started = std::chrono::steady_clock::now();
            REQUIRE(add(*store, b));
            micros.push_back(std::chrono::duration<double, std::micro>(
                                 std::chrono::steady_clock::now() - started)
                                 .count());
        }
        std::sort(micros.begin(), micros.end());
        WARN("min_replicas_acked=" << n << ": p50 " << micros[micros.size() / 2] << " us, p99 "
                                   << micros[micros.size() * 99 / 100] << " us");
    }
}
