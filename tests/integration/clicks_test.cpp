// Click counting end to end: the refgate binary under load, a Redis of each test's own (a service
// flushes whatever buckets its Redis holds, so the shared test Redis would mix tests' counts),
// PostgreSQL, and `refgate flush`. DESIGN.md, "Data flow" guarantees 1, 3 and 4, and "Privacy".

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/private_postgres.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace clicks_test {

using namespace refgate::test;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> kLinks = {"alpha", "beta", "gamma"};
// The default aggregation window: counts reach Redis this often.
constexpr auto kWindow = 250ms;
// Longer than a window by a margin for a slow, shared machine.
constexpr auto kSettle = 1000ms;
// A background flush interval long enough never to run during a test.
const std::string kNever = "3600000";

using Headers = std::vector<std::pair<std::string, std::string>>;
using Key = std::tuple<std::string, std::string, std::string>;  // link, channel, class

// The demo partner with the three links.
void load_links(const std::string& url) {
    import_demo_links(url, {{"alpha"}, {"beta"}, {"gamma"}});
}

// What one test counts into: a Redis of its own and a directory for the spill file.
struct Counting {
    TempDir dir;
    PrivateRedis redis;
    std::string spill = dir.file("spill.json");

    ServiceOptions service(const std::string& database_url, EnvPairs env = {},
                           const std::string& spill_file = "") const {
        env.emplace_back("REFGATE_SPILL_FILE", spill_file.empty() ? spill : spill_file);
        return ServiceOptions{
            .database_url = database_url, .redis_url = redis.url(), .env = std::move(env)};
    }

    CommandResult flush(const std::string& database_url, EnvPairs env = {}) const {
        env.emplace_back("REFGATE_DATABASE_URL", database_url);
        env.emplace_back("REFGATE_REDIS_URL", redis.url());
        return run_refgate({"flush"}, env);
    }

    CommandResult flush_ok(const std::string& database_url, EnvPairs env = {}) const {
        auto result = flush(database_url, std::move(env));
        INFO("refgate flush: " << result.out << result.err);
        REQUIRE(result.exit_code == 0);
        return result;
    }

    std::string cli(const std::string& args) const {
        std::string out = redis.cli(args);
        while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
        return out;
    }
};

pqxx::result query(const std::string& url, const std::string& sql) {
    pqxx::connection conn(url);
    pqxx::nontransaction tx(conn);
    return tx.exec(sql);
}

std::int64_t number(const std::string& url, const std::string& sql) {
    auto r = query(url, sql);
    if (r.empty() || r[0][0].is_null()) return 0;
    return r[0][0].as<std::int64_t>();
}

std::int64_t total_clicks(const std::string& url) {
    return number(url, "SELECT coalesce(sum(clicks), 0) FROM refgate_clicks");
}

std::map<Key, std::int64_t> clicks_by_key(const std::string& url) {
    std::map<Key, std::int64_t> out;
    for (const auto& row : query(url,
                                 "SELECT link, channel, class, sum(clicks) FROM "
                                 "refgate_clicks_daily GROUP BY 1, 2, 3")) {
        out[{row[0].c_str(), row[1].c_str(), row[2].c_str()}] = row[3].as<std::int64_t>();
    }
    return out;
}

// Human clicks on the three links, some with a channel.
std::vector<std::string> mixed_requests() {
    std::vector<std::string> out;
    for (const auto& link : kLinks) {
        out.push_back(raw_request("GET", "/go/" + link + "?src=blog", {{"User-Agent", kBrowser}}));
        out.push_back(raw_request("GET", "/go/" + link, {{"User-Agent", kBrowser}}));
    }
    return out;
}

LoadResult load_ok(int port, const std::vector<std::string>& requests, std::size_t total,
                   std::size_t connections = 8) {
    auto result = run_load(
        port, requests, LoadOptions{.total = total, .connections = connections, .max_time = 60s});
    INFO(result.summary());
    REQUIRE(result.count(302) == total);
    REQUIRE(result.failed == 0);
    return result;
}

std::string run_capture(const std::string& command) {
    std::string out;
    int rc = run_shell(command, out);
    INFO(command);
    REQUIRE(rc == 0);
    return out;
}

// Waits until the first instance has put today's salt into Redis, and a little more for the
// sender to hand it to the I/O threads: clicks before that feed no unique estimate.
void wait_for_salt(const Counting& counting) {
    std::string key = "refgate:salt:" + utc_today();
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (counting.cli("EXISTS " + key) != "1" && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(20ms);
    }
    REQUIRE(counting.cli("EXISTS " + key) == "1");
    std::this_thread::sleep_for(2 * kWindow);
}

// The JSON log lines with this msg.
std::vector<nlohmann::json> log_lines(const std::string& log, const std::string& msg) {
    std::vector<nlohmann::json> out;
    std::istringstream lines(log);
    std::string line;
    while (std::getline(lines, line)) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (!j.is_discarded() && j.value("msg", "") == msg) out.push_back(j);
    }
    return out;
}

}  // namespace

