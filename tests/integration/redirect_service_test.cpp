// The redirect path end to end: the refgate binary, a real PostgreSQL, and the snapshot file.

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "support/http_client.hpp"
#include "support/private_postgres.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace redirect_service_test {

using namespace refgate::test;
using namespace std::chrono_literals;

namespace {

const char* const kDocument = R"json({
  "partners": [
    {"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks42",
     "allowed_domains": ["tailscale.com"], "extra_params": {"utm_medium": "affiliate"}}
  ],
  "links": [
    {"slug": "tailscale", "partner": "tailscale", "destination": "https://tailscale.com/pricing?plan=pro#teams",
     "status": "active", "expires_at": null, "fallback": null, "utm_passthrough": false},
    {"slug": "campaign", "partner": "tailscale", "destination": "https://tailscale.com/blog",
     "utm_passthrough": true},
    {"slug": "retired", "partner": "tailscale", "destination": "https://tailscale.com/old", "status": "disabled"},
    {"slug": "retired-with-fallback", "partner": "tailscale", "destination": "https://tailscale.com/old",
     "status": "disabled", "fallback": "https://tailscale.com/pricing"},
    {"slug": "expired", "partner": "tailscale", "destination": "https://tailscale.com/old",
     "expires_at": "2020-01-01T00:00:00Z"}
  ]
})json";

const std::string kExpected =
    "https://tailscale.com/pricing?plan=pro&ref=picks42&utm_medium=affiliate#teams";

void load(const std::string& url) {
    auto result = import_json(url, kDocument);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
}

// Polls until the Location of /go/{slug} contains `text`; returns how long that took.
std::optional<std::chrono::milliseconds> wait_for_location(int port, const std::string& slug,
                                                           const std::string& text,
                                                           std::chrono::milliseconds timeout) {
    auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < timeout) {
        auto r = http_get(port, "/go/" + slug);
        if (r.header("Location").find(text) != std::string::npos) {
            return std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - start);
        }
        std::this_thread::sleep_for(10ms);
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE("a click on /go/{slug} is answered 302 to the destination with the referral code",
          "[redirect][pg]") {
    TestDatabase db;
    load(db.url());
    ServiceProcess service({.database_url = db.url()});

    auto r = http_get(service.port(), "/go/tailscale?ref=evil&src=newsletter");
    CHECK(r.status == 302);
    CHECK(r.header("Location") == kExpected);
    CHECK(r.header("Cache-Control") == "private, no-store");
    CHECK(r.header("X-Robots-Tag") == "noindex, nofollow");
    CHECK(r.header("Referrer-Policy") == "strict-origin-when-cross-origin");
    CHECK(r.body.find("href=\"https://tailscale.com/pricing?plan=pro&amp;ref=picks42") !=
          std::string::npos);
    CHECK_FALSE(r.has_header("Set-Cookie"));

    auto head = http_request(service.port(), "HEAD", "/go/tailscale/");
    CHECK(head.status == 302);
    CHECK(head.header("Location") == kExpected);

    auto utm = http_get(service.port(), "/go/campaign?utm_source=weekly&ref=evil&utm_campaign=nov");
    CHECK(utm.header("Location") ==
          "https://tailscale.com/"
          "blog?utm_source=weekly&utm_campaign=nov&ref=picks42&utm_medium=affiliate");
}

TEST_CASE("a visitor's semicolon cannot put a second referral parameter in front of the code",
          "[redirect][pg]") {
    TestDatabase db;
    load(db.url());
    ServiceProcess service({.database_url = db.url()});
    // Servers that split a query on ';' (older Python, Go before 1.17, Rack 2) would read
    // "utm_source=a;ref=evil&ref=picks42" as ref = ["evil", "picks42"].
    auto r = http_get(service.port(), "/go/campaign?utm_source=a;ref=evil");
    CHECK(r.status == 302);
    CHECK(r.header("Location") ==
          "https://tailscale.com/blog?utm_source=a%3Bref%3Devil&ref=picks42&utm_medium=affiliate");
    auto encoded = http_get(service.port(), "/go/campaign?utm_source=a%3Bref%3devil&utm_term=x;y");
    CHECK(encoded.header("Location") ==
          "https://tailscale.com/"
          "blog?utm_source=a%3Bref%3Devil&utm_term=x%3By&ref=picks42&utm_medium=affiliate");
}

TEST_CASE("unknown, disabled and expired links are 404, 410 or their fallback", "[redirect][pg]") {
    TestDatabase db;
    load(db.url());
    ServiceProcess service({.database_url = db.url()});
    CHECK(http_get(service.port(), "/go/nope").status == 404);
    CHECK(http_get(service.port(), "/go/Tailscale").status == 404);
    CHECK(http_get(service.port(), "/go/tail%2Fscale").status == 404);
    CHECK(http_get(service.port(), "/go/../go/tailscale").status == 404);
    CHECK(http_get(service.port(), "/elsewhere").status == 404);
    CHECK(http_get(service.port(), "/go/retired").status == 410);
    CHECK(http_get(service.port(), "/go/expired").status == 410);
    auto fallback = http_get(service.port(), "/go/retired-with-fallback");
    CHECK(fallback.status == 302);
    CHECK(fallback.header("Location") == "https://tailscale.com/pricing");
    CHECK(http_request(service.port(), "POST", "/go/tailscale").status == 405);
}

