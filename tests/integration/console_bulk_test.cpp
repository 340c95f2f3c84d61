// The import and export over the admin API (one implementation with `refgate import`): dry runs,
// all-or-nothing, CSV.

#include <catch2/catch.hpp>
#include <fstream>

#include "console_fixture.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace console_bulk_test {

using namespace refgate::test;
using namespace refgate::test::console;

namespace {

Json changed_document() {
    return Json::parse(R"json({
      "partners": [
        {"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks43",
         "allowed_domains": ["tailscale.com"], "extra_params": {"utm_medium": "affiliate"}},
        {"slug": "kagi", "name": "Kagi Search", "ref_param": "via", "ref_code": "picks",
         "allowed_domains": ["kagi.com"]}
      ],
      "links": [
        {"slug": "ts-a", "partner": "tailscale", "destination": "https://tailscale.com/download"},
        {"slug": "ts-new", "partner": "tailscale", "destination": "https://tailscale.com/new"}
      ]})json");
}

HttpResponse post_import(Fixture& f, const std::string& body, const std::string& type,
                         bool dry_run) {
    Headers h = bearer(f.editor);
    h.emplace_back("Content-Type", type);
    return f.call("POST", std::string("/api/v1/import") + (dry_run ? "?dry_run=1" : ""), h, body);
}

// What a dry run must leave alone: every link, partner and audit row.
std::string database_state(Fixture& f) {
    return f.db.scalar(
               "SELECT string_agg(slug || destination || version, ',' ORDER BY slug) "
               "FROM refgate_links") +
           f.db.scalar(
               "SELECT string_agg(slug || ref_code || version, ',' ORDER BY slug) "
               "FROM refgate_partners") +
           f.db.scalar("SELECT count(*) FROM refgate_audit");
}

}  // namespace

TEST_CASE("an import dry run lists what would be created, changed and left alone, changing nothing",
          "[console][import][pg]") {
    Fixture f;
    REQUIRE(f.create_link(link_json("ts-a")).status == 201);
    std::string before = database_state(f);

    auto r = post_import(f, changed_document().dump(), "application/json", true);
    REQUIRE(r.status == 200);
    auto body = Json::parse(r.body);
    CHECK(body["dry_run"] == true);
    CHECK(body["applied"] == false);
    REQUIRE(body["created"].size() == 1);
    CHECK(body["created"][0]["entity"] == "link");
    CHECK(body["created"][0]["slug"] == "ts-new");
    CHECK(body["created"][0]["after"]["destination"] == "https://tailscale.com/new");
    REQUIRE(body["changed"].size() == 2);
    CHECK(body["changed"][0]["entity"] == "partner");
    CHECK(body["changed"][0]["before"]["ref_code"] == "picks42");
    CHECK(body["changed"][0]["after"]["ref_code"] == "picks43");
    CHECK(body["changed"][1]["slug"] == "ts-a");
    CHECK(body["changed"][1]["before"]["destination"] == "https://tailscale.com/pricing");
    CHECK(body["unchanged"] == 1);  // kagi
    CHECK(body["refused"].empty());
    CHECK(database_state(f) == before);

    // Applied, the same document makes exactly those changes, audited as the caller.
    auto applied = post_import(f, changed_document().dump(), "application/json", false);
    REQUIRE(applied.status == 200);
    CHECK(Json::parse(applied.body)["applied"] == true);
    CHECK(f.db.scalar("SELECT ref_code FROM refgate_partners WHERE slug = 'tailscale'") ==
          "picks43");
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_audit WHERE actor = 'eddie' AND slug IN "
                      "('tailscale', 'ts-a', 'ts-new')") == "4");
}

TEST_CASE("an import with refusals applies nothing and names every refusal with its field",
          "[console][import][pg]") {
    Fixture f;
    std::string before = database_state(f);
    Json doc = changed_document();
    doc["links"].push_back(link_json("ts-evil", "tailscale", "https://evil.example.com/"));
    doc["links"].push_back(link_json("nobody-link", "nobody"));
    auto r = post_import(f, doc.dump(), "application/json", false);
    INFO(r.body);
    REQUIRE(r.status == 422);
    CHECK(r.header("Content-Type") == "application/problem+json");
    auto body = Json::parse(r.body);
    CHECK(body["status"] == 422);
    CHECK(body["applied"] == false);
    REQUIRE(body["refused"].size() == 2);
    CHECK(body["refused"][0] == Json{{"entity", "link"},
                                     {"slug", "ts-evil"},
                                     {"field", "destination"},
                                     {"message", body["refused"][0]["message"]}});
    CHECK(body["refused"][1]["slug"] == "nobody-link");
    CHECK(body["refused"][1]["field"] == "partner");
    CHECK(body["created"].size() == 2);  // what it would have applied: ts-a and ts-new
    CHECK(database_state(f) == before);

    CHECK(f.call("POST", "/api/v1/import", json_write(f.viewer), doc.dump()).status == 403);
    Headers text = bearer(f.editor);
    text.emplace_back("Content-Type", "text/plain");
    CHECK(f.call("POST", "/api/v1/import", text, "x").status == 415);
    CHECK(post_import(f, "{not json", "application/json", true).status == 400);
}