TEST_CASE(
    "20000 redirects over 32 connections are counted exactly, by link, channel and class, "
    "in refgate_clicks_daily",
    "[clicks]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    ServiceProcess service(counting.service(db.url()));

    struct Variant {
        std::string method;
        std::string suffix;
        Headers headers;
        std::string channel;
        std::string click_class;
    };
    const std::vector<Variant> variants = {
        {"GET",
         "?src=newsletter-2026-48",
         {{"User-Agent", kBrowser}},
         "newsletter-2026-48",
         "human"},
        {"GET", "?src=blog", {{"User-Agent", kBrowser}}, "blog", "human"},
        {"GET", "", {{"User-Agent", kBrowser}}, "direct", "human"},
        {"GET", "?src=Bad%20Tag", {{"User-Agent", kBrowser}}, "direct", "human"},
        {"GET", "?src=blog", {{"User-Agent", "Slackbot-LinkExpanding 1.0"}}, "blog", "bot"},
        {"HEAD", "", {{"User-Agent", kBrowser}}, "direct", "bot"},
        {"GET",
         "?src=newsletter-2026-48",
         {{"User-Agent", kBrowser}, {"Sec-Purpose", "prefetch"}},
         "newsletter-2026-48",
         "prefetch"},
        {"GET",
         "/?src=blog",
         {{"User-Agent", kBrowser}, {"Sec-Purpose", "prefetch;prerender"}},
         "blog",
         "prefetch"},
    };
    std::vector<std::string> requests;
    std::vector<Key> keys;
    for (const auto& link : kLinks) {
        for (const auto& v : variants) {
            requests.push_back(raw_request(v.method, "/go/" + link + v.suffix, v.headers));
            keys.emplace_back(link, v.channel, v.click_class);
        }
    }
    constexpr std::size_t kTotal = 20'000;
    // The load sends requests[i % size] as its i-th request: 20000 is not a multiple of 24, so
    // the counts differ by one between the first and the last ones.
    std::map<Key, std::int64_t> expected;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        expected[keys[i]] += static_cast<std::int64_t>(kTotal / requests.size() +
                                                       (i < kTotal % requests.size() ? 1 : 0));
    }

    std::string day_before = utc_today();
    auto result = load_ok(service.port(), requests, kTotal, 32);
    std::string day_after = utc_today();
    INFO(result.summary());

    // Counts reach Redis every window; `refgate flush` moves everything Redis has. A loaded
    // machine may take longer than the settling time to send 20000 clicks' batches: flushed
    // again until every click is in PostgreSQL (a click counted twice never comes back to the
    // total; one lost never reaches it).
    std::this_thread::sleep_for(kSettle);
    counting.flush_ok(db.url());
    for (auto deadline = std::chrono::steady_clock::now() + 20s;
         total_clicks(db.url()) < static_cast<std::int64_t>(kTotal) &&
         std::chrono::steady_clock::now() < deadline;) {
        std::this_thread::sleep_for(kSettle);
        counting.flush_ok(db.url());
    }
    CHECK(clicks_by_key(db.url()) == expected);
    CHECK(total_clicks(db.url()) == static_cast<std::int64_t>(kTotal));
    for (const auto& row : query(db.url(), "SELECT DISTINCT day::text FROM refgate_clicks")) {
        std::string day = row[0].c_str();
        CHECK((day == day_before || day == day_after));
    }
    // Nothing left behind in Redis.
    CHECK(counting.cli("SCARD refgate:buckets") == "0");
}

TEST_CASE(
    "redirects never fail while Redis restarts under load, and every click reaches PostgreSQL",
    "[clicks][redis]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    ServiceProcess service(counting.service(db.url(), {{"REFGATE_FLUSH_INTERVAL_MS", kNever}}));
    const int port = service.port();
    const auto requests = mixed_requests();
    constexpr std::size_t kTotal = 8'000;

    auto load = std::async(std::launch::async, [&] {
        return run_load(
            port, requests,
            LoadOptions{.total = kTotal, .connections = 16, .max_time = 40s, .rate = 2000});
    });
    std::this_thread::sleep_for(1200ms);
    counting.redis.stop();
    std::this_thread::sleep_for(1500ms);
    counting.redis.start();
    auto result = load.get();
    INFO(result.summary());
    REQUIRE(result.count(302) == kTotal);
    REQUIRE(result.failed == 0);
    // The outage was seen (otherwise this test shows nothing).
    CHECK(service.wait_for_log("redis_unavailable", 1s));

    // SIGTERM sends what the service still holds; the flush moves it all.
    CHECK(service.stop(SIGTERM) == 0);
    counting.flush_ok(db.url());
    CHECK(total_clicks(db.url()) == static_cast<std::int64_t>(kTotal));
}

TEST_CASE(
    "redirects never fail while PostgreSQL is stopped under load, and the background flusher "
    "catches up exactly when it returns",
    "[clicks][pg]") {
    PrivatePostgres postgres;
    std::string url = postgres.create_database("refgate");
    load_links(url);
    Counting counting;
    const EnvPairs env = {{"REFGATE_FLUSH_INTERVAL_MS", "300"}, {"REFGATE_BUCKET_SECONDS", "1"}};
    ServiceProcess service(counting.service(url, env));
    const int port = service.port();
    const auto requests = mixed_requests();
    constexpr std::size_t kTotal = 8'000;

    auto load = std::async(std::launch::async, [&] {
        return run_load(
            port, requests,
            LoadOptions{.total = kTotal, .connections = 16, .max_time = 40s, .rate = 1600});
    });
    std::this_thread::sleep_for(1200ms);
    postgres.stop();
    std::this_thread::sleep_for(2500ms);
    // Flushes failed meanwhile; counts waited in Redis.
    CHECK(service.wait_for_log("flush_failed", 1s));
    postgres.start();
    auto result = load.get();
    INFO(result.summary());
    REQUIRE(result.count(302) == kTotal);
    REQUIRE(result.failed == 0);

    // The service's own flusher moves every closed bucket: all of them, a bucket (1 s) later.
    auto deadline = std::chrono::steady_clock::now() + 20s;
    std::int64_t total = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        try {
            total = total_clicks(url);
        } catch (const std::exception&) {
            total = -1;  // PostgreSQL still starting
        }
        if (total >= static_cast<std::int64_t>(kTotal)) break;
        std::this_thread::sleep_for(200ms);
    }
    CHECK(total == static_cast<std::int64_t>(kTotal));

    int exit_code = service.stop(SIGTERM);
    {
        // A sanitizer's report at exit (exit code 134) is in the service's log.
        INFO("service log:\n" << service.log());
        CHECK(exit_code == 0);
    }
    counting.flush_ok(url, env);
    CHECK(total_clicks(url) == static_cast<std::int64_t>(kTotal));
    CHECK(number(url, "SELECT sum(clicks) FROM refgate_flushed_buckets") ==
          static_cast<std::int64_t>(kTotal));
}

