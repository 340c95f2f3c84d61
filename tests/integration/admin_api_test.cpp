// The editors' admin API end to end: tokens from the CLI, the refgate binary, a real PostgreSQL.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "refgate/admin/admin_handler.hpp"
#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace admin_api_test {

using namespace refgate::test;
using namespace std::chrono_literals;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

const char* const kPartner = R"json({"slug": "tailscale", "name": "Tailscale", "ref_param": "ref",
  "ref_code": "picks42", "allowed_domains": ["tailscale.com"],
  "extra_params": {"utm_medium": "affiliate"}})json";

Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

Headers json_write(const std::string& token, const std::string& etag = "") {
    Headers h = bearer(token);
    h.emplace_back("Content-Type", "application/json");
    if (!etag.empty()) h.emplace_back("If-Match", etag);
    return h;
}

// A service and a database with an editor, a viewer and an admin token.
struct Fixture {
    TestDatabase db;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    std::string editor = create_api_token(db.url(), "eddie", "editor");
    std::string viewer = create_api_token(db.url(), "vera", "viewer");
    ServiceProcess service{
        {.database_url = db.url(), .env = {{"REFGATE_RELOAD_INTERVAL_MS", "60000"}}}};

    HttpResponse call(const std::string& method, const std::string& target, const Headers& headers,
                      const std::string& body = "") {
        return http_request(service.admin_port(), method, target, headers, body);
    }
    HttpResponse post_partner(const std::string& body = kPartner) {
        return call("POST", "/api/v1/partners", json_write(editor), body);
    }
    HttpResponse post_link(const Json& link) {
        return call("POST", "/api/v1/links", json_write(editor), link.dump());
    }
};

