// Automatic fallback (issue 44) end to end: a link with auto_fallback whose partner page breaks
// (the scenario server's /flip/NAME answers 404 while told to) answers its readers with the
// fallback once the checker confirms it, says so in the API and the audit trail, and serves its
// destination again once a check finds it fine; a rule branch that breaks sends its readers to
// the link's own destination while that is healthy.

#include <catch2/catch.hpp>

#include "linkcheck_fixture.hpp"
#include "support/http_client.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace auto_fallback_test {

using namespace refgate::test;
using namespace linkcheck_fixture;

namespace {

constexpr const char* kIphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)";

std::string at(int port, const std::string& path) {
    return with_port("https://shop.test:{P}" + path, port);
}

// `care`: its own destination is /flip/<default_flip>, its fallback /fallback; with
// `ios_flip`, iOS readers go to /flip/<ios_flip>.
std::string care_document(int port, const std::string& default_flip, const std::string& ios_flip) {
    Json doc = Json::parse(document(port, {}));
    Json link = {{"slug", "care"},
                 {"partner", "shop"},
                 {"destination", at(port, "/flip/" + default_flip)},
                 {"fallback", at(port, "/fallback")},
                 {"auto_fallback", true}};
    if (!ios_flip.empty())
        link["rules"] = {{{"platform", {"ios"}}, {"destination", at(port, "/flip/" + ios_flip)}}};
    doc["links"].push_back(link);
    return doc.dump();
}

EnvPairs env_confirming_at_once(const TestDatabase& db, const ScenarioServer& s) {
    EnvPairs env = checker_env(db, s);
    env.push_back({"REFGATE_LINKCHECK_CONFIRM_AFTER", "0s"});
    env.push_back({"REFGATE_LINKCHECK_INTERVAL", "0"});  // checks only when the test asks
    return env;
}

// Two checks: a finding other than ok is confirmed by the second.
void check_twice(const EnvPairs& env) {
    for (int i = 0; i < 2; ++i) {
        auto r = run_refgate({"check-links", "--slug", "care"}, env);
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
    }
}

// The Location a reader gets from /go/care, waiting up to 3 s for it to start with `prefix`
// (the snapshot follows PostgreSQL within a second); the last one seen otherwise.
std::string location_becomes(const ServiceProcess& service, const std::string& prefix,
                             const std::string& agent = "Mozilla/5.0 (X11; Linux x86_64)") {
    std::string location;
    for (int i = 0; i < 60; ++i) {
        auto r = http_get(service.port(), "/go/care", {{"User-Agent", agent}});
        location = r.header("Location");
        if (r.status == 302 && location.starts_with(prefix)) break;
        std::this_thread::sleep_for(50ms);
    }
    return location;
}

}  // namespace

TEST_CASE(
    "a link with auto_fallback answers with its fallback while its destination is confirmed "
    "broken, says so in the API and the audit trail, and serves its destination again once ok",
    "[linkhealth][autofallback][pg]") {
    auto& s = server();
    s.set_broken("care", false);
    TestDatabase db;
    REQUIRE(import_document(db.url(), care_document(s.port(), "care", "")));
    // A webhook taking the switches and the links' updates (its deliveries fail: no receiver);
    // the outbox shows what the switches emitted.
    db.exec(
        "INSERT INTO refgate_webhooks (url, events, secret) VALUES ('https://hooks.invalid/', "
        "'{link.fallback_changed,link.updated}', 'whsec_dGVzdA==')");
    auto env = env_confirming_at_once(db, s);
    ServiceProcess service(ServiceOptions{.database_url = db.url(), .env = env});
    std::string viewer = create_api_token(db.url(), "vera", "viewer");
    auto api = [&] {
        auto r = http_get(service.admin_port(), "/api/v1/links/care",
                          {{"Authorization", "Bearer " + viewer}});
        INFO(r.body);
        REQUIRE(r.status == 200);
        return Json::parse(r.body);
    };
    const std::string destination = at(s.port(), "/flip/care?ref=picks42");
    const std::string fallback = at(s.port(), "/fallback");

    check_twice(env);
    CHECK(location_becomes(service, destination) == destination);
    CHECK(api()["serving"] == "destination");
    CHECK(api()["auto_fallback"] == true);

    // The partner page breaks: pending after the first check, the fallback after the second.
    s.set_broken("care", true);
    REQUIRE(run_refgate({"check-links", "--slug", "care"}, env).exit_code == 0);
    CHECK(db.scalar("SELECT count(*) FROM refgate_link_fallbacks") == "0");
    REQUIRE(run_refgate({"check-links", "--slug", "care"}, env).exit_code == 0);
    CHECK(location_becomes(service, fallback) == fallback);
    auto link = api();
    CHECK(link["serving"] == "fallback");
    CHECK(link["serving_reason"]["branch"] == "default");
    CHECK(link["serving_reason"]["state"] == "broken");
    CHECK(link["serving_reason"]["detail"] == "http_404");
    CHECK(db.scalar("SELECT actor || ' ' || entity || ' ' || slug || ' ' || (after->>'serving') "
                    "|| ' ' || (after->>'reason') FROM refgate_audit WHERE actor = 'health'") ==
          "health link care fallback broken");
    // A further check that sees it still broken switches nothing again.
    REQUIRE(run_refgate({"check-links", "--slug", "care"}, env).exit_code == 0);
    CHECK(db.scalar("SELECT count(*) FROM refgate_audit WHERE actor = 'health'") == "1");

    // Fixed: one ok check serves the destination again.
    s.set_broken("care", false);
    REQUIRE(run_refgate({"check-links", "--slug", "care"}, env).exit_code == 0);
    CHECK(location_becomes(service, destination) == destination);
    CHECK(api()["serving"] == "destination");
    CHECK(api()["serving_reason"].is_null());
    CHECK(db.scalar("SELECT string_agg(after->>'serving', ',' ORDER BY id) FROM refgate_audit "
                    "WHERE actor = 'health'") == "fallback,destination");
    // Each switch is a link.fallback_changed event from its own transaction, and no link.updated.
    CHECK(db.scalar("SELECT string_agg(type || ' ' || (body::jsonb #>> '{data,link}') || ' ' || "
                    "(body::jsonb #>> '{data,serving}') || ' ' || coalesce(body::jsonb #>> "
                    "'{data,reason}', body::jsonb #>> '{data,recovered_from}'), ',' ORDER BY id) "
                    "FROM refgate_webhook_events") ==
          "link.fallback_changed care fallback broken,link.fallback_changed care destination "
          "broken");
}