namespace {

// Fills Redis with several closed one-second buckets: traffic over about 3 s, then SIGTERM (which
// drains the service to Redis). The service never flushes by itself. Returns the clicks sent.
std::int64_t fill_buckets(const std::string& url, const Counting& counting) {
    ServiceProcess service(counting.service(
        url, {{"REFGATE_FLUSH_INTERVAL_MS", kNever}, {"REFGATE_BUCKET_SECONDS", "1"}}));
    constexpr std::size_t kTotal = 1'200;
    auto result =
        run_load(service.port(), mixed_requests(),
                 LoadOptions{.total = kTotal, .connections = 4, .max_time = 30s, .rate = 400});
    INFO(result.summary());
    REQUIRE(result.count(302) == kTotal);
    REQUIRE(result.failed == 0);
    REQUIRE(service.stop(SIGTERM) == 0);
    return static_cast<std::int64_t>(kTotal);
}

// After a flush that died and one that completed: every click once, every bucket once.
void check_exactly_once(const std::string& url, const Counting& counting, std::int64_t sent,
                        std::int64_t buckets) {
    CHECK(total_clicks(url) == sent);
    CHECK(number(url, "SELECT sum(clicks) FROM refgate_flushed_buckets") == sent);
    CHECK(number(url, "SELECT count(*) FROM refgate_flushed_buckets") == buckets);
    CHECK(number(url, "SELECT count(DISTINCT bucket) FROM refgate_flushed_buckets") == buckets);
    CHECK(counting.cli("SCARD refgate:buckets") == "0");
    CHECK(counting.cli("KEYS 'refgate:bucket:[0-9]*'").empty());
}

const EnvPairs kOneSecondBuckets = {{"REFGATE_BUCKET_SECONDS", "1"}};

EnvPairs with_fault(const std::string& point) {
    EnvPairs env = kOneSecondBuckets;
    env.emplace_back("REFGATE_FAULT_POINT", point);
    return env;
}

}  // namespace

TEST_CASE("a flush killed before its commit applies nothing, and the next flush applies it all",
          "[clicks][fault]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    std::int64_t sent = fill_buckets(db.url(), counting);
    std::int64_t buckets = std::stoll(counting.cli("SCARD refgate:buckets"));
    REQUIRE(buckets >= 2);

    auto killed = counting.flush(db.url(), with_fault("before_commit"));
    INFO(killed.out << killed.err);
    CHECK(killed.exit_code == 128 + SIGKILL);
    CHECK(total_clicks(db.url()) == 0);
    CHECK(number(db.url(), "SELECT count(*) FROM refgate_flushed_buckets") == 0);
    CHECK(std::stoll(counting.cli("SCARD refgate:buckets")) == buckets);

    auto again = counting.flush_ok(db.url(), kOneSecondBuckets);
    CHECK(again.out.find("0 bucket(s) already applied") != std::string::npos);
    check_exactly_once(db.url(), counting, sent, buckets);
}

TEST_CASE(
    "a flush killed after its commit, before deleting the bucket from Redis, never applies it "
    "twice",
    "[clicks][fault]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    std::int64_t sent = fill_buckets(db.url(), counting);
    std::int64_t buckets = std::stoll(counting.cli("SCARD refgate:buckets"));
    REQUIRE(buckets >= 2);

    auto killed = counting.flush(db.url(), with_fault("after_commit"));
    INFO(killed.out << killed.err);
    CHECK(killed.exit_code == 128 + SIGKILL);
    // The first bucket is in PostgreSQL and still in Redis.
    CHECK(number(db.url(), "SELECT count(*) FROM refgate_flushed_buckets") == 1);
    CHECK(total_clicks(db.url()) > 0);
    CHECK(std::stoll(counting.cli("SCARD refgate:buckets")) == buckets);

    auto again = counting.flush_ok(db.url(), kOneSecondBuckets);
    CHECK(again.out.find("1 bucket(s) already applied") != std::string::npos);
    check_exactly_once(db.url(), counting, sent, buckets);
}

TEST_CASE("a flush killed between two buckets loses nothing and applies nothing twice",
          "[clicks][fault]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    std::int64_t sent = fill_buckets(db.url(), counting);
    std::int64_t buckets = std::stoll(counting.cli("SCARD refgate:buckets"));
    REQUIRE(buckets >= 2);

    auto killed = counting.flush(db.url(), with_fault("between_buckets"));
    INFO(killed.out << killed.err);
    CHECK(killed.exit_code == 128 + SIGKILL);
    // The first bucket was applied and deleted; the others wait.
    CHECK(number(db.url(), "SELECT count(*) FROM refgate_flushed_buckets") == 1);
    CHECK(std::stoll(counting.cli("SCARD refgate:buckets")) == buckets - 1);
    CHECK(total_clicks(db.url()) > 0);
    CHECK(total_clicks(db.url()) < sent);

    auto again = counting.flush_ok(db.url(), kOneSecondBuckets);
    CHECK(again.out.find("0 bucket(s) already applied") != std::string::npos);
    check_exactly_once(db.url(), counting, sent, buckets);
}

TEST_CASE("a bucket that Redis brings back after it was flushed is skipped by the next flush",
          "[clicks][fault]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    std::int64_t sent = fill_buckets(db.url(), counting);
    counting.flush_ok(db.url(), kOneSecondBuckets);
    REQUIRE(total_clicks(db.url()) == sent);

    // What an AOF replay that lost the flusher's DEL and SREM brings back.
    std::string bucket =
        query(db.url(), "SELECT bucket FROM refgate_flushed_buckets ORDER BY bucket LIMIT 1")[0][0]
            .c_str();
    std::string link =
        query(db.url(), "SELECT id FROM refgate_links WHERE slug = 'alpha'")[0][0].c_str();
    std::string field = link + "|" + utc_today() + "|direct|human";
    REQUIRE(counting.cli("HSET refgate:bucket:" + bucket + " '" + field + "' 7") == "1");
    REQUIRE(counting.cli("SADD refgate:buckets " + bucket) == "1");

    auto again = counting.flush_ok(db.url(), kOneSecondBuckets);
    CHECK(again.out.find("flushed: 0 bucket(s)") != std::string::npos);
    CHECK(again.out.find("1 bucket(s) already applied") != std::string::npos);
    CHECK(total_clicks(db.url()) == sent);
    CHECK(counting.cli("EXISTS refgate:bucket:" + bucket) == "0");
    CHECK(counting.cli("SCARD refgate:buckets") == "0");
}

