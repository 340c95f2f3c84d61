// Console passwords after NIST SP 800-63B, end to end: weak ones refused by the API and the CLI
// with the rule that failed, and every user changing their own password (the current one
// required), which ends their other sessions; the refgate binary and a real PostgreSQL.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace console_passwords_test {

using namespace refgate::test;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

const std::string kOrigin = "http://127.0.0.1";

struct Session {
    std::string cookie;  // "name=id"
    std::string csrf;
};

struct Passwords {
    TestDatabase db;
    std::string admin_token = create_api_token(db.url(), "ops", "admin");
    ServiceProcess service{{.database_url = db.url()}};

    HttpResponse call(const std::string& method, const std::string& target, Headers headers,
                      const std::string& body = "") {
        if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
        return http_request(service.admin_port(), method, target, headers, body);
    }
    HttpResponse as_admin(const std::string& method, const std::string& target,
                          const std::string& body = "") {
        Headers h{{"Authorization", "Bearer " + admin_token}, {"If-Match", "*"}};
        return call(method, target, h, body);
    }
    HttpResponse sign_in(const std::string& name, const std::string& password) {
        return call("POST", "/api/v1/session", {{"Origin", kOrigin}},
                    Json{{"name", name}, {"password", password}}.dump());
    }
    Session session(const std::string& name, const std::string& password) {
        auto r = sign_in(name, password);
        INFO(r.body);
        REQUIRE(r.status == 200);
        std::string set = r.header("Set-Cookie");
        return {set.substr(0, set.find(';')), Json::parse(r.body)["csrf_token"]};
    }
    int session_status(const Session& s) {
        return call("GET", "/api/v1/session", {{"Cookie", s.cookie}}).status;
    }
    HttpResponse change(const Session& s, const std::string& current, const std::string& next) {
        return call("PUT", "/api/v1/session/password",
                    {{"Cookie", s.cookie}, {"X-CSRF-Token", s.csrf}, {"Origin", kOrigin}},
                    Json{{"current", current}, {"new", next}}.dump());
    }
    CommandResult cli(const std::vector<std::string>& args, const std::string& input = "") {
        return run_refgate(args, {{"REFGATE_DATABASE_URL", db.url()}}, input);
    }
};

