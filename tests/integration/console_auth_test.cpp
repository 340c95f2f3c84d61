// The console's people end to end: users from the CLI and the API, sign-in, the session cookie
// and its CSRF checks, expiry and sign-out; the refgate binary and a real PostgreSQL.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/console_session.hpp"
#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace console_auth_test {

using namespace refgate::test;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

const char* const kPartner = R"json({"slug": "tailscale", "name": "Tailscale", "ref_param": "ref",
  "ref_code": "picks42", "allowed_domains": ["tailscale.com"]})json";

struct Console {
    explicit Console(EnvPairs env = {})
        : service({.database_url = db.url(), .env = std::move(env)}) {}

    TestDatabase db;
    std::string admin_token = create_api_token(db.url(), "ada", "admin");
    ServiceProcess service;

    HttpResponse call(const std::string& method, const std::string& target, Headers headers,
                      const std::string& body = "") {
        if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
        return http_request(service.admin_port(), method, target, headers, body);
    }
    HttpResponse sign_in(const std::string& name, const std::string& password,
                         Headers headers = {}) {
        return call("POST", "/api/v1/session", std::move(headers),
                    Json{{"name", name}, {"password", password}}.dump());
    }
    ConsoleBrowser browser(const std::string& name, const std::string& password) {
        return sign_in_console(service.admin_port(), name, password);
    }
    // A console page's request: cookie, CSRF token, same origin.
    HttpResponse page(const ConsoleBrowser& b, const std::string& method, const std::string& target,
                      const std::string& body = "") {
        return call(method, target, console_page_headers(b), body);
    }
    std::string admin_etag(const std::string& user) {
        return call("GET", "/api/v1/users/" + user, {{"Authorization", "Bearer " + admin_token}})
            .header("ETag");
    }
};

}  // namespace

TEST_CASE("signing in sets an HttpOnly SameSite=Strict cookie with a new id, stored only hashed",
          "[console][pg]") {
    Console c;
    add_console_user(c.db.url(), "eddie", "editor", "correct horse battery");
    // A browser arrives with an id someone planted; sign-in never keeps it.
    std::string planted = std::string(43, 'A');
    auto r = c.sign_in("eddie", "correct horse battery",
                       {{"Origin", kConsoleOrigin}, {"Cookie", "refgate_session=" + planted}});
    REQUIRE(r.status == 200);
    std::string set = r.header("Set-Cookie");
    CHECK(set.starts_with("refgate_session="));
    CHECK(set.find("; Path=/; HttpOnly; SameSite=Strict") != std::string::npos);
    CHECK(set.find("Secure") == std::string::npos);
    std::string id = set.substr(16, set.find(';') - 16);
    CHECK(id.size() == 43);
    CHECK(id != planted);
    auto body = Json::parse(r.body);
    CHECK(body["user"] == Json{{"name", "eddie"}, {"role", "editor"}});
    CHECK(body["csrf_token"].get<std::string>().size() == 43);
    CHECK(body["csrf_token"] != id);
    CHECK(body["expires_at"].is_string());
    CHECK(body["idle_expires_at"].is_string());
    CHECK(body["public_base_url"].is_null());

    CHECK(c.db.scalar("SELECT count(*) FROM refgate_console_sessions") == "1");
    CHECK(c.db.scalar("SELECT count(*) FROM refgate_console_sessions WHERE id_hash = "
                      "sha256(convert_to('" +
                      id + "', 'UTF8'))") == "1");
    CHECK(c.db.scalar("SELECT count(*) FROM refgate_console_sessions WHERE position('" + id +
                      "' in encode(id_hash, 'escape') || csrf_token) > 0") == "0");
    CHECK(c.db.scalar("SELECT password_hash FROM refgate_console_users WHERE name = 'eddie'")
              .starts_with("$argon2id$v=19$m=65536,t=2,p=1$"));
    CHECK(c.db.scalar("SELECT last_sign_in_at IS NOT NULL FROM refgate_console_users") == "t");

    auto again = c.call("GET", "/api/v1/session", {{"Cookie", "refgate_session=" + id}});
    REQUIRE(again.status == 200);
    CHECK(Json::parse(again.body)["csrf_token"] == body["csrf_token"]);
    CHECK(c.call("GET", "/api/v1/session", {}).status == 401);
    CHECK(c.call("GET", "/api/v1/session", {{"Cookie", "refgate_session=" + planted}}).status ==
          401);
}