Json link_json(const std::string& slug, const std::string& path = "/pricing") {
    return {
        {"slug", slug}, {"partner", "tailscale"}, {"destination", "https://tailscale.com" + path}};
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("refgate token create prints a token once and stores only its hash", "[admin][pg]") {
    TestDatabase db;
    // The CLI itself (create_api_token makes a token in process): scripts take its last line.
    auto created = run_refgate({"token", "create", "--name", "ci-bot", "--role", "editor"},
                               {{"REFGATE_DATABASE_URL", db.url()}});
    INFO(created.err);
    REQUIRE(created.exit_code == 0);
    std::string out = created.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    std::string token = out.substr(out.rfind('\n') + 1);
    CHECK(token.starts_with("rg_"));
    CHECK(token.size() == 46);

    auto list = run_refgate({"token", "list"}, {{"REFGATE_DATABASE_URL", db.url()}});
    REQUIRE(list.exit_code == 0);
    CHECK(list.out.find("ci-bot\teditor") != std::string::npos);
    CHECK(list.out.find(token) == std::string::npos);

    // The whole database, as pg_dump sees it, never contains the token text.
    TempDir dir;
    std::string dump = dir.file("dump.sql");
    std::string command = require_env("REFGATE_TEST_PG_BINDIR") + "/pg_dump '" + db.url() +
                          "' > '" + dump + "' 2>/dev/null";
    REQUIRE(std::system(command.c_str()) == 0);
    std::string text = read_file(dump);
    CHECK(text.find("refgate_api_tokens") != std::string::npos);
    CHECK(text.find(token) == std::string::npos);
    CHECK(text.find(token.substr(3)) == std::string::npos);
    CHECK(db.scalar("SELECT length(token_hash) FROM refgate_api_tokens") == "32");

    auto again = run_refgate({"token", "create", "--name", "ci-bot", "--role", "viewer"},
                             {{"REFGATE_DATABASE_URL", db.url()}});
    CHECK(again.exit_code == 1);
    auto bad_role = run_refgate({"token", "create", "--name", "x", "--role", "root"},
                                {{"REFGATE_DATABASE_URL", db.url()}});
    CHECK(bad_role.exit_code == 2);

    auto revoke = run_refgate({"token", "revoke", "ci-bot"}, {{"REFGATE_DATABASE_URL", db.url()}});
    CHECK(revoke.exit_code == 0);
    CHECK(run_refgate({"token", "revoke", "ci-bot"}, {{"REFGATE_DATABASE_URL", db.url()}})
              .exit_code == 1);
}

TEST_CASE("the admin API answers 401 without a valid token, 403 for a low role, 429 when guessed",
          "[admin][pg][auth]") {
    Fixture f;
    auto none = f.call("GET", "/api/v1/partners", {});
    CHECK(none.status == 401);
    CHECK(none.header("WWW-Authenticate").starts_with("Bearer"));
    CHECK(none.header("Content-Type") == "application/problem+json");
    CHECK(Json::parse(none.body)["status"] == 401);

    CHECK(f.call("GET", "/api/v1/partners", bearer("rg_nope")).status == 401);
    CHECK(f.call("GET", "/api/v1/partners", bearer(f.viewer)).status == 200);
    CHECK(f.call("GET", "/api/v1/partners", {{"Authorization", "bearer " + f.viewer}}).status ==
          200);
    CHECK(f.post_partner().status == 201);

    auto forbidden = f.call("POST", "/api/v1/links", json_write(f.viewer), link_json("a").dump());
    CHECK(forbidden.status == 403);
    CHECK(f.call("GET", "/api/v1/audit", bearer(f.editor)).status == 403);
    CHECK(f.call("GET", "/api/v1/audit", bearer(f.admin)).status == 200);
    CHECK(f.call("GET", "/api/v1/nothing", bearer(f.admin)).status == 404);
    CHECK(f.call("PUT", "/api/v1/partners", bearer(f.admin)).status == 405);

    // The last-used day is kept.
    CHECK(f.db.scalar("SELECT last_used_on = current_date FROM refgate_api_tokens "
                      "WHERE name = 'vera'") == "t");

    // A token revoked by the CLI (another process) stops working once the service's check of it
    // is no longer kept: within REFGATE_AUTH_CACHE_SECONDS (5 s by default).
    REQUIRE(run_refgate({"token", "revoke", "vera"}, {{"REFGATE_DATABASE_URL", f.db.url()}})
                .exit_code == 0);
    auto revoked_at = std::chrono::steady_clock::now();
    int status = f.call("GET", "/api/v1/partners", bearer(f.viewer)).status;
    while (status == 200 && std::chrono::steady_clock::now() - revoked_at < 10s) {
        std::this_thread::sleep_for(200ms);
        status = f.call("GET", "/api/v1/partners", bearer(f.viewer)).status;
    }
    CHECK(status == 401);
    CHECK(std::chrono::steady_clock::now() - revoked_at < 6s);

    // Failures are limited per address: 20 a minute, then 429 for the next guess; a valid token
    // from that address is still served (someone else's guesses lock no one out).
    for (int i = 0; i < 20; ++i)
        f.call("GET", "/api/v1/partners", bearer("rg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
    auto limited =
        f.call("GET", "/api/v1/partners", bearer("rg_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"));
    CHECK(limited.status == 429);
    CHECK(!limited.header("Retry-After").empty());
    CHECK(f.call("GET", "/api/v1/partners", bearer(f.admin)).status == 200);
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_audit WHERE entity = 'token' "
                      "AND action = 'revoke'") == "1");
}

TEST_CASE("guessed tokens behind a trusted proxy are limited per client, never a valid token",
          "[admin][pg][auth]") {
    TestDatabase db;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    ServiceProcess service{
        {.database_url = db.url(), .env = {{"REFGATE_TRUSTED_PROXIES", "127.0.0.1"}}}};
    auto call = [&](const std::string& client, const std::string& token) {
        return http_request(service.admin_port(), "GET", "/api/v1/partners",
                            {{"Authorization", "Bearer " + token}, {"X-Forwarded-For", client}});
    };
    const std::string guess = "rg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    for (int i = 0; i < 20; ++i) CHECK(call("203.0.113.7", guess).status == 401);
    CHECK(call("203.0.113.7", guess).status == 429);
    // The proxy carries other clients: their guesses are not yet limited, and a valid token from
    // the guessing client itself is served.
    CHECK(call("198.51.100.9", guess).status == 401);
    CHECK(call("203.0.113.7", admin).status == 200);
    CHECK(call("198.51.100.9", admin).status == 200);
}

TEST_CASE("a query parameter that is not UTF-8 is a 400 naming it, never a database outage",
          "[admin][pg]") {
    Fixture f;
    auto unavailable = [&] {
        auto metrics = http_get(f.service.admin_port(), "/metrics").body;
        auto at = metrics.find("refgate_admin_unavailable_total{reason=\"database\"}");
        return at == std::string::npos ? std::string("absent")
                                       : metrics.substr(at, metrics.find('\n', at) - at);
    };
    std::string before = unavailable();
    for (const auto& [target, name] : std::vector<std::pair<std::string, std::string>>{
             {"/api/v1/partners?q=%FF%FE", "q"},
             {"/api/v1/links?q=%C3%28", "q"},
             {"/api/v1/audit?actor=%FF", "actor"},
             {"/api/v1/audit?slug=%ED%A0%80", "slug"},
             {"/api/v1/audit?entity=a%00b", "entity"}}) {
        auto r = f.call("GET", target, bearer(f.admin));
        INFO(target << ": " << r.body);
        CHECK(r.status == 400);
        CHECK_FALSE(r.has_header("Retry-After"));
        CHECK(r.header("Content-Type") == "application/problem+json");
        CHECK_THAT(Json::parse(r.body)["detail"].get<std::string>(),
                   Catch::Contains("'" + name + "'"));
    }
    CHECK(unavailable() == before);
    // Text that is UTF-8 is searched as before.
    CHECK(f.call("GET", "/api/v1/partners?q=%C3%A9t%C3%A9", bearer(f.admin)).status == 200);
}

TEST_CASE("admin answers tell browsers not to sniff their type", "[admin][pg]") {
    Fixture f;
    for (const auto& r : {f.call("GET", "/api/v1/partners", bearer(f.viewer)),
                          f.call("GET", "/api/v1/partners", {}),
                          f.call("GET", "/api/v1/partners/nobody", bearer(f.viewer)),
                          f.post_partner(), f.call("GET", "/api/v1/export", bearer(f.editor))}) {
        INFO(r.status << " " << r.body);
        CHECK(r.header("X-Content-Type-Options") == "nosniff");
    }
}

TEST_CASE("partners are created, read, patched with If-Match and deleted, with an audit trail",
          "[admin][pg][partners]") {
    Fixture f;
    auto created = f.post_partner();
    REQUIRE(created.status == 201);
    CHECK(created.header("ETag") == "\"1\"");
    auto body = Json::parse(created.body);
    CHECK(body["slug"] == "tailscale");
    CHECK(body["version"] == 1);
    CHECK(body.contains("created_at"));
    CHECK(body.contains("updated_at"));
    CHECK(body["scheduled_codes"] == Json::array());
    // No placements unless asked for: no sub-ID, opaque tokens of a-z0-9, no channel codes.
    CHECK(body["subid_param"].is_null());
    CHECK(body["subid_style"] == "opaque");
    CHECK(body["subid_charset"] == "a-z0-9");
    CHECK(body["channel_codes"] == Json::array());
    CHECK(body.size() == 15);

    auto got = f.call("GET", "/api/v1/partners/tailscale", bearer(f.viewer));
    CHECK(got.status == 200);
    CHECK(got.header("ETag") == "\"1\"");
    auto list = f.call("GET", "/api/v1/partners", bearer(f.viewer));
    CHECK(list.status == 200);
    CHECK(!list.header("ETag").empty());
    CHECK(Json::parse(list.body)["items"].size() == 1);
    CHECK(f.call("GET", "/api/v1/partners/nobody", bearer(f.viewer)).status == 404);

    // Duplicate slug.
    auto dup = f.post_partner();
    CHECK(dup.status == 409);
    CHECK(dup.header("Content-Type") == "application/problem+json");

    // PATCH: If-Match is required and must be current.
    std::string patch = R"({"name": "Tailscale Inc."})";
    auto no_match = f.call("PATCH", "/api/v1/partners/tailscale", json_write(f.editor), patch);
    CHECK(no_match.status == 428);
    auto patched =
        f.call("PATCH", "/api/v1/partners/tailscale", json_write(f.editor, "\"1\""), patch);
    REQUIRE(patched.status == 200);
    CHECK(patched.header("ETag") == "\"2\"");
    CHECK(Json::parse(patched.body)["name"] == "Tailscale Inc.");
    CHECK(Json::parse(patched.body)["ref_code"] == "picks42");
    auto stale =
        f.call("PATCH", "/api/v1/partners/tailscale", json_write(f.editor, "\"1\""), patch);
    CHECK(stale.status == 412);

    // merge-patch+json is accepted for PATCH; other types are 415.
    Headers merge = bearer(f.editor);
    merge.emplace_back("Content-Type", "application/merge-patch+json");
    merge.emplace_back("If-Match", "\"2\"");
    CHECK(f.call("PATCH", "/api/v1/partners/tailscale", merge, R"({"active": false})").status ==
          200);
    Headers text = bearer(f.editor);
    text.emplace_back("Content-Type", "text/plain");
    CHECK(f.call("POST", "/api/v1/partners", text, kPartner).status == 415);

    // Bad JSON 400, unknown or invalid fields 422 with per-field errors.
    CHECK(f.call("POST", "/api/v1/partners", json_write(f.editor), "{\"slug\":").status == 400);
    auto unknown = f.call("POST", "/api/v1/partners", json_write(f.editor),
                          R"({"slug": "x", "name": "X", "ref_param": "ref", "ref_code": "c",
                              "allowed_domains": ["x.com"], "colour": "red"})");
    CHECK(unknown.status == 422);
    auto problem = Json::parse(unknown.body);
    CHECK(problem["type"].is_string());
    CHECK(problem["title"].is_string());
    CHECK(problem["detail"].is_string());
    REQUIRE(problem["errors"].size() == 1);
    CHECK(problem["errors"][0]["field"] == "colour");
    CHECK(f.call("POST", "/api/v1/partners", json_write(f.editor), R"({"slug": "Bad Slug"})")
              .status == 422);
    CHECK(f.call("PATCH", "/api/v1/partners/tailscale", json_write(f.editor, "\"3\""),
                 R"({"ref_code": ""})")
              .status == 422);

    // A body over the admin listener's 64 KiB is refused.
    std::string big = "{\"name\": \"" + std::string(70000, 'a') + "\"}";
    CHECK(f.call("POST", "/api/v1/partners", json_write(f.editor), big).status == 413);

    // A partner with links cannot be deleted.
    REQUIRE(f.post_link(link_json("pricing")).status == 201);
    CHECK(f.call("DELETE", "/api/v1/partners/tailscale", json_write(f.editor, "\"3\"")).status ==
          409);
    auto link_etag = f.call("GET", "/api/v1/links/pricing", bearer(f.viewer)).header("ETag");
    CHECK(f.call("DELETE", "/api/v1/links/pricing", json_write(f.editor)).status == 428);
    CHECK(f.call("DELETE", "/api/v1/links/pricing", json_write(f.editor, link_etag)).status == 204);
    CHECK(f.call("DELETE", "/api/v1/partners/tailscale", json_write(f.editor, "\"2\"")).status ==
          412);
    CHECK(f.call("DELETE", "/api/v1/partners/tailscale", json_write(f.editor, "\"3\"")).status ==
          204);
    CHECK(f.call("GET", "/api/v1/partners/tailscale", bearer(f.viewer)).status == 404);

    // Every change left who, what, before and after.
    auto audit = f.call("GET", "/api/v1/audit?entity=partner&slug=tailscale", bearer(f.admin));
    REQUIRE(audit.status == 200);
    auto items = Json::parse(audit.body)["items"];
    REQUIRE(items.size() == 4);  // newest first: delete, update, update, create
    CHECK(items[0]["action"] == "delete");
    CHECK(items[0]["after"].is_null());
    CHECK(items[0]["before"]["version"] == 3);
    CHECK(items[1]["before"]["active"] == true);
    CHECK(items[1]["after"]["active"] == false);
    CHECK(items[3]["action"] == "create");
    CHECK(items[3]["actor"] == "eddie");
    CHECK(items[3]["before"].is_null());
    CHECK(items[3]["after"]["ref_code"] == "picks42");
}

