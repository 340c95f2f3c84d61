// The admin API's additions for the console around disclosures and the audit trail.

#include <catch2/catch.hpp>
#include <thread>

#include "console_fixture.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace console_disclosure_audit_test {

using namespace refgate::test;
using namespace refgate::test::console;

TEST_CASE("a disclosure's versions are listed newest first with who wrote each",
          "[console][disclosure][pg]") {
    Fixture f;
    auto current = f.get("/api/v1/disclosures/general/en", f.viewer);
    REQUIRE(current.status == 200);
    Json text{{"text", "Second text."}, {"html", "<p>Second <b>text</b>.</p>"}};
    auto put = f.call("PUT", "/api/v1/disclosures/general/en",
                      json_write(f.editor, current.header("ETag")), text.dump());
    REQUIRE(put.status == 200);

    auto versions = f.get("/api/v1/disclosures/general/en/versions", f.viewer);
    REQUIRE(versions.status == 200);
    auto items = Json::parse(versions.body)["items"];
    REQUIRE(items.size() == 2);
    CHECK(items[0]["version"] == 2);
    CHECK(items[0]["text"] == "Second text.");
    CHECK(items[0]["html"] == "<p>Second <b>text</b>.</p>");
    CHECK(items[0]["created_by"] == "eddie");
    CHECK(items[1]["version"] == 1);
    CHECK(items[1]["text"] == "Paid picks & more.");
    CHECK(items[0]["created_at"] >= items[1]["created_at"]);

    CHECK(f.get("/api/v1/disclosures/general/fr/versions", f.viewer).status == 404);
}

TEST_CASE("a disclosure preview sanitises HTML as pages will show it and stores nothing",
          "[console][disclosure][pg]") {
    Fixture f;
    Json body{{"text", "Paid picks."},
              {"html",
               "<p onclick=\"x()\">Paid <script>alert(1)</script><a href=\"javascript:"
               "x\">picks</a>.</p>"}};
    auto r = f.post("/api/v1/disclosures/preview", body, f.viewer);
    REQUIRE(r.status == 200);
    auto preview = Json::parse(r.body);
    // The script goes with its content, the handler and the javascript: link with their tags.
    CHECK(preview["html"] == "<p>Paid picks.</p>");

    // Exactly what /disclosure.html serves once the same input is saved.
    auto current = f.get("/api/v1/disclosures/general/en", f.viewer);
    REQUIRE(f.call("PUT", "/api/v1/disclosures/general/en",
                   json_write(f.editor, current.header("ETag")), body.dump())
                .status == 200);
    HttpResponse page;
    for (int i = 0; i < 100 && page.body != preview["fragment"].get<std::string>(); ++i) {
        std::this_thread::sleep_for(20ms);
        page = http_get(f.service.port(), "/disclosure.html?lang=en");
    }
    CHECK(page.body == preview["fragment"].get<std::string>());

    auto bad = f.post("/api/v1/disclosures/preview", Json{{"html", "<p>x</p>"}}, f.viewer);
    CHECK(bad.status == 422);
    CHECK(error_fields(bad) == std::vector<std::string>{"text"});
}

TEST_CASE("the audit trail is filtered by actor and time", "[console][audit][pg]") {
    Fixture f;
    REQUIRE(f.create_link(link_json("ts-one")).status == 201);
    std::this_thread::sleep_for(1100ms);
    std::string middle =
        f.db.scalar("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')");
    std::this_thread::sleep_for(1100ms);
    REQUIRE(f.post("/api/v1/links", link_json("ts-two"), f.admin).status == 201);

    auto entries = [&](const std::string& query) {
        auto r = f.get("/api/v1/audit?" + query, f.admin);
        INFO(r.body);
        REQUIRE(r.status == 200);
        std::vector<std::string> out;
        Json body = Json::parse(r.body);
        for (const auto& e : body["items"])
            out.push_back(e["actor"].get<std::string>() + ":" + e["slug"].get<std::string>());
        return out;
    };
    CHECK(entries("actor=eddie&entity=link") == std::vector<std::string>{"eddie:ts-one"});
    CHECK(entries("actor=ada") == std::vector<std::string>{"ada:ts-two"});
    CHECK(entries("entity=link&since=" + middle) == std::vector<std::string>{"ada:ts-two"});
    CHECK(entries("entity=link&until=" + middle) == std::vector<std::string>{"eddie:ts-one"});
    CHECK(entries("actor=nobody").empty());
    auto bad = f.get("/api/v1/audit?since=yesterday", f.admin);
    CHECK(bad.status == 422);
    CHECK(error_fields(bad) == std::vector<std::string>{"since"});
}

}  // namespace console_disclosure_audit_test
