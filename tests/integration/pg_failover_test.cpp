// PostgreSQL failover: a primary with a streaming standby (PrivatePostgres::standby_of), refgate
// given both in one multi-host URI. The primary goes away, the standby is promoted, and every
// connection refgate makes follows: the snapshot follower (changes reach redirects), the admin
// pool (writes), the flusher (counts exactly once) and the CLI; the stats API reads a replica.

#include <catch2/catch.hpp>
#include <csignal>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "support/http_client.hpp"
#include "support/private_postgres.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace pg_failover_test {

using namespace refgate::test;
using namespace std::chrono_literals;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

// A primary with the database `refgate` (migrated, one link) and a standby streaming from it.
struct Pair {
    PrivatePostgres primary;
    std::string primary_url = primary.create_database("refgate");
    bool imported = import_demo_links(primary_url);
    std::unique_ptr<PrivatePostgres> standby = PrivatePostgres::standby_of(primary);
    std::string standby_url = standby->url("refgate");

    // Both servers in one URI, the primary first.
    std::string both(const std::string& query = "?target_session_attrs=read-write") const {
        return "postgresql://refgate@127.0.0.1:" + std::to_string(primary.port()) +
               ",127.0.0.1:" + std::to_string(standby->port()) + "/refgate" + query;
    }
};

std::int64_t number(const std::string& url, const std::string& sql) {
    pqxx::connection conn(url);
    pqxx::nontransaction tx(conn);
    auto r = tx.exec(sql);
    if (r.empty() || r[0][0].is_null()) return 0;
    return r[0][0].as<std::int64_t>();
}

std::int64_t total_clicks(const std::string& url) {
    return number(url, "SELECT coalesce(sum(clicks), 0) FROM refgate_clicks");
}

std::int64_t flushed_clicks(const std::string& url) {
    return number(url, "SELECT coalesce(sum(clicks), 0) FROM refgate_flushed_buckets");
}

// Polls until f() is true or the time is up; returns the last f().
template <typename F>
bool eventually(F&& f, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        try {
            if (f()) return true;
        } catch (const std::exception&) {
            // a server still starting or gone: try again
        }
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(50ms);
    }
}

// The standby has replayed everything the primary wrote so far.
void wait_replayed(const Pair& pair) {
    std::string lsn;
    {
        pqxx::connection conn(pair.primary_url);
        pqxx::nontransaction tx(conn);
        lsn = tx.exec("SELECT pg_current_wal_lsn()::text")[0][0].c_str();
    }
    REQUIRE(eventually(
        [&] {
            return number(pair.standby_url,
                          "SELECT (pg_last_wal_replay_lsn() >= '" + lsn + "'::pg_lsn)::int") == 1;
        },
        10s));
}

void click(int port, int n) {
    for (int i = 0; i < n; ++i) {
        auto r = http_get(port, "/go/alpha", {{"User-Agent", kBrowser}});
        REQUIRE(r.status == 302);
    }
}

// What one service counts into: a Redis of its own (a service flushes every bucket its Redis
// holds) and a spill file in a directory of its own.
struct Counting {
    TempDir dir;
    PrivateRedis redis;

    ServiceOptions service(const std::string& database_url, EnvPairs env = {}) const {
        env.emplace_back("REFGATE_SPILL_FILE", dir.file("spill.json"));
        env.emplace_back("REFGATE_FLUSH_INTERVAL_MS", "300");
        env.emplace_back("REFGATE_BUCKET_SECONDS", "1");
        env.emplace_back("REFGATE_DRAIN_MS", "0");
        return ServiceOptions{
            .database_url = database_url, .redis_url = redis.url(), .env = std::move(env)};
    }

    void flush(const std::string& database_url) const {
        auto result = run_refgate({"flush"}, {{"REFGATE_DATABASE_URL", database_url},
                                              {"REFGATE_REDIS_URL", redis.url()}});
        INFO("refgate flush: " << result.out << result.err);
        REQUIRE(result.exit_code == 0);
    }
};

Headers bearer(const std::string& token) {
    return {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
}

Json readiness(const ServiceProcess& service) {
    return Json::parse(http_get(service.admin_port(), "/readyz").body);
}

bool metric_line(const ServiceProcess& service, const std::string& line) {
    return http_get(service.admin_port(), "/metrics").body.find("\n" + line + "\n") !=
           std::string::npos;
}

}  // namespace