namespace {

// `refgate rollups check --all`: the stats roll-ups recomputed from the base tables.
CommandResult rollups_check(const std::string& url) {
    return run_refgate({"rollups", "check", "--all"}, {{"REFGATE_DATABASE_URL", url}});
}

// Every click of the base table is in the roll-ups once (per link, per partner), nothing else.
void check_rollups_match(const std::string& url, std::int64_t clicks) {
    auto check = rollups_check(url);
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);
    CHECK(check.out.find(": 0 difference(s)") != std::string::npos);
    for (const char* table : {"refgate_rollup_link_days", "refgate_rollup_partner_days"}) {
        INFO(table);
        CHECK(number(url, std::string("SELECT coalesce(sum(human + bot + prefetch + scanner), 0) "
                                      "FROM ") +
                              table) == clicks);
    }
    // Month sums only of the months that have ended (sql/015_rollup_closed_months.sql).
    CHECK(number(url,
                 "SELECT coalesce(sum(human + bot + prefetch + scanner), 0) FROM "
                 "refgate_rollup_link_months") ==
          number(url,
                 "SELECT coalesce(sum(human + bot + prefetch + scanner), 0) FROM "
                 "refgate_rollup_link_days WHERE day < (SELECT months_through FROM "
                 "refgate_rollup_state)"));
}

}  // namespace

TEST_CASE(
    "a flush killed between the counts and their roll-ups commits neither, and the roll-ups "
    "equal the counts after flushes, kills and a bucket Redis brings back",
    "[clicks][fault][stats]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    std::int64_t sent = fill_buckets(db.url(), counting);
    std::int64_t buckets = std::stoll(counting.cli("SCARD refgate:buckets"));
    REQUIRE(buckets >= 2);

    auto killed = counting.flush(db.url(), with_fault("before_rollups"));
    INFO(killed.out << killed.err);
    CHECK(killed.exit_code == 128 + SIGKILL);
    CHECK(total_clicks(db.url()) == 0);
    CHECK(number(db.url(), "SELECT count(*) FROM refgate_flushed_buckets") == 0);
    check_rollups_match(db.url(), 0);

    counting.flush_ok(db.url(), kOneSecondBuckets);
    check_exactly_once(db.url(), counting, sent, buckets);
    check_rollups_match(db.url(), sent);

    // What an AOF replay that lost the flusher's DEL brings back is skipped by the roll-ups too.
    std::string bucket =
        query(db.url(), "SELECT bucket FROM refgate_flushed_buckets ORDER BY bucket LIMIT 1")[0][0]
            .c_str();
    std::string link =
        query(db.url(), "SELECT id FROM refgate_links WHERE slug = 'beta'")[0][0].c_str();
    REQUIRE(counting.cli("HSET refgate:bucket:" + bucket + " '" + link + "|" + utc_today() +
                         "|blog|human' 7") == "1");
    REQUIRE(counting.cli("SADD refgate:buckets " + bucket) == "1");
    auto again = counting.flush_ok(db.url(), kOneSecondBuckets);
    CHECK(again.out.find("1 bucket(s) already applied") != std::string::npos);
    check_rollups_match(db.url(), sent);
}

