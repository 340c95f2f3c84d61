// GET /api/v1/stats/live end to end: clicks sent to the binary show up per link within seconds,
// today's clicks per class (flushed or not) beside yesterday's over the same hours, all read from
// what the instances keep in Redis; nothing about a reader in the answer.

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace stats_live_test {

using namespace refgate::test;
using namespace std::chrono_literals;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

const char* const kDocument = R"json({
  "partners": [
    {"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks42",
     "allowed_domains": ["tailscale.com"]}
  ],
  "links": [
    {"slug": "alpha", "partner": "tailscale", "destination": "https://tailscale.com/alpha"},
    {"slug": "beta", "partner": "tailscale", "destination": "https://tailscale.com/beta"},
    {"slug": "quiet", "partner": "tailscale", "destination": "https://tailscale.com/quiet"}
  ]
})json";

const char* const kBrowser =
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

struct Fixture {
    TestDatabase db;
    PrivateRedis redis;
    std::string viewer = create_api_token(db.url(), "dashboards", "viewer");
    bool imported = import_document(db.url(), kDocument);
    ServiceProcess service{{.database_url = db.url(), .redis_url = redis.url()}};

    HttpResponse get(const std::string& target) {
        return http_get(service.admin_port(), target, {{"Authorization", "Bearer " + viewer}});
    }
    Json live() {
        auto r = get("/api/v1/stats/live");
        INFO(r.status << " " << r.body);
        REQUIRE(r.status == 200);
        return Json::parse(r.body);
    }
    void click(const std::string& path, Headers headers, const std::string& method = "GET") {
        REQUIRE(http_request(service.port(), method, path, headers).status == 302);
    }
    // Polls the live answer until `done` holds (10 s at most), and returns the last answer.
    template <typename Pred>
    Json wait_for(Pred done) {
        auto deadline = std::chrono::steady_clock::now() + 10s;
        Json body = live();
        while (!done(body) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(200ms);
            body = live();
        }
        INFO(body.dump());
        REQUIRE(done(body));
        return body;
    }
};

std::uint64_t clicks_of(const Json& body, const std::string& slug) {
    for (const auto& l : body["links"]) {
        if (l["link"] == slug) return l["human_clicks"].get<std::uint64_t>();
    }
    return 0;
}

}  // namespace

TEST_CASE("the live figures show clicks per link within seconds and today's clicks per class",
          "[stats][live][pg][redis]") {
    Fixture f;
    Json before = f.live();
    CHECK(before["window_seconds"] == 300);
    CHECK(before["links"].empty());
    CHECK(before["today"]["human"] == 0);

    for (int i = 0; i < 3; ++i) f.click("/go/alpha?src=news", {{"User-Agent", kBrowser}});
    f.click("/go/alpha", {{"User-Agent", kBrowser}});
    f.click("/go/beta", {{"User-Agent", kBrowser}});
    f.click("/go/beta", {{"User-Agent", kBrowser}}, "HEAD");  // a bot's

    Json body = f.wait_for([](const Json& b) {
        return clicks_of(b, "alpha") == 4 && clicks_of(b, "beta") == 1 &&
               b["today"]["human"] == 5 && b["today"]["bot"] == 1;
    });
    // Most clicks first; a link without human clicks in the window is not listed; each entry
    // holds a slug and a count, nothing else.
    REQUIRE(body["links"].size() == 2);
    CHECK(body["links"][0]["link"] == "alpha");
    for (const auto& l : body["links"]) CHECK(l.size() == 2);
    CHECK(body.size() == 5);
    CHECK(body["today"]["prefetch"] == 0);
    CHECK(body["today"]["scanner"] == 0);
    CHECK(body["yesterday_same_hours"]["human"] == 0);

    // Flushed to PostgreSQL (every bucket, the current one too), the counts are still in today's
    // figures and the last minutes'.
    auto flushed = run_refgate(
        {"flush"}, {{"REFGATE_DATABASE_URL", f.db.url()}, {"REFGATE_REDIS_URL", f.redis.url()}});
    REQUIRE(flushed.exit_code == 0);
    CHECK(f.redis.cli("SCARD refgate:buckets").starts_with("0"));
    std::this_thread::sleep_for(1100ms);  // past the answer's cache
    body = f.live();
    CHECK(body["today"]["human"] == 5);
    CHECK(clicks_of(body, "alpha") == 4);
}

TEST_CASE("the live figures compare today with the same hours of yesterday",
          "[stats][live][redis]") {
    Fixture f;
    auto now = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
    std::int64_t yesterday = now - now % 86'400 - 86'400;
    std::int64_t hour_of_day = (now % 86'400) / 3'600;
    // Yesterday's first hour (before this hour of today unless it is now past midnight), and an
    // hour of yesterday after this one: only the first is among today's hours so far.
    f.redis.cli("HSET refgate:live:h:" + std::to_string(yesterday) + " human 7 bot 2");
    f.redis.cli("HSET refgate:live:h:" + std::to_string(yesterday + 86'400 - 3'600) + " human 50");
    f.click("/go/alpha", {{"User-Agent", kBrowser}});
    Json body = f.wait_for([](const Json& b) { return b["today"]["human"] == 1; });
    if (hour_of_day > 0 && hour_of_day < 23) {
        CHECK(body["yesterday_same_hours"]["human"] == 7);
        CHECK(body["yesterday_same_hours"]["bot"] == 2);
    }
}

}  // namespace stats_live_test