TEST_CASE("with an https admin URL the session cookie is Secure and __Host- prefixed",
          "[console][pg]") {
    Console c(EnvPairs{{"REFGATE_ADMIN_PUBLIC_URL", "https://admin.example.com"},
                       {"REFGATE_PUBLIC_BASE_URL", "https://picks.example.com"}});
    add_console_user(c.db.url(), "vera", "viewer", "a long enough password");
    CHECK(c.sign_in("vera", "a long enough password", {{"Origin", kConsoleOrigin}}).status == 403);
    auto r = c.sign_in("vera", "a long enough password", {{"Origin", "https://admin.example.com"}});
    REQUIRE(r.status == 200);
    std::string set = r.header("Set-Cookie");
    CHECK(set.starts_with("__Host-refgate_session="));
    CHECK(set.ends_with("; Path=/; HttpOnly; SameSite=Strict; Secure"));
    CHECK(Json::parse(r.body)["public_base_url"] == "https://picks.example.com");
    std::string cookie = set.substr(0, set.find(';'));
    CHECK(c.call("GET", "/api/v1/partners", {{"Cookie", cookie}}).status == 200);
    // The plain name is not this console's cookie.
    std::string id = cookie.substr(cookie.find('=') + 1);
    CHECK(c.call("GET", "/api/v1/partners", {{"Cookie", "refgate_session=" + id}}).status == 401);
}

TEST_CASE("a wrong password, an unknown name and a disabled user get the same 401",
          "[console][pg]") {
    Console c;
    add_console_user(c.db.url(), "eddie", "editor", "correct horse battery");
    add_console_user(c.db.url(), "olga", "editor", "correct horse battery");
    auto d = run_refgate({"user", "disable", "olga"}, {{"REFGATE_DATABASE_URL", c.db.url()}});
    REQUIRE(d.exit_code == 0);
    auto wrong = c.sign_in("eddie", "not the password");
    auto unknown = c.sign_in("nobody", "correct horse battery");
    auto disabled = c.sign_in("olga", "correct horse battery");
    for (const auto* r : {&wrong, &unknown, &disabled}) {
        CHECK(r->status == 401);
        CHECK(r->body == wrong.body);
        CHECK(r->header("ETag") == wrong.header("ETag"));
        CHECK_FALSE(r->has_header("Set-Cookie"));
    }
    CHECK(Json::parse(wrong.body)["detail"] == "name or password is wrong");
    CHECK(c.db.scalar("SELECT count(*) FROM refgate_console_sessions") == "0");
}

TEST_CASE("the sixth failed sign-in for a name is answered 429, even with the right password",
          "[console][pg]") {
    Console c;
    add_console_user(c.db.url(), "eddie", "editor", "correct horse battery");
    for (int i = 0; i < 5; ++i)
        CHECK(c.sign_in("eddie", "guess number " + std::to_string(i)).status == 401);
    auto limited = c.sign_in("eddie", "correct horse battery");
    CHECK(limited.status == 429);
    CHECK(std::stoi(limited.header("Retry-After")) > 800);
    CHECK_FALSE(limited.has_header("Set-Cookie"));
    // Another name is not locked by eddie's failures.
    add_console_user(c.db.url(), "vera", "viewer", "a long enough password");
    CHECK(c.sign_in("vera", "a long enough password").status == 200);
    auto metrics = http_get(c.service.admin_port(), "/metrics").body;
    CHECK(metrics.find("refgate_console_sign_ins_total{result=\"refused\"} 5") !=
          std::string::npos);
    CHECK(metrics.find("refgate_console_sign_ins_total{result=\"limited\"} 1") !=
          std::string::npos);
    CHECK(metrics.find("refgate_console_sign_ins_total{result=\"ok\"} 1") != std::string::npos);
}

