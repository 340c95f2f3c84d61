// The disclosure endpoints end to end: the refgate binary, a real PostgreSQL, the admin API that
// edits the texts and the public listener that serves them from memory.

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace disclosure_test {

using namespace refgate::test;
using namespace std::chrono_literals;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

const char* const kIssueText =
    "Paid picks we use ourselves. Links carry a referral code — a subscription through one earns "
    "us a commission at no extra cost to you.";

const char* const kDocument = R"json({
  "partners": [
    {"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks42",
     "allowed_domains": ["tailscale.com"], "extra_params": {}},
    {"slug": "tom", "name": "Tom & \"Jerry\" <b>", "ref_param": "ref", "ref_code": "t1",
     "allowed_domains": ["tailscale.com"], "extra_params": {}}
  ],
  "links": [
    {"slug": "tailscale", "partner": "tailscale", "destination": "https://tailscale.com/pricing"},
    {"slug": "tom", "partner": "tom", "destination": "https://tailscale.com/tom"}
  ],
  "disclosures": [
    {"key": "general", "locale": "en", "text": "Paid picks we use ourselves. Links carry a referral code — a subscription through one earns us a commission at no extra cost to you."},
    {"key": "general", "locale": "de", "text": "Links enthalten einen Empfehlungscode."},
    {"key": "tailscale", "locale": "en", "text": "Tailscale pays us for sign-ups."}
  ]
})json";