TEST_CASE("a referral code changed in PostgreSQL shows in redirects within a second",
          "[redirect][pg]") {
    TestDatabase db;
    load(db.url());
    // A long safety-net interval, so that only LISTEN/NOTIFY can make the deadline.
    ServiceProcess service(
        {.database_url = db.url(), .env = {{"REFGATE_RELOAD_INTERVAL_MS", "60000"}}});
    REQUIRE(http_get(service.port(), "/go/tailscale").header("Location") == kExpected);

    db.exec("UPDATE refgate_partners SET ref_code = 'rotated-1' WHERE slug = 'tailscale'");
    auto took = wait_for_location(service.port(), "tailscale", "ref=rotated-1", 3s);
    REQUIRE(took.has_value());
    CHECK(took->count() < 1000);

    // An import is a change like any other.
    auto doc = nlohmann::json::parse(kDocument);
    doc["partners"][0]["ref_code"] = "rotated-2";
    REQUIRE(import_json(db.url(), doc.dump()).exit_code == 0);
    took = wait_for_location(service.port(), "tailscale", "ref=rotated-2", 3s);
    REQUIRE(took.has_value());
    CHECK(took->count() < 1000);
}

TEST_CASE("a restarted instance serves redirects from its snapshot file while PostgreSQL is down",
          "[redirect][pg][snapshot]") {
    TestDatabase db;
    load(db.url());
    TempDir dir;
    std::string snapshot = dir.file("snapshot.json");
    {
        ServiceProcess first({.database_url = db.url(), .snapshot_file = snapshot});
        REQUIRE(http_get(first.port(), "/go/tailscale").status == 302);
        CHECK(first.stop(SIGTERM) == 0);
    }
    REQUIRE(std::filesystem::exists(snapshot));
    // The snapshot file holds editors' data only.
    std::string unreachable =
        "postgresql://refgate@127.0.0.1:" + std::to_string(unused_port()) + "/refgate";
    ServiceProcess second({.database_url = unreachable, .snapshot_file = snapshot});
    auto r = http_get(second.port(), "/go/tailscale");
    CHECK(r.status == 302);
    CHECK(r.header("Location") == kExpected);
    auto ready = http_get(second.admin_port(), "/readyz");
    CHECK(ready.status == 200);
    auto body = nlohmann::json::parse(ready.body);
    CHECK(body["snapshot"]["source"] == "file");
    CHECK(body["postgres"] == "down");
}

TEST_CASE("without PostgreSQL and without a snapshot file the service is alive but not ready",
          "[redirect][snapshot]") {
    std::string unreachable =
        "postgresql://refgate@127.0.0.1:" + std::to_string(unused_port()) + "/refgate";
    ServiceProcess service({.database_url = unreachable});
    CHECK(http_get(service.port(), "/healthz").status == 200);
    CHECK(http_get(service.port(), "/readyz").status == 503);
    CHECK(http_get(service.port(), "/go/tailscale").status == 503);
}

TEST_CASE(
    "the last snapshot keeps serving while PostgreSQL is stopped, and follows it when it returns",
    "[redirect][pg][snapshot]") {
    PrivatePostgres postgres;
    std::string url = postgres.create_database("refgate");
    load(url);
    ServiceProcess service({.database_url = url, .env = {{"REFGATE_RELOAD_INTERVAL_MS", "500"}}});
    REQUIRE(http_get(service.port(), "/go/tailscale").status == 302);

    postgres.stop();
    for (int i = 0; i < 20; ++i) {
        auto r = http_get(service.port(), "/go/tailscale");
        REQUIRE(r.status == 302);
        REQUIRE(r.header("Location") == kExpected);
        std::this_thread::sleep_for(50ms);
    }
    auto ready = nlohmann::json::parse(http_get(service.admin_port(), "/readyz").body);
    CHECK(ready["postgres"] == "down");
    CHECK(ready["ready"] == true);

    postgres.start();
    {
        pqxx::connection conn(url);
        pqxx::work tx(conn);
        tx.exec("UPDATE refgate_partners SET ref_code = 'back-again'");
        tx.commit();
    }
    CHECK(wait_for_location(service.port(), "tailscale", "ref=back-again", 15s).has_value());
}

TEST_CASE("readyz reports the snapshot version and the state of PostgreSQL and Redis",
          "[redirect][pg]") {
    TestDatabase db;
    load(db.url());
    ServiceProcess service({.database_url = db.url()});
    auto version = db.scalar("SELECT version FROM refgate_snapshot_version");
    REQUIRE(service.wait_for_log("snapshot_loaded"));
    std::this_thread::sleep_for(1200ms);  // the Redis monitor pings once a second
    auto ready = http_get(service.admin_port(), "/readyz");
    CHECK(ready.status == 200);
    auto body = nlohmann::json::parse(ready.body);
    CHECK(body["snapshot"]["version"].get<std::int64_t>() == std::stoll(version));
    CHECK(body["snapshot"]["links"] == 5);
    CHECK(body["postgres"] == "up");
    CHECK(body["redis"] == "up");
    CHECK(body["clicks"]["dropped_clicks"] == 0);
    CHECK(body["clicks"]["redis_config_risky"] == false);
    CHECK(http_get(service.admin_port(), "/healthz").status == 200);
}

}  // namespace redirect_service_test