TEST_CASE("one client's failed sign-ins lock that name from that client only, behind a proxy too",
          "[console][pg]") {
    Console c(EnvPairs{{"REFGATE_TRUSTED_PROXIES", "127.0.0.1"}});
    add_console_user(c.db.url(), "ada", "admin", "correct horse battery");
    auto from = [](const char* client) { return Headers{{"X-Forwarded-For", client}}; };
    for (int i = 0; i < 5; ++i)
        CHECK(c.sign_in("ada", "guess " + std::to_string(i), from("203.0.113.7")).status == 401);
    CHECK(c.sign_in("ada", "correct horse battery", from("203.0.113.7")).status == 429);
    // The admin herself, from anywhere else (another desk behind the same proxy): signed in.
    CHECK(c.sign_in("ada", "correct horse battery", from("198.51.100.9")).status == 200);
}

TEST_CASE("many failed sign-ins slow a client down but never refuse the right password",
          "[console][pg]") {
    Console c;
    add_console_user(c.db.url(), "eddie", "editor", "correct horse battery");
    for (int i = 0; i < 20; ++i)
        CHECK(c.sign_in("user" + std::to_string(i), "wrong password").status == 401);
    auto started = std::chrono::steady_clock::now();
    CHECK(c.sign_in("eddie", "correct horse battery").status == 200);
    CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds{250});
}