TEST_CASE("a bucket too large for one Redis reply is read whole, each field once", "[clicks]") {
    // The flusher reads a bucket with HSCAN in replies of a few hundred KiB: four batch fields of
    // 10,000 counts (about 350 KiB each) and 3,000 one-counter fields of the older form take
    // several replies, and every count must arrive exactly once.
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    std::string link =
        query(db.url(), "SELECT id FROM refgate_links WHERE slug = 'alpha'")[0][0].c_str();
    std::string bucket = std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count() -
                                        3'600);
    const std::string script =
        "for b = 1, 4 do local t = {} "
        "for i = 1, 10000 do t[i] = ARGV[1] .. \"|\" .. ARGV[2] .. \"|b\" .. i .. \"|human 1\" end "
        "redis.call(\"HSET\", KEYS[1], \"batch:test-\" .. b, table.concat(t, \"\\n\") .. \"\\n\") "
        "end "
        "for i = 1, 3000 do "
        "redis.call(\"HSET\", KEYS[1], ARGV[1] .. \"|\" .. ARGV[2] .. \"|c\" .. i .. \"|human\", "
        "1) "
        "end "
        "return redis.call(\"SADD\", \"refgate:buckets\", ARGV[3])";
    REQUIRE(counting.cli("EVAL '" + script + "' 1 refgate:bucket:" + bucket + " " + link + " " +
                         utc_today() + " " + bucket) == "1");
    REQUIRE(counting.cli("HLEN refgate:bucket:" + bucket) == "3004");

    // 13,000 channels of one link: past the default channel cap, which would fold them into
    // "other" (the test of that is below); here every field must come through as it is.
    EnvPairs env = kOneSecondBuckets;
    env.emplace_back("REFGATE_MAX_CHANNELS_PER_LINK_DAY", "100000");
    auto flushed = counting.flush_ok(db.url(), env);
    CHECK(flushed.out.find("flushed: 1 bucket(s), 13000 counter(s), 43000 click(s)") !=
          std::string::npos);
    CHECK(total_clicks(db.url()) == 43'000);
    CHECK(number(db.url(), "SELECT count(*) FROM refgate_click_counts") == 13'000);
    CHECK(
        number(db.url(),
               "SELECT count(*) FROM refgate_click_counts WHERE channel LIKE 'b%' AND human = 4") ==
        10'000);
    CHECK(counting.cli("EXISTS refgate:bucket:" + bucket) == "0");
}

TEST_CASE(
    "clicks counted after Redis lost a flush's writes still reach PostgreSQL, though their bucket "
    "id was flushed before",
    "[clicks][fault]") {
    // `refgate flush` closes the bucket being filled. When Redis then loses the flush's writes in
    // its AOF fsync window (the SET of refgate:bucket:closed, the DEL and the SREM), the bucket
    // comes back, and as its time has not passed, new clicks land in it too. The next flush must
    // skip the old counts (applied before) but not the new ones (guarantee 3: every count that
    // Redis kept reaches PostgreSQL). Hour-long buckets keep the test inside one bucket.
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    const EnvPairs hour = {{"REFGATE_BUCKET_SECONDS", "3600"}};
    EnvPairs env = hour;
    env.emplace_back("REFGATE_FLUSH_INTERVAL_MS", kNever);
    ServiceProcess service(counting.service(db.url(), env));
    const auto requests = mixed_requests();

    load_ok(service.port(), requests, 60, 2);
    std::this_thread::sleep_for(kSettle);
    // Redis before the flush.
    std::string bucket = counting.cli("SMEMBERS refgate:buckets");
    REQUIRE(!bucket.empty());
    REQUIRE(bucket.find('\n') == std::string::npos);
    REQUIRE(counting.cli("COPY refgate:bucket:" + bucket + " saved:bucket") == "1");
    std::string closed = counting.cli("GET refgate:bucket:closed");

    counting.flush_ok(db.url(), hour);
    REQUIRE(total_clicks(db.url()) == 60);

    // Redis after a crash that lost the flush's writes: exactly as before the flush.
    REQUIRE(counting.cli("COPY saved:bucket refgate:bucket:" + bucket + " REPLACE") == "1");
    counting.cli("SADD refgate:buckets " + bucket);
    if (closed.empty()) {
        counting.cli("DEL refgate:bucket:closed");
    } else {
        counting.cli("SET refgate:bucket:closed " + closed);
    }

    load_ok(service.port(), requests, 40, 2);
    CHECK(service.stop(SIGTERM) == 0);
    INFO("bucket " << bucket << " holds now: " << counting.cli("HGETALL refgate:bucket:" + bucket));
    auto again = counting.flush_ok(db.url(), hour);
    INFO(again.out);
    CHECK(total_clicks(db.url()) == 100);
    // The stats roll-ups took the new counts of the bucket once, and not the old ones again.
    check_rollups_match(db.url(), 100);
}

TEST_CASE("SIGTERM under load loses no click: PostgreSQL ends with every answered redirect",
          "[clicks]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    ServiceProcess service(counting.service(db.url(), {{"REFGATE_FLUSH_INTERVAL_MS", kNever}}));
    const int port = service.port();
    const auto requests = mixed_requests();
    std::atomic<bool> stop{false};

    auto load = std::async(std::launch::async, [&] {
        return run_load(
            port, requests,
            LoadOptions{.total = 10'000'000, .connections = 16, .max_time = 30s, .stop = &stop});
    });
    std::this_thread::sleep_for(1500ms);
    CHECK(service.stop(SIGTERM) == 0);
    stop = true;
    auto result = load.get();
    INFO(result.summary());
    REQUIRE(result.count(302) > 1000);
    CHECK(result.answered() == result.count(302));

    counting.flush_ok(db.url());
    auto answered = static_cast<std::int64_t>(result.count(302));
    std::int64_t counted = total_clicks(db.url());
    // Nothing answered is lost...
    CHECK(counted >= answered);
    // ...and nothing is counted that the reader never got an answer for.
    CHECK(counted == answered);
}

TEST_CASE("SIGKILL under load loses at most the clicks of the last aggregation window",
          "[clicks]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    ServiceProcess service(counting.service(db.url(), {{"REFGATE_FLUSH_INTERVAL_MS", kNever},
                                                       {"REFGATE_AGGREGATION_WINDOW_MS", "250"}}));
    const int port = service.port();
    const auto requests = mixed_requests();
    constexpr double kRate = 2000;
    constexpr std::size_t kConnections = 8;
    constexpr std::size_t kPipeline = 4;
    std::atomic<bool> stop{false};

    auto load = std::async(std::launch::async, [&] {
        return run_load(port, requests,
                        LoadOptions{.total = 10'000'000,
                                    .connections = kConnections,
                                    .max_time = 30s,
                                    .pipeline = kPipeline,
                                    .rate = kRate,
                                    .stop = &stop});
    });
    std::this_thread::sleep_for(2500ms);
    auto killed_at = std::chrono::steady_clock::now();
    CHECK(service.stop(SIGKILL) == 128 + SIGKILL);
    stop = true;
    auto result = load.get();
    INFO(result.summary());
    auto answered = static_cast<std::int64_t>(result.count(302));
    REQUIRE(answered > 2000);

    counting.flush_ok(db.url());
    std::int64_t counted = total_clicks(db.url());
    std::int64_t lost = answered - counted;
    // A window, plus a margin for the sender's round trip on a slow machine.
    constexpr auto kMargin = 250ms;
    auto recent = static_cast<std::int64_t>(
        result.answered_between(killed_at - kWindow - kMargin, killed_at));
    auto window_clicks = static_cast<std::int64_t>(result.answered_between(
        killed_at - std::chrono::duration_cast<std::chrono::steady_clock::duration>(kWindow),
        killed_at));
    WARN("SIGKILL at " << kRate << " redirects/s: " << lost << " of " << answered
                       << " answered clicks lost (" << (1000.0 * static_cast<double>(lost) / kRate)
                       << " ms of traffic); the last window held " << window_clicks
                       << ", the last window + " << kMargin.count() << " ms held " << recent);
    CHECK(lost <= recent);
    // A click can be counted and its response still in flight at the kill, no more.
    CHECK(counted <= answered + static_cast<std::int64_t>(kConnections * kPipeline));
}

TEST_CASE(
    "Redis down at SIGTERM: the counts go to the spill file, and the next instance replays them "
    "exactly",
    "[clicks][redis]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    const auto requests = mixed_requests();
    {
        ServiceProcess first(counting.service(db.url(), {{"REFGATE_FLUSH_INTERVAL_MS", kNever}}));
        load_ok(first.port(), requests, 300);
        std::this_thread::sleep_for(kSettle);
        counting.redis.stop();
        // Redis being down changes nothing for readers.
        load_ok(first.port(), requests, 300);
        CHECK(first.stop(SIGTERM) == 0);
        INFO(first.log());
        REQUIRE(std::filesystem::exists(counting.spill));
        std::filesystem::copy_file(counting.spill, counting.dir.file("spill-copy.json"));
        CHECK(log_lines(first.log(), "clicks_spilled").size() == 1);
        CHECK(log_lines(first.log(), "clicks_lost_at_stop").empty());
    }
    counting.redis.start();
    {
        ServiceProcess second(counting.service(db.url(), {{"REFGATE_FLUSH_INTERVAL_MS", kNever}}));
        REQUIRE(second.wait_for_log("clicks_spill_replayed"));
        CHECK_FALSE(std::filesystem::exists(counting.spill));
        CHECK(second.stop(SIGTERM) == 0);
    }
    counting.flush_ok(db.url());
    CHECK(total_clicks(db.url()) == 600);

    // The same file replayed again (as after a crash before it was removed) adds nothing: its
    // batches keep their ids, and Redis remembers the ids it applied.
    std::filesystem::copy_file(counting.dir.file("spill-copy.json"), counting.spill);
    {
        ServiceProcess third(counting.service(db.url(), {{"REFGATE_FLUSH_INTERVAL_MS", kNever}}));
        REQUIRE(third.wait_for_log("clicks_spill_replayed"));
        CHECK(third.stop(SIGTERM) == 0);
    }
    counting.flush_ok(db.url());
    CHECK(total_clicks(db.url()) == 600);
    check_rollups_match(db.url(), 600);
}