TEST_CASE(
    "after the primary stops and the standby is promoted, admin writes, code changes and counts "
    "go on against it, each click counted once",
    "[pg][failover]") {
    Pair pair;
    Counting counting;
    std::string editor = create_api_token(pair.both(), "eddie", "editor");
    ServiceProcess service(counting.service(pair.both()));
    auto partner = http_request(service.admin_port(), "GET", "/api/v1/partners/tailscale",
                                bearer(editor));  // leaves an idle connection in the pool
    REQUIRE(partner.status == 200);
    click(service.port(), 30);
    // Some counts reach the primary through the service's own flusher.
    REQUIRE(eventually([&] { return total_clicks(pair.primary_url) > 0; }, 10s));

    pair.primary.stop();
    pair.standby->promote();
    // An editor's client retries a 503 (Retry-After: 1) while the promotion settles.
    auto promoted = std::chrono::steady_clock::now();
    HttpResponse patch;
    REQUIRE(eventually(
        [&] {
            auto h = bearer(editor);
            h.emplace_back("If-Match", partner.header("ETag"));
            patch = http_request(service.admin_port(), "PATCH", "/api/v1/partners/tailscale", h,
                                 R"({"ref_code": "failover7"})");
            return patch.status != 503;
        },
        5s));
    INFO(patch.body << "\nservice log:\n" << service.log());
    REQUIRE(patch.status == 200);
    INFO("the admin write succeeded " << std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::steady_clock::now() - promoted)
                                             .count()
                                      << " ms after the promotion");
    auto written = std::chrono::steady_clock::now();
    std::int64_t polls = 0;  // each a click too
    REQUIRE(eventually(
        [&] {
            auto r = http_get(service.port(), "/go/alpha", {{"User-Agent", kBrowser}});
            polls += r.status == 302 ? 1 : 0;
            return r.header("Location") == "https://tailscale.com/alpha?ref=failover7";
        },
        5s));
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - written);
    INFO("the new code served after " << took.count() << " ms");
    CHECK(took <= 1500ms);

    click(service.port(), 20);
    REQUIRE(service.stop(SIGTERM) == 0);
    counting.flush(pair.both());  // the CLI with the multi-host URI
    // Clicks before and after the promotion, each once.
    CHECK(total_clicks(pair.standby_url) == 50 + polls);
    CHECK(flushed_clicks(pair.standby_url) == 50 + polls);
}

TEST_CASE(
    "with a synchronous standby, counts flushed just before the primary crashes are all on the "
    "promoted standby, and readyz and the gauge say whether commits are replicated",
    "[pg][failover]") {
    Pair pair;
    pair.primary.set_synchronous_standby_names("*");
    REQUIRE(eventually(
        [&] {
            return number(pair.primary_url,
                          "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'") ==
                   1;
        },
        10s));
    Counting counting;
    ServiceProcess service(counting.service(pair.both()));
    REQUIRE(
        eventually([&] { return readiness(service)["postgres_sync_replication"] == true; }, 5s));
    CHECK(metric_line(service, "refgate_postgres_sync_replication 1"));

    click(service.port(), 40);
    REQUIRE(eventually([&] { return total_clicks(pair.primary_url) == 40; }, 10s));
    pair.primary.crash();
    pair.standby->promote();
    CHECK(total_clicks(pair.standby_url) == 40);
    CHECK(flushed_clicks(pair.standby_url) == 40);

    // The promoted standby has no standby of its own: the flusher's next connection says so.
    click(service.port(), 10);
    CHECK(service.wait_for_log("postgres_commit_not_replicated", 10s));
    CHECK(readiness(service)["postgres_sync_replication"] == false);
    CHECK(metric_line(service, "refgate_postgres_sync_replication 0"));
    REQUIRE(service.stop(SIGTERM) == 0);
    counting.flush(pair.both());
    CHECK(total_clicks(pair.standby_url) == 50);
    CHECK(flushed_clicks(pair.standby_url) == 50);
}

TEST_CASE(
    "the stats API reads REFGATE_STATS_DATABASE_URL's replica, and answers 503 while it is down, "
    "and the CLI finds the writable host of a multi-host URI",
    "[pg][failover][stats]") {
    Pair pair;
    // Standby first, no target_session_attrs: refgate asks for the writable host itself.
    std::string standby_first =
        "postgresql://refgate@127.0.0.1:" + std::to_string(pair.standby->port()) +
        ",127.0.0.1:" + std::to_string(pair.primary.port()) + "/refgate";
    auto migrated = run_refgate({"migrate"}, {{"REFGATE_DATABASE_URL", standby_first}});
    INFO(migrated.out << migrated.err);
    REQUIRE(migrated.exit_code == 0);
    std::string viewer = create_api_token(standby_first, "dashboards", "viewer");
    Counting counting;
    ServiceProcess service(
        counting.service(pair.primary_url, {{"REFGATE_STATS_DATABASE_URL", pair.standby_url}}));
    click(service.port(), 12);
    REQUIRE(eventually([&] { return total_clicks(pair.primary_url) == 12; }, 10s));
    wait_replayed(pair);
    std::string target = "/api/v1/stats/links/alpha?from=" + utc_today() + "&to=" + utc_today();
    auto stats = http_request(service.admin_port(), "GET", target, bearer(viewer));
    INFO(stats.body);
    REQUIRE(stats.status == 200);
    CHECK(Json::parse(stats.body)["totals"]["human"] == 12);

    pair.standby->stop();
    auto down = http_request(service.admin_port(), "GET", target, bearer(viewer));
    CHECK(down.status == 503);
    CHECK(down.has_header("Retry-After"));
    // Everything else still works against the primary.
    CHECK(http_request(service.admin_port(), "GET", "/api/v1/partners", bearer(viewer)).status ==
          200);
    REQUIRE(service.stop(SIGTERM) == 0);
}

}  // namespace pg_failover_test
