// The scheduled link checker: two instances share one database and only the one holding the
// advisory lock checks; a finding is confirmed by its second check; the state reaches the API,
// the links list's filter and /metrics.

#include <catch2/catch.hpp>
#include <memory>

#include "linkcheck_fixture.hpp"
#include "support/http_client.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace link_health_schedule_test {

using namespace refgate::test;
using namespace linkcheck_fixture;

namespace {

std::unique_ptr<ServiceProcess> start_checker(const TestDatabase& db, const ScenarioServer& s) {
    // A confirmation needs the same finding twice: on a loaded machine a sanitizer build's TLS
    // handshake with the scenario server took longer than the fixture's one second, a timeout
    // instead of the finding (failed once in a whole run, six entries at a time).
    EnvPairs env = checker_env(db, s, "5000");
    env.push_back({"REFGATE_LINKCHECK_INTERVAL", "2s"});
    env.push_back({"REFGATE_LINKCHECK_CONFIRM_AFTER", "1s"});
    return std::make_unique<ServiceProcess>(ServiceOptions{.database_url = db.url(), .env = env});
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = 30s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(100ms);
    }
    return condition();
}

}  // namespace

TEST_CASE(
    "one instance of two checks on schedule, and a finding counts once a second check "
    "confirms it",
    "[linkhealth][pg]") {
    auto& s = server();
    TestDatabase db;
    REQUIRE(import_document(db.url(), document(s.port(), {"clean", "drop"})));
    auto a = start_checker(db, s);
    auto b = start_checker(db, s);
    const std::string state_of_drop =
        "SELECT coalesce(h.state, '') FROM refgate_links l LEFT JOIN refgate_link_health h "
        "ON h.link_id = l.id WHERE l.slug = 'drop'";
    REQUIRE(eventually([&] { return db.scalar(state_of_drop) == "code_dropped"; }));
    // The first sighting was pending, the confirmation a later check.
    CHECK(std::stoi(db.scalar("SELECT count(*) FROM refgate_link_health_checks c JOIN "
                              "refgate_links l ON l.id = c.link_id WHERE l.slug = 'drop'")) >= 2);

    // Exactly one instance holds the lock and checks; the other only reads the figures.
    bool a_leads = a->log().find("linkcheck_leader") != std::string::npos;
    bool b_leads = b->log().find("linkcheck_leader") != std::string::npos;
    CHECK(a_leads != b_leads);
    auto& leader = a_leads ? *a : *b;
    auto& standby = a_leads ? *b : *a;
    CHECK(standby.log().find("link_checked") == std::string::npos);

    std::string viewer = create_api_token(db.url(), "vera", "viewer");
    std::string editor = create_api_token(db.url(), "eddie", "editor");
    auto api = [&](const std::string& method, const std::string& target, const std::string& token) {
        return http_request(standby.admin_port(), method, target,
                            {{"Authorization", "Bearer " + token}});
    };
    auto health = api("GET", "/api/v1/links/drop/health", viewer);
    REQUIRE(health.status == 200);
    auto body = Json::parse(health.body);
    CHECK(body["state"] == "code_dropped");
    CHECK(body["detail"] == "missing");
    CHECK(body["chain"].size() == 2);
    CHECK(body["chain"][0]["url"].get<std::string>().ends_with("/drop?ref=picks42"));
    CHECK(body["history"].size() >= 2);
    auto listed = Json::parse(api("GET", "/api/v1/links?health=code_dropped", viewer).body);
    REQUIRE(listed["items"].size() == 1);
    CHECK(listed["items"][0]["slug"] == "drop");
    CHECK(api("GET", "/api/v1/links?health=fine", viewer).status == 422);
    CHECK(api("POST", "/api/v1/links/clean/health/check", viewer).status == 403);
    auto checked = api("POST", "/api/v1/links/clean/health/check", editor);
    REQUIRE(checked.status == 200);
    CHECK(Json::parse(checked.body)["last"]["finding"] == "ok");
    CHECK(api("GET", "/api/v1/links/nope/health", viewer).status == 404);
    // Every instance reports the fleet's states (read from PostgreSQL).
    CHECK(eventually([&] {
        return http_get(standby.admin_port(), "/metrics")
                   .body.find("refgate_links_health{state=\"code_dropped\"} 1") !=
               std::string::npos;
    }));

    // The leader stops: the other takes the lock over.
    leader.stop(SIGTERM);
    CHECK(standby.wait_for_log("linkcheck_leader", 10s));
}

TEST_CASE("a stop aborts a link check in flight instead of waiting for its timeout",
          "[linkhealth][pg]") {
    auto& s = server();
    TestDatabase db;
    Json doc = Json::parse(document(s.port(), {}));
    doc["links"].push_back({{"slug", "hang"},
                            {"partner", "shop"},
                            {"destination", with_port("https://shop.test:{P}/hang", s.port())}});
    REQUIRE(import_document(db.url(), doc.dump()));
    EnvPairs env = checker_env(db, s, "60000");
    env.push_back({"REFGATE_LINKCHECK_INTERVAL", "2s"});
    ServiceProcess service(ServiceOptions{.database_url = db.url(), .env = env});
    // The server holds the answer for 30 s; the hop's timeout is a minute.
    REQUIRE(
        eventually([&] { return s.requests().find(" /hang?ref=picks42 ") != std::string::npos; }));
    auto started = std::chrono::steady_clock::now();
    CHECK(service.stop(SIGTERM) == 0);
    CHECK(std::chrono::steady_clock::now() - started < 5s);
    CHECK(service.log().find("link_check_aborted") != std::string::npos);
    // An abandoned check is no finding.
    CHECK(db.scalar("SELECT count(*) FROM refgate_link_health") == "0");
}

}  // namespace link_health_schedule_test