TEST_CASE(
    "a rule branch confirmed broken sends its readers to the link's own destination while that "
    "is healthy, and to the fallback once it is not",
    "[linkhealth][autofallback][pg]") {
    auto& s = server();
    s.set_broken("care-d", false);
    s.set_broken("care-ios", true);
    TestDatabase db;
    REQUIRE(import_document(db.url(), care_document(s.port(), "care-d", "care-ios")));
    auto env = env_confirming_at_once(db, s);
    ServiceProcess service(ServiceOptions{.database_url = db.url(), .env = env});
    const std::string own = at(s.port(), "/flip/care-d?ref=picks42");
    const std::string ios = at(s.port(), "/flip/care-ios?ref=picks42");
    const std::string fallback = at(s.port(), "/fallback");

    // Before any check the iOS branch is served as it is.
    CHECK(location_becomes(service, ios, kIphone) == ios);
    check_twice(env);
    CHECK(db.scalar("SELECT string_agg(branch || ' ' || reason, ',') FROM "
                    "refgate_link_fallbacks") == "rules[0] broken");
    CHECK(location_becomes(service, own, kIphone) == own);
    CHECK(location_becomes(service, own) == own);  // other readers: the destination, as before

    // The own destination breaks too: everyone gets the fallback.
    s.set_broken("care-d", true);
    check_twice(env);
    CHECK(location_becomes(service, fallback, kIphone) == fallback);
    CHECK(location_becomes(service, fallback) == fallback);

    // Both fixed: each reader's branch again.
    s.set_broken("care-d", false);
    s.set_broken("care-ios", false);
    REQUIRE(run_refgate({"check-links", "--slug", "care"}, env).exit_code == 0);
    CHECK(location_becomes(service, ios, kIphone) == ios);
    CHECK(location_becomes(service, own) == own);
}

TEST_CASE("auto_fallback without a fallback is refused with a field error",
          "[autofallback][admin][pg]") {
    TestDatabase db;
    REQUIRE(import_document(db.url(), document(4443, {})));
    ServiceProcess service(ServiceOptions{.database_url = db.url()});
    std::string editor = create_api_token(db.url(), "eddie", "editor");
    Json body = {{"slug", "care"},
                 {"partner", "shop"},
                 {"destination", "https://shop.test/p"},
                 {"auto_fallback", true}};
    auto r = http_request(
        service.admin_port(), "POST", "/api/v1/links",
        {{"Authorization", "Bearer " + editor}, {"Content-Type", "application/json"}}, body.dump());
    INFO(r.body);
    CHECK(r.status == 422);
    CHECK(r.body.find("\"auto_fallback\"") != std::string::npos);
    CHECK(db.scalar("SELECT count(*) FROM refgate_links") == "0");
    body["fallback"] = "https://shop.test/other";
    r = http_request(service.admin_port(), "POST", "/api/v1/links",
                     {{"Authorization", "Bearer " + editor}, {"Content-Type", "application/json"}},
                     body.dump());
    INFO(r.body);
    CHECK(r.status == 201);
    CHECK(db.scalar("SELECT auto_fallback FROM refgate_links") == "t");
}

}  // namespace auto_fallback_test