TEST_CASE("a CSV export imported again as a dry run changes nothing", "[console][import][pg]") {
    Fixture f;
    Json link = link_json("ts-a", "tailscale", "https://tailscale.com/a?x=1,2");
    link["fallback"] = "https://tailscale.com/";
    link["expires_at"] = "2030-01-01T00:00:00Z";
    REQUIRE(f.create_link(link).status == 201);
    REQUIRE(f.create_link(link_json("kg", "kagi", "https://kagi.com/")).status == 201);

    auto csv = f.get("/api/v1/export?format=csv", f.viewer);
    REQUIRE(csv.status == 200);
    CHECK(csv.header("Content-Type").starts_with("text/csv"));
    CHECK(csv.header("Content-Disposition") == "attachment; filename=\"refgate-links.csv\"");
    CHECK(csv.body.starts_with(
        "slug,partner,destination,status,expires_at,fallback,utm_passthrough\r\n"));
    std::string before = database_state(f);
    auto again = Json::parse(post_import(f, csv.body, "text/csv", true).body);
    CHECK(again["created"].empty());
    CHECK(again["changed"].empty());
    CHECK(again["refused"].empty());
    CHECK(again["unchanged"] == 2);

    auto json = f.get("/api/v1/export", f.viewer);
    CHECK(json.header("Content-Disposition") == "attachment; filename=\"refgate-export.json\"");
    auto whole = Json::parse(post_import(f, json.body, "application/json", true).body);
    CHECK(whole["created"].empty());
    CHECK(whole["changed"].empty());
    CHECK(whole["unchanged"] == 5);  // 2 partners, 2 links, 1 disclosure
    CHECK(database_state(f) == before);
}

TEST_CASE("a CSV import with a wrong header or a broken row is refused with its line number",
          "[console][import][pg]") {
    Fixture f;
    auto header =
        Json::parse(post_import(f, "slug,destination\r\nx,https://x/\r\n", "text/csv", false).body);
    REQUIRE(header["refused"].size() == 1);
    CHECK(header["refused"][0]["line"] == 1);

    std::string csv =
        "slug,partner,destination,status,expires_at,fallback,utm_passthrough\r\n"
        "ok,tailscale,https://tailscale.com/ok,,,,\r\n"
        "broken,tailscale\r\n"
        "bad,tailscale,http://tailscale.com/,,,,\r\n";
    auto r = post_import(f, csv, "text/csv", false);
    CHECK(r.status == 422);
    auto body = Json::parse(r.body);
    REQUIRE(body["refused"].size() == 2);
    CHECK(body["refused"][0]["line"] == 3);
    CHECK(body["refused"][1]["line"] == 4);
    CHECK(body["refused"][1]["field"] == "destination");
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_links") == "0");
}

TEST_CASE(
    "a CSV saved in a spreadsheet's code page is refused at its line, and a slug that is not "
    "UTF-8 in a path is a 404, not a 500",
    "[console][import][pg]") {
    Fixture f;
    std::string csv =
        "slug,partner,destination,status,expires_at,fallback,utm_passthrough\r\n"
        "caf\xE9,tailscale,https://tailscale.com/caf\xE9,,,,\r\n";
    auto r = post_import(f, csv, "text/csv", false);
    CHECK(r.status == 422);
    auto body = Json::parse(r.body);
    REQUIRE(body["refused"].size() == 1);
    CHECK(body["refused"][0]["line"] == 2);
    CHECK(body["refused"][0]["message"] == "is not UTF-8 text: save the file as \"CSV UTF-8\"");

    auto link = f.get("/api/v1/links/caf%E9", f.viewer);
    CHECK(link.status == 404);
    CHECK_NOTHROW(Json::parse(link.body));
}

TEST_CASE("refgate import --dry-run prints the diff and applies nothing", "[console][import][pg]") {
    Fixture f;
    TempDir dir;
    std::string path = dir.file("changes.json");
    std::ofstream(path) << changed_document().dump();
    std::string before = database_state(f);
    auto r = run_refgate({"import", "--dry-run", path}, {{"REFGATE_DATABASE_URL", f.db.url()}});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("+ link ts-new\n") != std::string::npos);
    CHECK(r.out.find("~ partner tailscale\n    ref_code: \"picks42\" -> \"picks43\"\n") !=
          std::string::npos);
    CHECK(r.out.find("= 1 unchanged\n") != std::string::npos);
    CHECK(r.out.find("dry run: nothing applied") != std::string::npos);
    CHECK(database_state(f) == before);
}

}  // namespace console_bulk_test