TEST_CASE(
    "with Redis down, redirects still answer 302, and clicks past REFGATE_MAX_PENDING_KEYS are "
    "dropped and logged",
    "[clicks][redis]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    ServiceProcess service(counting.service(
        db.url(), {{"REFGATE_FLUSH_INTERVAL_MS", kNever}, {"REFGATE_MAX_PENDING_KEYS", "2"}}));
    counting.redis.stop();

    std::vector<std::string> requests;
    for (int i = 1; i <= 5; ++i) {
        requests.push_back(raw_request("GET", "/go/alpha?src=key-" + std::to_string(i),
                                       {{"User-Agent", kBrowser}}));
    }
    load_ok(service.port(), requests, 500, 4);
    REQUIRE(service.wait_for_log("clicks_dropped"));
    auto dropped = log_lines(service.log(), "clicks_dropped");
    REQUIRE_FALSE(dropped.empty());
    CHECK(dropped.front().value("max_pending_keys", 0) == 2);
    CHECK(dropped.front().value("clicks", 0) > 0);

    counting.redis.start();
    CHECK(service.stop(SIGTERM) == 0);
    counting.flush_ok(db.url());
    auto rows = clicks_by_key(db.url());
    INFO("counted: " << rows.size() << " keys, " << total_clicks(db.url()) << " clicks");
    CHECK(rows.size() <= 2);
    for (const auto& [key, clicks] : rows) CHECK(clicks <= 100);
    CHECK(total_clicks(db.url()) > 0);
    CHECK(total_clicks(db.url()) < 500);
}

TEST_CASE(
    "with Redis down, clicks over no more keys than REFGATE_MAX_PENDING_KEYS are all kept "
    "however many windows pass",
    "[clicks][redis]") {
    // The bound is on counter keys: two keys clicked in window after window are two keys.
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    ServiceProcess service(counting.service(
        db.url(), {{"REFGATE_FLUSH_INTERVAL_MS", kNever}, {"REFGATE_MAX_PENDING_KEYS", "2"}}));
    counting.redis.stop();

    const std::vector<std::string> requests = {
        raw_request("GET", "/go/alpha?src=blog", {{"User-Agent", kBrowser}}),
        raw_request("GET", "/go/alpha", {{"User-Agent", kBrowser}}),
    };
    // About six windows of traffic.
    auto result = run_load(service.port(), requests,
                           LoadOptions{.total = 60, .connections = 2, .max_time = 30s, .rate = 40});
    INFO(result.summary());
    REQUIRE(result.count(302) == 60);

    counting.redis.start();
    CHECK(service.stop(SIGTERM) == 0);
    INFO(service.log());
    CHECK(log_lines(service.log(), "clicks_dropped").empty());
    counting.flush_ok(db.url());
    CHECK(total_clicks(db.url()) == 60);
}

namespace {

// The largest number of rows one (link, day) has in refgate_click_counts.
std::int64_t most_rows_per_link_day(const std::string& url) {
    return number(url,
                  "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM "
                  "refgate_click_counts GROUP BY link_id, day) AS r");
}

// A counter of /metrics with its labels, e.g. refgate_channels_capped_total{reason="cap"}.
double metric_value(int admin_port, const std::string& series) {
    auto body = http_get(admin_port, "/metrics").body;
    auto at = body.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(body.substr(at + series.size() + 2));
}

}  // namespace

TEST_CASE(
    "5000 clicks with random src values make at most cap + 1 rows per link and day, "
    "every click counted",
    "[clicks][channels]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    const EnvPairs cap = {{"REFGATE_MAX_CHANNELS_PER_LINK_DAY", "5"}};
    ServiceProcess service(counting.service(db.url(), cap));
    // One client minting a channel per request (r + 8 random hex digits: short enough to pass
    // for a channel), on one link.
    std::mt19937_64 random(std::random_device{}());
    std::vector<std::string> requests;
    constexpr std::size_t kTotal = 5'000;
    for (std::size_t i = 0; i < kTotal; ++i) {
        char src[16];
        std::snprintf(src, sizeof src, "r%08x", static_cast<unsigned>(random()));
        requests.push_back(
            raw_request("GET", std::string("/go/alpha?src=") + src, {{"User-Agent", kBrowser}}));
    }
    load_ok(service.port(), requests, kTotal, 8);
    std::this_thread::sleep_for(kSettle);
    // What went to "other" is a metric, and said in a log line without the channels themselves.
    double capped =
        metric_value(service.admin_port(), "refgate_channels_capped_total{reason=\"cap\"}");
    CHECK(capped >= static_cast<double>(kTotal) - 5.0 * 16);
    CHECK(service.wait_for_log("channels_capped"));
    std::string log = service.log();
    for (std::size_t i = 0; i < 100; ++i) {
        auto src = requests[i].substr(requests[i].find("src=") + 4, 9);
        CHECK(log.find(src) == std::string::npos);
    }

    counting.flush_ok(db.url(), cap);
    CHECK(most_rows_per_link_day(db.url()) <= 6);
    CHECK(number(db.url(), "SELECT count(*) FROM refgate_click_counts WHERE channel <> 'other'") <=
          5);
    CHECK(total_clicks(db.url()) == static_cast<std::int64_t>(kTotal));
    CHECK(number(db.url(), "SELECT sum(human) FROM refgate_click_counts WHERE channel = 'other'") >=
          static_cast<std::int64_t>(kTotal) - 5 * 16);
    // The roll-ups (the overview's channels among them) hold the rows as folded.
    check_rollups_match(db.url(), static_cast<std::int64_t>(kTotal));
}

