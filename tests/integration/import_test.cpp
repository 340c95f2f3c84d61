// `refgate import` and `refgate export` against a real PostgreSQL database.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace import_test {

using refgate::test::import_json;
using refgate::test::run_refgate;
using refgate::test::TestDatabase;

namespace {

const char* const kGoodDocument = R"json({
  "partners": [
    {"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks42",
     "allowed_domains": ["tailscale.com"], "extra_params": {"utm_medium": "affiliate", "a": "1"}},
    {"slug": "backblaze", "name": "Backblaze", "ref_param": "referrer", "ref_code": "bb-7",
     "allowed_domains": ["backblaze.com"], "extra_params": {}}
  ],
  "links": [
    {"slug": "tailscale", "partner": "tailscale", "destination": "https://tailscale.com/pricing?plan=pro#teams",
     "status": "active", "expires_at": null, "fallback": null, "utm_passthrough": false},
    {"slug": "b2", "partner": "backblaze", "destination": "https://www.backblaze.com/b2",
     "status": "disabled", "expires_at": "2030-01-01T00:00:00Z", "fallback": "https://www.backblaze.com/",
     "utm_passthrough": true}
  ]
})json";

}  // namespace

TEST_CASE("an import stores every partner and link, and importing it again changes nothing",
          "[import][pg]") {
    TestDatabase db;
    auto version_before = std::stoll(db.scalar("SELECT version FROM refgate_snapshot_version"));
    auto first = import_json(db.url(), kGoodDocument);
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    CHECK(first.out.find("2 partner(s) and 2 link(s) changed") != std::string::npos);
    CHECK(db.scalar("SELECT count(*) FROM refgate_partners") == "2");
    CHECK(db.scalar("SELECT ref_code FROM refgate_partners WHERE slug = 'backblaze'") == "bb-7");
    CHECK(db.scalar("SELECT status FROM refgate_links WHERE slug = 'b2'") == "disabled");
    // One upsert statement per table, whatever the number of rows; each fires the statement
    // trigger for INSERT and for UPDATE: four version bumps, not one or two per row.
    CHECK(std::stoll(db.scalar("SELECT version FROM refgate_snapshot_version")) ==
          version_before + 4);

    auto second = import_json(db.url(), kGoodDocument);
    REQUIRE(second.exit_code == 0);
    CHECK(second.out.find("0 partner(s) and 0 link(s) changed") != std::string::npos);
    CHECK(db.scalar("SELECT max(version) FROM refgate_links") == "1");
}

TEST_CASE("an import with bad entries applies nothing and names every bad entry", "[import][pg]") {
    TestDatabase db;
    auto doc = nlohmann::json::parse(kGoodDocument);
    doc["links"].push_back({{"slug", "evil"},
                            {"partner", "tailscale"},
                            {"destination", "https://evil.example/phish"},
                            {"status", "active"}});
    doc["links"].push_back(
        {{"slug", "plain"}, {"partner", "tailscale"}, {"destination", "http://tailscale.com/"}});
    doc["links"].push_back({{"slug", "creds"},
                            {"partner", "tailscale"},
                            {"destination", "https://user:pw@tailscale.com/"}});
    doc["links"].push_back({{"slug", "Bad_Slug"},
                            {"partner", "tailscale"},
                            {"destination", "https://tailscale.com/"}});
    doc["links"].push_back(
        {{"slug", "orphan"}, {"partner", "nobody"}, {"destination", "https://tailscale.com/"}});

    auto result = import_json(db.url(), doc.dump());
    CHECK(result.exit_code == 1);
    CHECK(result.err.find("links[2] (evil): destination") != std::string::npos);
    CHECK(result.err.find("host_not_allowed") != std::string::npos);
    CHECK(result.err.find("links[3] (plain): destination must use https") != std::string::npos);
    CHECK(result.err.find("links[4] (creds): destination") != std::string::npos);
    CHECK(result.err.find("userinfo") != std::string::npos);
    CHECK(result.err.find("links[5] (Bad_Slug): slug") != std::string::npos);
    CHECK(result.err.find("links[6] (orphan): partner 'nobody' does not exist") !=
          std::string::npos);
    CHECK(result.err.find("nothing applied") != std::string::npos);
    // All or nothing: not even the valid partners went in.
    CHECK(db.scalar("SELECT count(*) FROM refgate_partners") == "0");
    CHECK(db.scalar("SELECT count(*) FROM refgate_links") == "0");
}

TEST_CASE("an import that narrows a partner's domains below a stored link is refused",
          "[import][pg]") {
    TestDatabase db;
    REQUIRE(import_json(db.url(), kGoodDocument).exit_code == 0);
    auto narrowed = R"json({"partners": [
        {"slug": "backblaze", "name": "Backblaze", "ref_param": "referrer", "ref_code": "bb-8",
         "allowed_domains": ["example.org"], "extra_params": {}}]})json";
    auto result = import_json(db.url(), narrowed);
    CHECK(result.exit_code == 1);
    CHECK(result.err.find("stored links[0] (b2): destination") != std::string::npos);
    CHECK(db.scalar("SELECT ref_code FROM refgate_partners WHERE slug = 'backblaze'") == "bb-7");
}

TEST_CASE("an import links to partners that are already stored", "[import][pg]") {
    TestDatabase db;
    REQUIRE(import_json(db.url(), kGoodDocument).exit_code == 0);
    auto more = R"json({"links": [{"slug": "tailscale-2", "partner": "tailscale",
        "destination": "https://login.tailscale.com/start"}]})json";
    auto result = import_json(db.url(), more);
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(db.scalar(
              "SELECT p.slug FROM refgate_links l JOIN refgate_partners p ON p.id = l.partner_id "
              "WHERE l.slug = 'tailscale-2'") == "tailscale");
}

TEST_CASE("an import of a file that is not JSON fails with a clear message", "[import][pg]") {
    TestDatabase db;
    auto result = import_json(db.url(), "{\"partners\": [");
    CHECK(result.exit_code == 1);
    CHECK(result.err.find("is not valid JSON") != std::string::npos);
}

TEST_CASE("export prints what import stored, and importing the export changes nothing",
          "[import][pg]") {
    TestDatabase db;
    REQUIRE(import_json(db.url(), kGoodDocument).exit_code == 0);
    auto exported = run_refgate({"export"}, {{"REFGATE_DATABASE_URL", db.url()}});
    REQUIRE(exported.exit_code == 0);
    auto doc = nlohmann::ordered_json::parse(exported.out);
    REQUIRE(doc["partners"].size() == 2);
    CHECK(doc["partners"][0]["extra_params"].dump() == R"({"utm_medium":"affiliate","a":"1"})");
    CHECK(doc["links"][1]["expires_at"] == "2030-01-01T00:00:00Z");
    CHECK(doc["links"][1]["fallback"] == "https://www.backblaze.com/");

    TestDatabase copy;
    REQUIRE(import_json(copy.url(), exported.out).exit_code == 0);
    auto again = run_refgate({"export"}, {{"REFGATE_DATABASE_URL", copy.url()}});
    CHECK(again.out == exported.out);
    auto reimport = import_json(db.url(), exported.out);
    CHECK(reimport.out.find("0 partner(s) and 0 link(s) changed") != std::string::npos);
}

}  // namespace import_test