TEST_CASE("guessed tokens from an address do not lock out a valid session from it",
          "[console][pg]") {
    Console c;
    add_console_user(c.db.url(), "eddie", "editor", "correct horse battery");
    ConsoleBrowser b = c.browser("eddie", "correct horse battery");
    for (int i = 0; i < 21; ++i)
        c.call("GET", "/api/v1/partners",
               {{"Authorization", "Bearer rg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}});
    CHECK(c.call("GET", "/api/v1/partners",
                 {{"Authorization", "Bearer rg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}})
              .status == 429);
    CHECK(c.page(b, "GET", "/api/v1/partners").status == 200);
    CHECK(
        c.call("GET", "/api/v1/partners", {{"Authorization", "Bearer " + c.admin_token}}).status ==
        200);
}

TEST_CASE("a sign-in from another site is refused", "[console][pg]") {
    Console c;
    add_console_user(c.db.url(), "eddie", "editor", "correct horse battery");
    CHECK(
        c.sign_in("eddie", "correct horse battery", {{"Origin", "https://evil.example"}}).status ==
        403);
    auto r = c.sign_in("eddie", "correct horse battery", {{"Sec-Fetch-Site", "cross-site"}});
    CHECK(r.status == 403);
    CHECK(Json::parse(r.body)["title"] == "CSRF check failed");
    CHECK(c.db.scalar("SELECT count(*) FROM refgate_console_sessions") == "0");
}

TEST_CASE("a session reads partners, and a viewer's session cannot write", "[console][pg]") {
    Console c;
    add_console_user(c.db.url(), "vera", "viewer", "a long enough password");
    ConsoleBrowser vera = c.browser("vera", "a long enough password");
    CHECK(c.call("GET", "/api/v1/partners", {{"Cookie", vera.cookie}}).status == 200);
    auto post = c.page(vera, "POST", "/api/v1/partners", kPartner);
    CHECK(post.status == 403);
    CHECK(Json::parse(post.body)["detail"].get<std::string>().find("editor") != std::string::npos);
    // Bearer tokens work as before beside sessions.
    CHECK(
        c.call("GET", "/api/v1/partners", {{"Authorization", "Bearer " + c.admin_token}}).status ==
        200);
}

TEST_CASE("an editor's unsafe request needs the CSRF token, the console's origin and no other site",
          "[console][pg]") {
    Console c;
    add_console_user(c.db.url(), "eddie", "editor", "correct horse battery");
    ConsoleBrowser b = c.browser("eddie", "correct horse battery");
    auto without_token = c.call("POST", "/api/v1/partners", {{"Cookie", b.cookie}}, kPartner);
    CHECK(without_token.status == 403);
    CHECK(Json::parse(without_token.body)["title"] == "CSRF check failed");
    auto wrong_token =
        c.call("POST", "/api/v1/partners",
               {{"Cookie", b.cookie}, {"X-CSRF-Token", std::string(43, 'x')}}, kPartner);
    CHECK(wrong_token.status == 403);
    Headers good{{"Cookie", b.cookie}, {"X-CSRF-Token", b.csrf}};
    auto cross_origin = good;
    cross_origin.emplace_back("Origin", "https://evil.example");
    CHECK(c.call("POST", "/api/v1/partners", cross_origin, kPartner).status == 403);
    for (const char* site : {"cross-site", "same-site"}) {
        auto other_site = good;
        other_site.emplace_back("Sec-Fetch-Site", site);
        CHECK(c.call("POST", "/api/v1/partners", other_site, kPartner).status == 403);
    }
    CHECK(c.db.scalar("SELECT count(*) FROM refgate_partners") == "0");

    auto created = c.page(b, "POST", "/api/v1/partners", kPartner);
    CHECK(created.status == 201);
    auto audit = Json::parse(c.call("GET", "/api/v1/audit?entity=partner",
                                    {{"Authorization", "Bearer " + c.admin_token}})
                                 .body);
    REQUIRE(audit["items"].size() == 1);
    CHECK(audit["items"][0]["actor"] == "user:eddie");
    // Safe methods need no token.
    CHECK(c.call("GET", "/api/v1/partners/tailscale", {{"Cookie", b.cookie}}).status == 200);
}

TEST_CASE("signing out ends the session and clears the cookie", "[console][pg]") {
    Console c;
    add_console_user(c.db.url(), "eddie", "editor", "correct horse battery");
    ConsoleBrowser b = c.browser("eddie", "correct horse battery");
    CHECK(c.call("DELETE", "/api/v1/session", {{"Cookie", b.cookie}}).status == 403);
    auto out = c.page(b, "DELETE", "/api/v1/session");
    CHECK(out.status == 204);
    CHECK(out.header("Set-Cookie").starts_with("refgate_session=; Path=/; Max-Age=0"));
    CHECK(c.db.scalar("SELECT ended_at IS NOT NULL FROM refgate_console_sessions") == "t");
    CHECK(c.call("GET", "/api/v1/session", {{"Cookie", b.cookie}}).status == 401);
    auto refused = c.call("GET", "/api/v1/partners", {{"Cookie", b.cookie}});
    CHECK(refused.status == 401);
    CHECK(Json::parse(refused.body)["detail"] == "the session has ended or expired; sign in again");
}

TEST_CASE("an idle session and a session past its end are refused", "[console][pg]") {
    // The sessions' times are moved in the database, behind the service's back: it keeps no
    // checked session (auth_cache_test.cpp has what it keeps).
    Console c(
        EnvPairs{{"REFGATE_CONSOLE_SESSION_IDLE", "600"}, {"REFGATE_AUTH_CACHE_SECONDS", "0"}});
    add_console_user(c.db.url(), "eddie", "editor", "correct horse battery");
    ConsoleBrowser idle = c.browser("eddie", "correct horse battery");
    ConsoleBrowser old = c.browser("eddie", "correct horse battery");
    CHECK(c.call("GET", "/api/v1/partners", {{"Cookie", idle.cookie}}).status == 200);
    auto move = [&](const ConsoleBrowser& b, const std::string& set) {
        c.db.exec("UPDATE refgate_console_sessions SET " + set +
                  " WHERE id_hash = sha256(convert_to('" + b.id + "', 'UTF8'))");
    };
    move(idle, "last_seen_at = now() - interval '9 minutes'");
    CHECK(c.call("GET", "/api/v1/partners", {{"Cookie", idle.cookie}}).status == 200);
    move(idle, "last_seen_at = now() - interval '11 minutes'");
    CHECK(c.call("GET", "/api/v1/partners", {{"Cookie", idle.cookie}}).status == 401);
    move(old, "expires_at = now() - interval '1 second'");
    CHECK(c.call("GET", "/api/v1/session", {{"Cookie", old.cookie}}).status == 401);
}

TEST_CASE("the absolute session limit comes from REFGATE_CONSOLE_SESSION_MAX", "[console][pg]") {
    Console c(EnvPairs{{"REFGATE_CONSOLE_SESSION_MAX", "1"}});
    add_console_user(c.db.url(), "eddie", "editor", "correct horse battery");
    ConsoleBrowser b = c.browser("eddie", "correct horse battery");
    std::this_thread::sleep_for(std::chrono::milliseconds{1100});
    CHECK(c.call("GET", "/api/v1/session", {{"Cookie", b.cookie}}).status == 401);
}

}  // namespace console_auth_test