TEST_CASE("two instances each within the channel cap are folded to it by the flush, exactly once",
          "[clicks][channels]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    const EnvPairs cap = {{"REFGATE_MAX_CHANNELS_PER_LINK_DAY", "3"},
                          {"REFGATE_FLUSH_INTERVAL_MS", kNever}};
    ServiceProcess a(counting.service(db.url(), cap, counting.dir.file("spill-a.json")));
    ServiceProcess b(counting.service(db.url(), cap, counting.dir.file("spill-b.json")));
    // Each instance sees three channels of its own on the same link: within the cap in memory,
    // six together.
    auto send = [&](const ServiceProcess& to, const std::string& channel, std::size_t n) {
        load_ok(to.port(),
                {raw_request("GET", "/go/beta?src=" + channel, {{"User-Agent", kBrowser}})}, n, 1);
    };
    send(a, "a1", 5);
    send(a, "a2", 4);
    send(a, "a3", 3);
    send(b, "b1", 6);
    send(b, "b2", 2);
    send(b, "b3", 1);
    // Identifier-like values count as "other" wherever they come from.
    send(a, "alice%40example.com", 2);
    send(b, "8f3a9c2e-1b7d-4f60-a9e2-0c1d2e3f4a5b", 2);
    std::this_thread::sleep_for(kSettle);
    CHECK(metric_value(a.admin_port(), "refgate_channels_capped_total{reason=\"identifier\"}") ==
          2);
    CHECK(metric_value(a.admin_port(), "refgate_channels_capped_total{reason=\"cap\"}") == 0);
    CHECK(a.stop(SIGTERM) == 0);
    CHECK(b.stop(SIGTERM) == 0);

    counting.flush_ok(db.url(), cap);
    CHECK(number(db.url(),
                 "SELECT count(*) FROM refgate_click_counts WHERE channel NOT IN ('other', "
                 "'direct')") == 3);
    CHECK(most_rows_per_link_day(db.url()) == 4);
    CHECK(total_clicks(db.url()) == 25);
    // Whichever buckets held them, the three kept are three of the six, and "other" has the rest.
    CHECK(number(db.url(), "SELECT human FROM refgate_click_counts WHERE channel = 'other'") ==
          25 - number(db.url(),
                      "SELECT sum(human) FROM refgate_click_counts WHERE channel <> 'other'"));
    CHECK(number(db.url(), "SELECT human FROM refgate_click_counts WHERE channel = 'other'") >=
          4 + 6);
    // A second flush finds nothing to apply again.
    counting.flush_ok(db.url(), cap);
    CHECK(total_clicks(db.url()) == 25);
}

TEST_CASE("two instances serving and flushing against one Redis and one database count exactly",
          "[clicks]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    const EnvPairs env = {{"REFGATE_FLUSH_INTERVAL_MS", "300"}, {"REFGATE_BUCKET_SECONDS", "1"}};
    ServiceProcess a(counting.service(db.url(), env, counting.dir.file("spill-a.json")));
    ServiceProcess b(counting.service(db.url(), env, counting.dir.file("spill-b.json")));
    const auto requests = mixed_requests();
    constexpr std::size_t kEach = 4'000;
    auto run = [&](int port) {
        return std::async(std::launch::async, [&requests, port] {
            return run_load(
                port, requests,
                LoadOptions{.total = kEach, .connections = 8, .max_time = 40s, .rate = 1000});
        });
    };
    auto load_a = run(a.port());
    auto load_b = run(b.port());
    auto result_a = load_a.get();
    auto result_b = load_b.get();
    INFO("a: " << result_a.summary() << "\nb: " << result_b.summary());
    REQUIRE(result_a.count(302) == kEach);
    REQUIRE(result_b.count(302) == kEach);
    // The background flushers are at work while the instances run, not only at their stop (they
    // run at a background priority: on a busy machine the first round may come after the load).
    auto flushed = [&] { return number(db.url(), "SELECT count(*) FROM refgate_flushed_buckets"); };
    for (auto until = std::chrono::steady_clock::now() + 15s;
         flushed() == 0 && std::chrono::steady_clock::now() < until;)
        std::this_thread::sleep_for(100ms);
    CHECK(flushed() > 0);

    CHECK(a.stop(SIGTERM) == 0);
    CHECK(b.stop(SIGTERM) == 0);
    counting.flush_ok(db.url(), {{"REFGATE_BUCKET_SECONDS", "1"}});
    CHECK(total_clicks(db.url()) == static_cast<std::int64_t>(2 * kEach));
    CHECK(number(db.url(), "SELECT sum(clicks) FROM refgate_flushed_buckets") ==
          static_cast<std::int64_t>(2 * kEach));
}

TEST_CASE(
    "unique estimates count distinct readers, leave out DNT and Sec-GPC clicks, and trust "
    "X-Forwarded-For only from trusted proxies",
    "[clicks]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    {
        ServiceProcess service(counting.service(
            db.url(),
            {{"REFGATE_FLUSH_INTERVAL_MS", kNever}, {"REFGATE_TRUSTED_PROXIES", "127.0.0.1"}}));
        wait_for_salt(counting);
        std::vector<std::string> requests;
        for (int n = 1; n <= 5; ++n) {
            for (int i = 0; i < 4; ++i) {
                requests.push_back(
                    raw_request("GET", "/go/alpha",
                                {{"User-Agent", kBrowser},
                                 {"X-Forwarded-For", "198.51.100." + std::to_string(n)}}));
            }
        }
        for (int n = 61; n <= 63; ++n) {
            requests.push_back(raw_request("GET", "/go/alpha",
                                           {{"User-Agent", kBrowser},
                                            {"X-Forwarded-For", "198.51.100." + std::to_string(n)},
                                            {"DNT", "1"}}));
        }
        for (int n = 71; n <= 73; ++n) {
            requests.push_back(raw_request("GET", "/go/alpha",
                                           {{"User-Agent", kBrowser},
                                            {"X-Forwarded-For", "198.51.100." + std::to_string(n)},
                                            {"Sec-GPC", "1"}}));
        }
        load_ok(service.port(), requests, requests.size(), 2);
        CHECK(service.stop(SIGTERM) == 0);
    }
    {
        // No trusted proxies: X-Forwarded-For is the client's word, and every click comes from
        // the one address the test connects from.
        ServiceProcess service(counting.service(db.url(), {{"REFGATE_FLUSH_INTERVAL_MS", kNever}}));
        wait_for_salt(counting);
        std::vector<std::string> requests;
        for (int n = 1; n <= 5; ++n) {
            requests.push_back(
                raw_request("GET", "/go/beta",
                            {{"User-Agent", kBrowser},
                             {"X-Forwarded-For", "198.51.100." + std::to_string(n)}}));
        }
        load_ok(service.port(), requests, 10, 2);
        CHECK(service.stop(SIGTERM) == 0);
    }
    auto flushed = counting.flush_ok(db.url());
    INFO(flushed.out);
    CHECK(number(db.url(), "SELECT sum(clicks) FROM refgate_clicks_daily WHERE link = 'alpha'") ==
          26);
    CHECK(number(db.url(), "SELECT sum(clicks) FROM refgate_clicks_daily WHERE link = 'beta'") ==
          10);
    CHECK(number(db.url(),
                 "SELECT unique_estimate FROM refgate_uniques_daily WHERE link = 'alpha'") == 5);
    CHECK(number(db.url(),
                 "SELECT unique_estimate FROM refgate_uniques_daily WHERE link = 'beta'") == 1);
}