TEST_CASE("every create answers 201 Created with a Location naming the new resource",
          "[admin][pg]") {
    Fixture f;
    auto partner = f.post_partner();
    CHECK(partner.status == 201);
    CHECK(partner.reason == "Created");
    CHECK(partner.header("Location") == "/api/v1/partners/tailscale");

    auto link = f.post_link(link_json("pricing"));
    CHECK(link.reason == "Created");
    CHECK(link.header("Location") == "/api/v1/links/pricing");
    // The Location is where the new resource is read.
    CHECK(f.call("GET", link.header("Location"), bearer(f.viewer)).status == 200);

    auto token = f.call("POST", "/api/v1/tokens", json_write(f.admin),
                        R"({"name": "grafana.prod", "role": "viewer"})");
    CHECK(token.reason == "Created");
    CHECK(token.header("Location") == "/api/v1/tokens/grafana.prod");

    auto disclosure = f.call("PUT", "/api/v1/disclosures/general/NL", json_write(f.editor),
                             R"({"text": "Eerste versie"})");
    CHECK(disclosure.status == 201);
    CHECK(disclosure.reason == "Created");
    CHECK(disclosure.header("Location") == "/api/v1/disclosures/general/nl");
}

TEST_CASE("links are validated, filtered and paginated", "[admin][pg][links]") {
    Fixture f;
    REQUIRE(f.post_partner().status == 201);
    for (const char* slug : {"a1", "a2", "a3", "a4", "a5"})
        REQUIRE(f.post_link(link_json(slug)).status == 201);
    auto disabled = link_json("b1");
    disabled["status"] = "disabled";
    REQUIRE(f.post_link(disabled).status == 201);
    CHECK(f.post_link(link_json("a1")).status == 409);

    auto rule = [&](const std::string& destination) {
        auto link = link_json("bad");
        link["destination"] = destination;
        auto r = f.post_link(link);
        CHECK(r.status == 422);
        auto errors = Json::parse(r.body)["errors"];
        return errors.empty() ? std::string() : errors[0].value("rule", std::string());
    };
    CHECK(rule("http://tailscale.com/") == "not_https");
    CHECK(rule("https://evil.example/") == "host_not_allowed");
    CHECK(rule("https://user:pw@tailscale.com/") == "userinfo");
    CHECK(rule("https://tailscale.com/" + std::string(3000, 'a')) == "too_long");
    CHECK(rule("https://tailscale.com/a\r\nSet-Cookie: x=1") == "control_characters");
    CHECK(rule(std::string("https://tailscale.com/\x7f")) == "control_characters");
    CHECK(rule("https://tailscale.com/\t") == "control_characters");
    auto orphan = link_json("orphan");
    orphan["partner"] = "nobody";
    CHECK(f.post_link(orphan).status == 422);

    // Pages of two, in slug order, with a cursor.
    std::vector<std::string> seen;
    std::string cursor;
    for (int page = 0; page < 10; ++page) {
        auto r =
            f.call("GET", "/api/v1/links?limit=2" + (cursor.empty() ? "" : "&cursor=" + cursor),
                   bearer(f.viewer));
        REQUIRE(r.status == 200);
        auto body = Json::parse(r.body);
        CHECK(body["items"].size() <= 2);
        for (const auto& item : body["items"]) seen.push_back(item["slug"]);
        if (body["next_cursor"].is_null()) break;
        cursor = body["next_cursor"];
    }
    CHECK(seen == std::vector<std::string>{"a1", "a2", "a3", "a4", "a5", "b1"});

    auto only_disabled =
        f.call("GET", "/api/v1/links?status=disabled&partner=tailscale", bearer(f.viewer));
    REQUIRE(only_disabled.status == 200);
    auto items = Json::parse(only_disabled.body)["items"];
    REQUIRE(items.size() == 1);
    CHECK(items[0]["slug"] == "b1");
    CHECK(f.call("GET", "/api/v1/links?status=gone", bearer(f.viewer)).status == 422);
    CHECK(f.call("GET", "/api/v1/links?limit=0", bearer(f.viewer)).status == 422);

    // PATCH of a link, and the destination rules apply to it as well.
    auto link = f.call("GET", "/api/v1/links/a1", bearer(f.viewer));
    CHECK(f.call("PATCH", "/api/v1/links/a1", json_write(f.editor, link.header("ETag")),
                 R"({"destination": "https://evil.example/"})")
              .status == 422);
    auto patched = f.call("PATCH", "/api/v1/links/a1", json_write(f.editor, link.header("ETag")),
                          R"({"status": "disabled"})");
    REQUIRE(patched.status == 200);
    CHECK(Json::parse(patched.body)["status"] == "disabled");
    CHECK(patched.header("ETag") == "\"2\"");
}

TEST_CASE("a referral code rotated through the API reaches redirects within a second",
          "[admin][pg][rotation]") {
    Fixture f;
    REQUIRE(f.post_partner().status == 201);
    REQUIRE(f.post_link(link_json("tailscale")).status == 201);
    auto deadline = std::chrono::steady_clock::now() + 3s;
    while (http_get(f.service.port(), "/go/tailscale").status != 302 &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    REQUIRE(http_get(f.service.port(), "/go/tailscale").header("Location").find("ref=picks42") !=
            std::string::npos);

    auto start = std::chrono::steady_clock::now();
    auto r = f.call("PATCH", "/api/v1/partners/tailscale", json_write(f.editor, "\"1\""),
                    R"({"ref_code": "rotated-1"})");
    REQUIRE(r.status == 200);
    bool seen = false;
    while (std::chrono::steady_clock::now() - start < 3s) {
        if (http_get(f.service.port(), "/go/tailscale").header("Location").find("ref=rotated-1") !=
            std::string::npos) {
            seen = true;
            break;
        }
        std::this_thread::sleep_for(10ms);
    }
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    REQUIRE(seen);
    CHECK(took.count() < 1000);

    // The code history lists both codes with their intervals.
    auto codes = f.call("GET", "/api/v1/partners/tailscale/codes", bearer(f.viewer));
    REQUIRE(codes.status == 200);
    auto items = Json::parse(codes.body)["items"];
    REQUIRE(items.size() == 2);
    CHECK(items[0]["ref_code"] == "picks42");
    CHECK(items[0]["live_until"].is_string());
    CHECK(items[1]["ref_code"] == "rotated-1");
    CHECK(items[1]["live_until"].is_null());
    CHECK(f.call("GET", "/api/v1/partners/nobody/codes", bearer(f.viewer)).status == 404);
}

TEST_CASE("admins create, list and revoke tokens over the API, and the text is shown once",
          "[admin][pg][tokens]") {
    Fixture f;
    // Only admins manage tokens.
    CHECK(f.call("GET", "/api/v1/tokens", bearer(f.editor)).status == 403);
    CHECK(f.call("POST", "/api/v1/tokens", json_write(f.editor), R"({"name":"x","role":"viewer"})")
              .status == 403);

    auto created = f.call("POST", "/api/v1/tokens", json_write(f.admin),
                          R"({"name": "grafana.prod", "role": "viewer"})");
    REQUIRE(created.status == 201);
    auto token = Json::parse(created.body);
    CHECK(token["name"] == "grafana.prod");
    CHECK(token["role"] == "viewer");
    CHECK(token["revoked_at"].is_null());
    std::string text = token["token"];
    CHECK(text.starts_with("rg_"));
    CHECK(created.header("Cache-Control") == "no-store");
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_api_tokens WHERE token_hash = sha256('" + text +
                      "')") == "1");
    // The new token works with its role, and its text never appears again.
    CHECK(f.call("GET", "/api/v1/partners", bearer(text)).status == 200);
    CHECK(f.call("POST", "/api/v1/partners", json_write(text), kPartner).status == 403);
    auto list = f.call("GET", "/api/v1/tokens", bearer(f.admin));
    REQUIRE(list.status == 200);
    CHECK(list.body.find(text) == std::string::npos);
    CHECK(list.body.find("\"token\"") == std::string::npos);
    auto items = Json::parse(list.body)["items"];
    REQUIRE(items.size() == 4);
    CHECK(items[3]["name"] == "grafana.prod");

    // Errors: duplicate live name 409, bad fields 422 naming each field, wrong type 415.
    CHECK(f.call("POST", "/api/v1/tokens", json_write(f.admin),
                 R"({"name": "grafana.prod", "role": "viewer"})")
              .status == 409);
    auto bad = f.call("POST", "/api/v1/tokens", json_write(f.admin),
                      R"({"name": "no spaces", "role": "root", "ttl": 3})");
    REQUIRE(bad.status == 422);
    std::vector<std::string> fields;
    auto problem = Json::parse(bad.body);
    for (const auto& e : problem["errors"]) fields.push_back(e["field"]);
    CHECK(fields == std::vector<std::string>{"ttl", "name", "role"});
    CHECK(f.call("POST", "/api/v1/tokens", bearer(f.admin), "{}").status == 415);

    // Revoking needs If-Match (the token's version); a stale one is 412.
    std::string version = "\"" + std::to_string(token["version"].get<long>()) + "\"";
    CHECK(f.call("DELETE", "/api/v1/tokens/grafana.prod", bearer(f.admin)).status == 428);
    Headers stale = bearer(f.admin);
    stale.emplace_back("If-Match", "\"999999\"");
    CHECK(f.call("DELETE", "/api/v1/tokens/grafana.prod", stale).status == 412);
    Headers match = bearer(f.admin);
    match.emplace_back("If-Match", version);
    CHECK(f.call("DELETE", "/api/v1/tokens/grafana.prod", match).status == 204);
    CHECK(f.call("GET", "/api/v1/partners", bearer(text)).status == 401);
    CHECK(f.call("DELETE", "/api/v1/tokens/grafana.prod", match).status == 404);
    auto audit = Json::parse(
        f.call("GET", "/api/v1/audit?entity=token&slug=grafana.prod", bearer(f.admin)).body);
    REQUIRE(audit["items"].size() == 2);
    CHECK(audit["items"][0]["action"] == "revoke");
    CHECK(audit["items"][0]["actor"] == "ada");
    CHECK(audit["items"][1]["action"] == "create");
}

TEST_CASE("an import's audit entries record partners and links as the API shows them",
          "[admin][audit][import][pg]") {
    Fixture f;
    auto created = f.post_partner();
    REQUIRE(created.status == 201);
    Json doc = {{"partners", Json::array({Json::parse(kPartner)})},
                {"links", Json::array({link_json("pricing")})}};
    doc["partners"][0]["ref_code"] = "picks43";
    REQUIRE(f.call("POST", "/api/v1/import", json_write(f.editor), doc.dump()).status == 200);

    auto get = [&](const std::string& target) {
        auto r = f.call("GET", target, bearer(f.admin));
        REQUIRE(r.status == 200);
        return Json::parse(r.body);
    };
    auto partner = get("/api/v1/partners/tailscale");
    CHECK(partner["ref_code"] == "picks43");
    auto partner_audit = get("/api/v1/audit?entity=partner&slug=tailscale")["items"];
    REQUIRE(partner_audit.size() == 2);
    CHECK(partner_audit[0]["action"] == "update");
    CHECK(partner_audit[0]["before"] == Json::parse(created.body));
    CHECK(partner_audit[0]["after"] == partner);
    // A link without rules, as the API shows it: no "rules" member.
    auto link = get("/api/v1/links/pricing");
    auto link_audit = get("/api/v1/audit?entity=link&slug=pricing")["items"];
    REQUIRE(link_audit.size() == 1);
    CHECK(link_audit[0]["action"] == "create");
    CHECK(link_audit[0]["before"].is_null());
    CHECK(link_audit[0]["after"] == link);
}

TEST_CASE("every route of the admin handler is described in api/openapi.json", "[admin][openapi]") {
    auto root = source_root();
    std::string path = (root / "api" / "openapi.json").string();
    auto spec = Json::parse(read_file(path));
    CHECK(spec["openapi"].get<std::string>().starts_with("3.1"));
    for (const auto& route : refgate::admin::routes()) {
        std::string pattern(route.pattern);
        std::string method(route.method_name);
        for (auto& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        INFO(method << " " << pattern);
        REQUIRE(spec["paths"].contains(pattern));
        CHECK(spec["paths"][pattern].contains(method));
    }
}

}  // namespace admin_api_test