// The one field error of a 422 answer: {field, message}.
std::pair<std::string, std::string> field_error(const HttpResponse& r) {
    INFO(r.body);
    REQUIRE(r.status == 422);
    CHECK(r.header("Content-Type") == "application/problem+json");
    auto errors = Json::parse(r.body)["errors"];
    REQUIRE(errors.size() == 1);
    return {errors[0]["field"], errors[0]["message"]};
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("the API refuses weak passwords with a field error naming the rule", "[console][pg]") {
    Passwords p;
    auto create = [&](const std::string& name, const std::string& password) {
        return p.as_admin("POST", "/api/v1/users",
                          Json{{"name", name}, {"role", "editor"}, {"password", password}}.dump());
    };
    auto [field, message] = field_error(create("eddie", "aaaaaaaaaa"));
    CHECK(field == "password");
    CHECK(contains(message, "at least 12 characters"));
    // Four characters in twelve bytes: counted as characters.
    CHECK(contains(field_error(create("eddie", "€€€€")).second, "at least 12 characters"));
    CHECK(contains(field_error(create("eddie", "Eddie at home 1")).second, "user's name"));
    CHECK(contains(field_error(create("eddie", "Password1234")).second, "commonly used"));
    CHECK(contains(field_error(create("eddie", "aaaaaaaaaaaa")).second, "repeated"));
    CHECK(p.as_admin("GET", "/api/v1/users/eddie").status == 404);

    REQUIRE(create("eddie", "a quiet harbour at dusk").status == 201);
    auto patch = p.as_admin("PATCH", "/api/v1/users/eddie", R"({"password": "qwertyuiop123"})");
    auto [patch_field, patch_message] = field_error(patch);
    CHECK(patch_field == "password");
    CHECK(contains(patch_message, "commonly used"));
    CHECK(p.sign_in("eddie", "a quiet harbour at dusk").status == 200);
}

TEST_CASE("refgate user create and set-password refuse weak passwords, naming the rule",
          "[console][pg]") {
    Passwords p;
    auto create = p.cli(
        {"user", "create", "--name", "eddie", "--role", "editor", "--password-stdin"}, "€€€€\n");
    CHECK(create.exit_code == 1);
    CHECK(contains(create.err, "at least 12 characters"));
    REQUIRE(p.cli({"user", "create", "--name", "eddie", "--role", "editor", "--password-stdin"},
                  "a quiet harbour at dusk\n")
                .exit_code == 0);
    auto common = p.cli({"user", "set-password", "eddie", "--password-stdin"}, "password1234\n");
    CHECK(common.exit_code == 1);
    CHECK(contains(common.err, "commonly used"));
    auto named = p.cli({"user", "set-password", "eddie", "--password-stdin"}, "eddie eddie 42\n");
    CHECK(named.exit_code == 1);
    CHECK(contains(named.err, "user's name"));
    CHECK(p.sign_in("eddie", "a quiet harbour at dusk").status == 200);
}

TEST_CASE("a user changes their own password with the current one, and their other sessions end",
          "[console][pg]") {
    Passwords p;
    REQUIRE(p.as_admin("POST", "/api/v1/users",
                       R"({"name": "vera", "role": "viewer", "password": "lanterns in the fog"})")
                .status == 201);
    Session laptop = p.session("vera", "lanterns in the fog");
    Session phone = p.session("vera", "lanterns in the fog");

    auto wrong = field_error(p.change(laptop, "lanterns in the mist", "a brand new phrase"));
    CHECK(wrong.first == "current");
    auto weak = field_error(p.change(laptop, "lanterns in the fog", "€€€€"));
    CHECK(weak.first == "new");
    CHECK(contains(weak.second, "at least 12 characters"));
    auto no_csrf = p.call("PUT", "/api/v1/session/password", {{"Cookie", laptop.cookie}},
                          R"({"current": "lanterns in the fog", "new": "a brand new phrase"})");
    CHECK(no_csrf.status == 403);
    CHECK(p.call("PUT", "/api/v1/session/password", {},
                 R"({"current": "lanterns in the fog", "new": "a brand new phrase"})")
              .status == 401);
    CHECK(p.session_status(phone) == 200);

    auto changed = p.change(laptop, "lanterns in the fog", "a brand new phrase");
    CHECK(changed.status == 204);
    CHECK(p.session_status(laptop) == 200);
    CHECK(p.session_status(phone) == 401);
    CHECK(p.sign_in("vera", "lanterns in the fog").status == 401);
    Session again = p.session("vera", "a brand new phrase");
    auto audit = Json::parse(p.as_admin("GET", "/api/v1/audit?entity=user&slug=vera").body);
    CHECK(audit["items"][0]["actor"] == "user:vera");
    CHECK(audit["items"][0]["after"]["password_changed"] == true);
    CHECK_FALSE(contains(audit.dump(), "a brand new phrase"));

    // An admin's new password for the user ends every session of theirs.
    REQUIRE(
        p.as_admin("PATCH", "/api/v1/users/vera", R"({"password": "set by the admin"})").status ==
        200);
    CHECK(p.session_status(laptop) == 401);
    CHECK(p.session_status(again) == 401);
}

TEST_CASE("a wrong current password counts as a failed sign-in, limited like one",
          "[console][pg]") {
    Passwords p;
    REQUIRE(p.cli({"user", "create", "--name", "eddie", "--role", "editor", "--password-stdin"},
                  "a quiet harbour at dusk\n")
                .exit_code == 0);
    Session s = p.session("eddie", "a quiet harbour at dusk");
    int refused = 0;
    int limited_at = 0;
    for (int i = 1; i <= 30 && limited_at == 0; ++i) {
        auto r = p.change(s, "not my password at all", "a brand new phrase");
        if (r.status == 422) ++refused;
        if (r.status == 429) {
            limited_at = i;
            CHECK_FALSE(r.header("Retry-After").empty());
        }
    }
    CHECK(refused > 0);
    CHECK(limited_at > 1);
    auto metrics = http_get(p.service.admin_port(), "/metrics").body;
    CHECK(contains(
        metrics, "refgate_console_sign_ins_total{result=\"refused\"} " + std::to_string(refused)));
}

}  // namespace console_passwords_test
