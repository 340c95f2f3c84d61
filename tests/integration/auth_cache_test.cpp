// The admin API keeps a checked token or console session for REFGATE_AUTH_CACHE_SECONDS (issue
// 45: a page polling the live figures must not read PostgreSQL per call): the binary, a real
// PostgreSQL and Redis, and what PostgreSQL itself says its connections did.

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/console_session.hpp"
#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace auth_cache_test {

using namespace refgate::test;
using namespace std::chrono_literals;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

// The admin API's database connections (its pool names them; the stats API's too), each with
// the moment its last statement started: a statement run since moves one, a new connection adds
// one. The flusher's, the snapshot follower's and the other workers' connections are not these.
std::map<std::string, std::string> api_connections(TestDatabase& db) {
    std::map<std::string, std::string> seen;
    auto rows = db.exec(
        "SELECT pid::text, coalesce(query_start::text, '') FROM pg_stat_activity WHERE datname = "
        "current_database() AND application_name IN ('refgate-admin', 'refgate-stats')");
    for (const auto& row : rows) seen[row[0].c_str()] = row[1].c_str();
    return seen;
}

struct Instance {
    Instance(TestDatabase& db, PrivateRedis& redis, const std::string& cache_seconds)
        : service({.database_url = db.url(),
                   .redis_url = redis.url(),
                   .env = {{"REFGATE_AUTH_CACHE_SECONDS", cache_seconds}}}) {}
    ServiceProcess service;

    HttpResponse call(const std::string& method, const std::string& target,
                      const Headers& headers) {
        return http_request(service.admin_port(), method, target, headers);
    }
    int live(const std::string& token) {
        return call("GET", "/api/v1/stats/live", bearer(token)).status;
    }
    // DELETE /api/v1/tokens/{name} with an admin token.
    int revoke(const std::string& admin, const std::string& name) {
        Headers h = bearer(admin);
        h.emplace_back("If-Match", "*");
        return call("DELETE", "/api/v1/tokens/" + name, h).status;
    }
};

struct Fixture {
    explicit Fixture(const std::string& cache_seconds = "5") : one(db, redis, cache_seconds) {}
    TestDatabase db;
    PrivateRedis redis;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    std::string viewer = create_api_token(db.url(), "dashboards", "viewer");
    Instance one;
};

}  // namespace

TEST_CASE("fifty polls of the live figures with one token read PostgreSQL once",
          "[auth][live][pg][redis]") {
    Fixture f;
    REQUIRE(f.one.live(f.viewer) == 200);
    auto after_first = api_connections(f.db);
    // The first call looked the token up: at least one connection of the API's pool.
    REQUIRE_FALSE(after_first.empty());
    for (int i = 0; i < 50; ++i) REQUIRE(f.one.live(f.viewer) == 200);
    // No statement on any of them since, and no new connection.
    CHECK(api_connections(f.db) == after_first);
    // The token's last use is still noted, by the first call.
    CHECK(f.db.scalar("SELECT last_used_on = current_date FROM refgate_api_tokens "
                      "WHERE name = 'dashboards'") == "t");
}

TEST_CASE("a token revoked through an instance is refused by it at once", "[auth][pg][redis]") {
    Fixture f;
    REQUIRE(f.one.live(f.viewer) == 200);
    REQUIRE(f.one.live(f.viewer) == 200);
    REQUIRE(f.one.revoke(f.admin, "dashboards") == 204);
    CHECK(f.one.live(f.viewer) == 401);
    // An unknown or revoked token is never kept: each try asks the database again.
    CHECK(f.one.live(f.viewer) == 401);
    CHECK(f.one.live(f.admin) == 200);
}

TEST_CASE("a token revoked through another instance is refused within the cache lifetime",
          "[auth][pg][redis]") {
    Fixture f("2");
    Instance two(f.db, f.redis, "2");
    REQUIRE(f.one.live(f.viewer) == 200);
    REQUIRE(two.live(f.viewer) == 200);  // kept by the second instance from now on
    auto revoked_at = std::chrono::steady_clock::now();
    REQUIRE(f.one.revoke(f.admin, "dashboards") == 204);
    CHECK(f.one.live(f.viewer) == 401);
    // The second instance still holds it for at most its 2 s, then asks again and refuses it.
    int status = 200;
    while (status == 200 && std::chrono::steady_clock::now() - revoked_at < 5s) {
        std::this_thread::sleep_for(100ms);
        status = two.live(f.viewer);
    }
    auto took = std::chrono::steady_clock::now() - revoked_at;
    CHECK(status == 401);
    CHECK(took < 3s);
    CHECK(two.live(f.viewer) == 401);
}

TEST_CASE("a sign-out, a disabled user and a lowered role through an instance apply at once",
          "[auth][console][pg][redis]") {
    Fixture f;
    add_console_user(f.db.url(), "eddie", "editor", "correct horse battery");
    add_console_user(f.db.url(), "olga", "editor", "correct horse battery");
    ConsoleBrowser eddie =
        sign_in_console(f.one.service.admin_port(), "eddie", "correct horse battery");
    ConsoleBrowser olga =
        sign_in_console(f.one.service.admin_port(), "olga", "correct horse battery");
    ConsoleBrowser olga_phone =
        sign_in_console(f.one.service.admin_port(), "olga", "correct horse battery");
    for (const ConsoleBrowser* b : {&eddie, &olga, &olga_phone})
        REQUIRE(f.one.call("GET", "/api/v1/stats/live", console_page_headers(*b)).status == 200);

    // A sign-out ends that session at once, and only that one.
    REQUIRE(f.one.call("DELETE", "/api/v1/session", console_page_headers(olga_phone)).status ==
            204);
    CHECK(f.one.call("GET", "/api/v1/stats/live", console_page_headers(olga_phone)).status == 401);
    CHECK(f.one.call("GET", "/api/v1/stats/live", console_page_headers(olga)).status == 200);

    // Eddie's role lowered to viewer: his session can no longer write, at once.
    auto etag = f.one.call("GET", "/api/v1/users/eddie", bearer(f.admin)).header("ETag");
    Headers patch = bearer(f.admin);
    patch.emplace_back("Content-Type", "application/json");
    patch.emplace_back("If-Match", etag);
    REQUIRE(http_request(f.one.service.admin_port(), "PATCH", "/api/v1/users/eddie", patch,
                         R"({"role": "viewer"})")
                .status == 200);
    Headers write = console_page_headers(eddie);
    write.emplace_back("Content-Type", "application/json");
    auto refused = http_request(f.one.service.admin_port(), "POST", "/api/v1/partners", write,
                                R"({"slug": "kagi", "name": "Kagi", "ref_param": "via",
                                    "ref_code": "picks", "allowed_domains": ["kagi.com"]})");
    CHECK(refused.status == 403);

    // Olga disabled: her session ends at once.
    etag = f.one.call("GET", "/api/v1/users/olga", bearer(f.admin)).header("ETag");
    patch.back() = {"If-Match", etag};
    REQUIRE(http_request(f.one.service.admin_port(), "PATCH", "/api/v1/users/olga", patch,
                         R"({"disabled": true})")
                .status == 200);
    CHECK(f.one.call("GET", "/api/v1/stats/live", console_page_headers(olga)).status == 401);
}

}  // namespace auth_cache_test