Headers json_write(const std::string& token, const std::string& etag = "") {
    Headers h{{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
    if (!etag.empty()) h.emplace_back("If-Match", etag);
    return h;
}

bool load(const std::string& url) {
    auto r = import_json(url, kDocument);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return true;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

ServiceOptions service_options(const std::string& url) {
    // A long safety-net interval, so that only LISTEN/NOTIFY can make the 1 s deadline.
    return {.database_url = url,
            .env = {{"REFGATE_RELOAD_INTERVAL_MS", "60000"},
                    {"REFGATE_DISCLOSURE_MAX_AGE", "120"},
                    {"REFGATE_PUBLIC_BASE_URL", "https://picks.example.com/"}}};
}

// A database with the document above, an editor and a viewer, and a service over it.
struct Fixture {
    TestDatabase db;
    bool loaded = load(db.url());
    std::string editor = create_api_token(db.url(), "eddie", "editor");
    std::string viewer = create_api_token(db.url(), "vera", "viewer");
    ServiceProcess service{service_options(db.url())};

    HttpResponse get(const std::string& target, const Headers& headers = {}) {
        return http_get(service.port(), target, headers);
    }
    HttpResponse admin(const std::string& method, const std::string& target, const Headers& headers,
                       const std::string& body = "") {
        return http_request(service.admin_port(), method, target, headers, body);
    }
    HttpResponse put(const std::string& target, const Json& body, const std::string& etag = "") {
        return admin("PUT", target, json_write(editor, etag), body.dump());
    }
};

// Polls /disclosure.txt until its body is `expected`; returns how long that took.
std::optional<std::chrono::milliseconds> wait_for_text(int port, const std::string& target,
                                                       const std::string& expected,
                                                       std::chrono::steady_clock::time_point from) {
    while (std::chrono::steady_clock::now() - from < 5s) {
        if (http_get(port, target).body == expected) {
            return std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - from);
        }
        std::this_thread::sleep_for(10ms);
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE("GET /disclosure negotiates plain text, an HTML fragment or JSON", "[disclosure][pg]") {
    Fixture f;
    auto plain = f.get("/disclosure", {{"Accept", "text/plain"}});
    CHECK(plain.status == 200);
    CHECK(plain.header("Content-Type") == "text/plain; charset=utf-8");
    CHECK(plain.body == std::string(kIssueText) + "\n");

    auto any = f.get("/disclosure");  // no Accept: plain text, fit for an email template
    CHECK(any.body == plain.body);

    auto html = f.get("/disclosure", {{"Accept", "text/html,application/xhtml+xml,*/*;q=0.8"}});
    CHECK(html.header("Content-Type") == "text/html; charset=utf-8");
    CHECK(html.body ==
          "<aside class=\"refgate-disclosure\" role=\"note\" data-rel=\"sponsored\" lang=\"en\">" +
              std::string(kIssueText) + "</aside>\n");
    CHECK(html.header("Content-Security-Policy").find("default-src 'none'") != std::string::npos);

    auto json = f.get("/disclosure", {{"Accept", "application/json"}});
    CHECK(json.header("Content-Type") == "application/json");
    auto body = Json::parse(json.body);
    CHECK(body["key"] == "general");
    CHECK(body["locale"] == "en");
    CHECK(body["text"] == kIssueText);
    CHECK(body["html"] == kIssueText);
    CHECK(body["version"] == 1);
    CHECK(body["updated_at"].get<std::string>().ends_with("Z"));

    auto refused = f.get("/disclosure", {{"Accept", "image/png, application/xml"}});
    CHECK(refused.status == 406);
    CHECK(Json::parse(refused.body)["available"] ==
          Json::array({"text/plain", "text/html", "application/json"}));

    // The explicit variants answer their type whatever Accept says.
    CHECK(f.get("/disclosure.txt", {{"Accept", "application/json"}}).body == plain.body);
    CHECK(f.get("/disclosure.html", {{"Accept", "text/plain"}}).body == html.body);
    CHECK(f.get("/disclosure.json", {{"Accept", "text/html"}}).body == json.body);
}

TEST_CASE("disclosure answers carry cache, CORS and Vary headers and honour If-None-Match",
          "[disclosure][pg][cache]") {
    Fixture f;
    auto r = f.get("/disclosure");
    auto etag = r.header("ETag");
    CHECK(etag.starts_with("\"1-"));  // strong: no W/ prefix
    CHECK(r.header("Cache-Control") == "public, max-age=120");
    CHECK(r.header("Access-Control-Allow-Origin") == "*");
    CHECK(r.header("Vary") == "Accept, Accept-Language");
    CHECK(r.header("Content-Language") == "en");
    CHECK(f.get("/disclosure.txt").header("Vary") == "Accept-Language");

    auto cached = f.get("/disclosure", {{"If-None-Match", etag}});
    CHECK(cached.status == 304);
    CHECK(cached.body.empty());
    CHECK_FALSE(cached.has_header("Content-Length"));
    CHECK(cached.header("ETag") == etag);
    CHECK(cached.header("Cache-Control") == "public, max-age=120");
    CHECK(cached.header("Vary") == "Accept, Accept-Language");
    CHECK(f.get("/disclosure", {{"If-None-Match", "W/" + etag + ", \"other\""}}).status == 304);
    CHECK(f.get("/disclosure", {{"If-None-Match", "\"1-0000000000000000\""}}).status == 200);
    // The same validator does not stand for another representation.
    CHECK(f.get("/disclosure.json", {{"If-None-Match", etag}}).status == 200);

    // The connection stays usable after a 304: the next response is read intact.
    RawConnection c(f.service.port());
    REQUIRE(c.send("GET /disclosure.txt HTTP/1.1\r\nHost: x\r\nIf-None-Match: " + etag +
                   "\r\n\r\nGET /disclosure.txt HTTP/1.1\r\nHost: x\r\n\r\n"));
    auto first = c.read_response();
    REQUIRE(first);
    CHECK(first->status == 304);
    auto second = c.read_response();
    REQUIRE(second);
    CHECK(second->status == 200);
    CHECK(second->body == std::string(kIssueText) + "\n");

    auto head = http_request(f.service.port(), "HEAD", "/disclosure.txt");
    CHECK(head.status == 200);
    CHECK(head.header("ETag") == f.get("/disclosure.txt").header("ETag"));
}

TEST_CASE("lang and Accept-Language pick a locale with fallback to the language and the default",
          "[disclosure][pg][locale]") {
    Fixture f;
    const std::string german = "Links enthalten einen Empfehlungscode.\n";
    const std::string english = std::string(kIssueText) + "\n";
    CHECK(f.get("/disclosure.txt?lang=de").body == german);
    auto austrian = f.get("/disclosure.txt?lang=de-AT");
    CHECK(austrian.body == german);
    CHECK(austrian.header("Content-Language") == "de");
    CHECK(f.get("/disclosure.txt?lang=fr-CA").body == english);
    CHECK(f.get("/disclosure.txt", {{"Accept-Language", "de-AT,de;q=0.9,en;q=0.8"}}).body ==
          german);
    CHECK(f.get("/disclosure.txt", {{"Accept-Language", "fr, en;q=0.5"}}).body == english);
    CHECK(f.get("/disclosure.txt?lang=en", {{"Accept-Language", "de"}}).body == english);
    auto bad = f.get("/disclosure.txt?lang=%3Cscript%3E");
    CHECK(bad.status == 400);
    CHECK(bad.header("Content-Type") == "application/problem+json");
}

TEST_CASE("?partner= gives the partner's own disclosure when there is one",
          "[disclosure][pg][partner]") {
    Fixture f;
    CHECK(f.get("/disclosure.txt?partner=tailscale").body == "Tailscale pays us for sign-ups.\n");
    CHECK(Json::parse(f.get("/disclosure.json?partner=tailscale").body)["key"] == "tailscale");
    CHECK(f.get("/disclosure.txt?partner=tom").body == std::string(kIssueText) + "\n");
    // In German the partner has none, so the general German text applies.
    CHECK(f.get("/disclosure.txt?partner=tailscale&lang=de").body ==
          "Links enthalten einen Empfehlungscode.\n");
}

TEST_CASE(
    "a snippet links to /go/ with rel=sponsored, the partner's name and the disclosure, "
    "escaped",
    "[disclosure][pg][snippet]") {
    Fixture f;
    auto r = f.get("/snippet/tom");
    CHECK(r.status == 200);
    CHECK(r.header("Content-Type") == "text/html; charset=utf-8");
    CHECK(r.body ==
          "<a href=\"https://picks.example.com/go/tom\" rel=\"sponsored nofollow noopener\">Tom "
          "&amp; &quot;Jerry&quot; &lt;b&gt;</a> <small class=\"refgate-disclosure\">" +
              std::string(kIssueText) + "</small>\n");
    CHECK(r.header("Access-Control-Allow-Origin") == "*");
    CHECK(f.get("/snippet/tom", {{"If-None-Match", r.header("ETag")}}).status == 304);

    auto json = Json::parse(f.get("/snippet/tailscale?format=json").body);
    CHECK(json["href"] == "https://picks.example.com/go/tailscale");
    CHECK(json["rel"] == "sponsored nofollow noopener");
    CHECK(json["name"] == "Tailscale");
    CHECK(json["disclosure"]["text"] == "Tailscale pays us for sign-ups.");
    CHECK(json["html"].get<std::string>().starts_with("<a href="));

    CHECK(f.get("/snippet/unknown").status == 404);
    CHECK(f.get("/snippet/Bad%20Slug").status == 404);
}

TEST_CASE(
    "editors create and replace disclosures with ETag and If-Match, and every change is a "
    "version in the history",
    "[disclosure][pg][admin]") {
    Fixture f;
    const std::string url = "/api/v1/disclosures/general/nl";
    // Creating needs no precondition (If-None-Match: * is accepted).
    auto created = f.admin(
        "PUT", url,
        [&] {
            auto h = json_write(f.editor);
            h.emplace_back("If-None-Match", "*");
            return h;
        }(),
        Json{{"text", "Eerste versie"}}.dump());
    REQUIRE(created.status == 201);
    CHECK(created.header("ETag") == "\"1\"");
    auto body = Json::parse(created.body);
    CHECK(body["version"] == 1);
    CHECK(body["html"] == "Eerste versie");
    CHECK(body["updated_by"] == "eddie");

    CHECK(f.put(url, {{"text", "Zonder If-Match"}}).status == 428);
    CHECK(f.put(url, {{"text", "Oud"}}, "\"7\"").status == 412);
    auto replaced = f.put(url, {{"text", "Tweede versie"}}, "\"1\"");
    REQUIRE(replaced.status == 200);
    CHECK(replaced.header("ETag") == "\"2\"");
    // The same words again store nothing new.
    CHECK(f.put(url, {{"text", "Tweede versie"}}, "\"2\"").header("ETag") == "\"2\"");

    auto read = f.admin("GET", url, {{"Authorization", "Bearer " + f.viewer}});
    CHECK(read.status == 200);
    CHECK(Json::parse(read.body)["text"] == "Tweede versie");
    // A locale in another spelling names the same resource.
    CHECK(
        f.admin("GET", "/api/v1/disclosures/general/NL", {{"Authorization", "Bearer " + f.viewer}})
            .status == 200);
    CHECK(
        f.admin("GET", "/api/v1/disclosures/general/fr", {{"Authorization", "Bearer " + f.viewer}})
            .status == 404);
    auto list = f.admin("GET", "/api/v1/disclosures", {{"Authorization", "Bearer " + f.viewer}});
    CHECK(Json::parse(list.body)["items"].size() == 4);

    // The public history lists each version with the time it took effect.
    std::optional<Json> history;
    for (int i = 0; i < 300 && !history; ++i) {
        auto h = Json::parse(f.get("/disclosure/history?lang=nl-BE").body);
        if (h.contains("items") && h["items"].size() == 2)
            history = h;
        else
            std::this_thread::sleep_for(10ms);
    }
    REQUIRE(history);
    CHECK((*history)["locale"] == "nl");
    CHECK((*history)["items"][0]["text"] == "Eerste versie");
    CHECK((*history)["items"][0]["until"] == (*history)["items"][1]["effective_at"]);
    CHECK((*history)["items"][1]["text"] == "Tweede versie");
    CHECK((*history)["items"][1]["until"].is_null());

    // Every change is audited and kept; the table refuses to forget.
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_audit WHERE entity = 'disclosure' AND "
                      "slug = 'general/nl'") == "2");
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_disclosures WHERE locale = 'nl'") == "2");
    CHECK_THROWS(f.db.exec("UPDATE refgate_disclosures SET text = 'rewritten'"));
    CHECK_THROWS(f.db.exec("DELETE FROM refgate_disclosures"));
}

TEST_CASE("editing disclosures needs the editor role and a valid body", "[disclosure][pg][auth]") {
    Fixture f;
    const std::string url = "/api/v1/disclosures/general/en";
    CHECK(f.admin("PUT", url, {{"Content-Type", "application/json"}}, R"({"text":"x"})").status ==
          401);
    CHECK(f.admin("PUT", url, json_write(f.viewer, "\"1\""), R"({"text":"x"})").status == 403);
    CHECK(f.admin("GET", url, {}).status == 401);
    CHECK(f.admin("PUT", url, json_write(f.editor, "\"1\""), "{not json").status == 400);
    CHECK(f.admin("PUT", url,
                  {{"Authorization", "Bearer " + f.editor}, {"Content-Type", "text/plain"}}, "x")
              .status == 415);
    auto invalid = f.put(url, {{"html", "<b>no text</b>"}, {"colour", "red"}}, "\"1\"");
    CHECK(invalid.status == 422);
    auto errors = Json::parse(invalid.body)["errors"];
    std::vector<std::string> fields;
    for (const auto& e : errors) fields.push_back(e["field"]);
    CHECK(fields == std::vector<std::string>{"colour", "text"});
    CHECK(f.put(url, {{"text", "x"}, {"locale", "de"}}, "\"1\"").status == 422);
    CHECK(f.put("/api/v1/disclosures/general/not_a_tag!", {{"text", "x"}}).status == 404);
    CHECK(f.put("/api/v1/disclosures/Bad/en", {{"text", "x"}}).status == 404);
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_disclosures") == "3");
}

TEST_CASE("HTML from editors is sanitised and text is escaped when HTML is derived from it",
          "[disclosure][pg][sanitize]") {
    Fixture f;
    auto put = f.put("/api/v1/disclosures/tailscale/en",
                     {{"text", "Tailscale pays us."},
                      {"html",
                       "<p onclick=\"steal()\" style=\"x\">Tailscale <strong>pays</strong> "
                       "us.<script>alert(1)</script> <a href=\" jav&#x09;ascript:alert(1)\">"
                       "bad</a> <a href=\"https://tailscale.com/\" rel=\"author\">good</a>"
                       "<img src=x onerror=alert(1)><em>unclosed"}},
                     "\"1\"");
    REQUIRE(put.status == 200);
    const std::string clean =
        "<p>Tailscale <strong>pays</strong> us. bad <a href=\"https://tailscale.com/\" "
        "rel=\"sponsored nofollow noopener\">good</a><em>unclosed</em></p>";
    CHECK(Json::parse(put.body)["html"] == clean);

    auto escaped = f.put("/api/v1/disclosures/general/en",
                         {{"text", "Tom & \"Jerry\" <b>'s</b>\nsecond line"}}, "\"1\"");
    REQUIRE(escaped.status == 200);
    CHECK(Json::parse(escaped.body)["html"] ==
          "Tom &amp; &quot;Jerry&quot; &lt;b&gt;&#39;s&lt;/b&gt;<br>second line");

    // And the public endpoints serve what was stored, once the change has arrived.
    auto from = std::chrono::steady_clock::now();
    REQUIRE(wait_for_text(f.service.port(), "/disclosure.txt?partner=tailscale",
                          "Tailscale pays us.\n", from));
    std::string fragment;
    for (int i = 0; i < 300; ++i) {
        fragment = f.get("/disclosure.html?partner=tailscale").body;
        if (fragment.find(clean) != std::string::npos) break;
        std::this_thread::sleep_for(10ms);
    }
    CHECK(fragment.find(clean) != std::string::npos);
    CHECK(fragment.find("script") == std::string::npos);
    CHECK(fragment.find("onclick") == std::string::npos);
    CHECK(fragment.find("javascript") == std::string::npos);
}

TEST_CASE("a changed disclosure is served within a second of the change",
          "[disclosure][pg][propagation]") {
    Fixture f;
    // A second instance on the same database: the change reaches every instance.
    ServiceProcess other(service_options(f.db.url()));
    REQUIRE(f.get("/disclosure.txt").body == std::string(kIssueText) + "\n");

    auto put =
        f.put("/api/v1/disclosures/general/en", {{"text", "Reworded, version two."}}, "\"1\"");
    auto changed = std::chrono::steady_clock::now();
    REQUIRE(put.status == 200);
    for (int port : {f.service.port(), other.port()}) {
        auto took = wait_for_text(port, "/disclosure.txt", "Reworded, version two.\n", changed);
        REQUIRE(took.has_value());
        CHECK(took->count() < 1000);
    }
}

TEST_CASE("no disclosure at all is a 404 problem", "[disclosure][pg]") {
    TestDatabase db;
    ServiceProcess service(service_options(db.url()));
    for (const char* target : {"/disclosure", "/disclosure.json", "/disclosure/history"}) {
        INFO(target);
        auto r = http_get(service.port(), target);
        CHECK(r.status == 404);
        CHECK(r.header("Content-Type") == "application/problem+json");
    }
}

TEST_CASE("disclosures survive export | import and a restart without PostgreSQL",
          "[disclosure][pg][snapshot]") {
    TestDatabase db;
    REQUIRE(import_json(db.url(), kDocument).exit_code == 0);
    auto exported = run_refgate({"export"}, {{"REFGATE_DATABASE_URL", db.url()}});
    REQUIRE(exported.exit_code == 0);
    auto doc = Json::parse(exported.out);
    REQUIRE(doc["disclosures"].size() == 3);

    TestDatabase copy;
    REQUIRE(import_json(copy.url(), exported.out).exit_code == 0);
    auto again = run_refgate({"export"}, {{"REFGATE_DATABASE_URL", copy.url()}});
    CHECK(Json::parse(again.out) == doc);
    // Importing the same words again adds no version.
    REQUIRE(import_json(copy.url(), exported.out).exit_code == 0);
    CHECK(copy.scalar("SELECT max(version) FROM refgate_disclosures") == "1");

    TempDir dir;
    std::string snapshot = dir.file("snapshot.json");
    {
        auto options = service_options(db.url());
        options.snapshot_file = snapshot;
        ServiceProcess first(options);
        REQUIRE(http_get(first.port(), "/disclosure.txt").status == 200);
        CHECK(first.stop(SIGTERM) == 0);
    }
    auto options = service_options(
        "postgresql://refgate@127.0.0.1:" + std::to_string(unused_port()) + "/refgate");
    options.snapshot_file = snapshot;
    ServiceProcess second(options);
    auto r = http_get(second.port(), "/disclosure.txt?lang=de-AT");
    CHECK(r.status == 200);
    CHECK(r.body == "Links enthalten einen Empfehlungscode.\n");
}

TEST_CASE("the demo data carries the general English disclosure", "[disclosure][pg][demo]") {
    auto root = source_root();
    auto demo = Json::parse(read_file((root / "deploy" / "local" / "demo.json").string()));
    bool found = false;
    for (const auto& d : demo["disclosures"]) {
        found = found || (d["key"] == "general" && d["locale"] == "en" && d["text"] == kIssueText);
    }
    CHECK(found);
    TestDatabase db;
    auto r = import_json(db.url(), demo.dump());
    INFO(r.err);
    CHECK(r.exit_code == 0);
}

}  // namespace disclosure_test