constexpr const char* kCanaryBrowser =
    "Mozilla/5.0 (X11; Linux x86_64; refgate-privacy-canary-4b1d) AppleWebKit/537.36 (KHTML, like "
    "Gecko) Chrome/120.0.0.0 Safari/537.36";

TEST_CASE(
    "no client address, user agent or daily salt is left in PostgreSQL, files or logs, and the "
    "salt "
    "lives only in Redis",
    "[clicks][privacy]") {
    TestDatabase db;
    load_links(db.url());
    Counting counting;
    // The first agent is a browser's (counted human, so it feeds the unique estimate) with a
    // marker in its platform comment.
    const std::vector<std::string> probes = {"refgate-privacy-canary-4b1d",
                                             "refgate-privacy-probe-9e5a", "198.51.100.77",
                                             "203.0.113.77", "2001:db8::77"};
    const std::vector<std::string> requests = {
        raw_request("GET", "/go/alpha?src=blog",
                    {{"User-Agent", kCanaryBrowser}, {"X-Forwarded-For", "198.51.100.77"}}),
        raw_request("GET", "/go/beta",
                    {{"User-Agent", "Slackbot-LinkExpanding 1.0 refgate-privacy-probe-9e5a"},
                     {"X-Forwarded-For", "203.0.113.77"}}),
        raw_request(
            "HEAD", "/go/gamma",
            {{"User-Agent", kCanaryBrowser}, {"X-Forwarded-For", "2001:db8::77, 198.51.100.77"}}),
    };

    std::string spill, snapshot, log;
    {
        ServiceProcess service(counting.service(db.url(), {{"REFGATE_FLUSH_INTERVAL_MS", "300"},
                                                           {"REFGATE_BUCKET_SECONDS", "1"},
                                                           {"REFGATE_TRUSTED_PROXIES", "127.0.0.1"},
                                                           {"REFGATE_LOG_LEVEL", "debug"}}));
        wait_for_salt(counting);
        load_ok(service.port(), requests, 300, 2);
        std::this_thread::sleep_for(kSettle);
        counting.flush_ok(db.url(), {{"REFGATE_BUCKET_SECONDS", "1"}});
        // Some clicks left for the spill file.
        counting.redis.stop();
        load_ok(service.port(), requests, 30, 2);
        CHECK(service.stop(SIGTERM) == 0);
        REQUIRE(std::filesystem::exists(counting.spill));
        spill = read_text(counting.spill);
        snapshot = read_text(service.snapshot_file());
        log = service.log();
    }
    counting.redis.start();
    REQUIRE(spill.find("|human") != std::string::npos);
    REQUIRE(snapshot.find("tailscale.com/alpha") != std::string::npos);
    REQUIRE(log.find("clicks_spilled") != std::string::npos);
    REQUIRE(total_clicks(db.url()) > 0);
    REQUIRE(number(db.url(), "SELECT count(*) FROM refgate_uniques") > 0);

    std::string salt = counting.cli("GET refgate:salt:" + utc_today());
    REQUIRE(salt.size() == 32);

    std::string dump =
        run_capture(require_env("REFGATE_TEST_PG_BINDIR") + "/pg_dump '" + db.url() + "'");
    REQUIRE(dump.find("refgate_clicks") != std::string::npos);

    std::string redis_dump;
    std::istringstream keys(counting.cli("--scan"));
    std::string key;
    while (std::getline(keys, key)) {
        if (key.empty()) continue;
        std::string type = counting.cli("TYPE " + key);
        redis_dump += key + "\n";
        if (type == "string") {
            redis_dump += counting.cli("GET " + key);
        } else if (type == "hash") {
            redis_dump += counting.cli("HGETALL " + key);
        } else if (type == "set") {
            redis_dump += counting.cli("SMEMBERS " + key);
        } else if (type == "list") {
            redis_dump += counting.cli("LRANGE " + key + " 0 -1");
        } else if (type == "zset") {
            redis_dump += counting.cli("ZRANGE " + key + " 0 -1 WITHSCORES");
        } else {
            FAIL("unexpected Redis key type " << type << " of " << key);
        }
        redis_dump += "\n";
    }
    REQUIRE(redis_dump.find("refgate:hll:") != std::string::npos);

    const std::map<std::string, const std::string*> places = {{"pg_dump", &dump},
                                                              {"Redis", &redis_dump},
                                                              {"spill file", &spill},
                                                              {"snapshot file", &snapshot},
                                                              {"service log", &log}};
    for (const auto& [place, text] : places) {
        for (const auto& probe : probes) {
            INFO(probe << " in the " << place);
            CHECK(text->find(probe) == std::string::npos);
        }
    }
    for (const auto& [place, text] : places) {
        INFO("the salt in the " << place);
        if (place == "Redis") {
            CHECK(text->find(salt) != std::string::npos);
        } else {
            CHECK(text->find(salt) == std::string::npos);
        }
    }
}

}  // namespace clicks_test
