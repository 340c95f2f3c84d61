// Console users managed by admins (API) and operators (CLI): created, disabled, given new
// passwords, audited without their hashes, and never printed or logged where they should not be.

#include <catch2/catch.hpp>
#include <csignal>
#include <nlohmann/json.hpp>

#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace console_users_test {

using namespace refgate::test;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

const std::string kOrigin = "http://127.0.0.1";

struct Users {
    TestDatabase db;
    std::string admin_token = create_api_token(db.url(), "ada", "admin");
    ServiceProcess service{{.database_url = db.url()}};

    HttpResponse call(const std::string& method, const std::string& target, Headers headers,
                      const std::string& body = "") {
        if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
        return http_request(service.admin_port(), method, target, headers, body);
    }
    HttpResponse as_admin(const std::string& method, const std::string& target,
                          const std::string& body = "", const std::string& etag = "") {
        Headers h{{"Authorization", "Bearer " + admin_token}};
        if (!etag.empty()) h.emplace_back("If-Match", etag);
        return call(method, target, h, body);
    }
    HttpResponse sign_in(const std::string& name, const std::string& password) {
        return call("POST", "/api/v1/session", {{"Origin", kOrigin}},
                    Json{{"name", name}, {"password", password}}.dump());
    }
    // The cookie ("name=id") of a new session.
    std::string cookie(const std::string& name, const std::string& password) {
        auto r = sign_in(name, password);
        INFO(r.body);
        REQUIRE(r.status == 200);
        std::string set = r.header("Set-Cookie");
        return set.substr(0, set.find(';'));
    }
    int session_status(const std::string& cookie) {
        return call("GET", "/api/v1/session", {{"Cookie", cookie}}).status;
    }
    CommandResult cli(const std::vector<std::string>& args, const std::string& input = "") {
        return run_refgate(args, {{"REFGATE_DATABASE_URL", db.url()}}, input);
    }
};

std::string last_line(std::string out) {
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out.substr(out.rfind('\n') + 1);
}

}  // namespace

TEST_CASE("refgate user create prints a generated password once, or reads it from stdin",
          "[console][pg]") {
    Users u;
    auto generated = u.cli({"user", "create", "--name", "eddie", "--role", "editor"});
    REQUIRE(generated.exit_code == 0);
    std::string password = last_line(generated.out);
    CHECK(password.size() == 24);
    CHECK(u.sign_in("eddie", password).status == 200);

    auto given = u.cli({"user", "create", "--name", "vera", "--role", "viewer", "--password-stdin"},
                       "my own secret words\n");
    REQUIRE(given.exit_code == 0);
    CHECK(given.out.find("my own secret words") == std::string::npos);
    CHECK(given.out.find("password") == std::string::npos);
    CHECK(u.sign_in("vera", "my own secret words").status == 200);

    auto list = u.cli({"user", "list"});
    REQUIRE(list.exit_code == 0);
    CHECK(list.out.find("eddie\teditor\tno\t") != std::string::npos);
    CHECK(list.out.find("vera\tviewer\tno\t") != std::string::npos);
    CHECK(list.out.find("argon2") == std::string::npos);
    CHECK(list.out.find(password) == std::string::npos);

    CHECK(u.cli({"user", "create", "--name", "eddie", "--role", "editor"}).exit_code == 1);
    CHECK(u.cli({"user", "create", "--name", "Bad Name", "--role", "editor"}).exit_code == 1);
    CHECK(u.cli({"user", "create", "--name", "short", "--role", "editor", "--password-stdin"},
                "too short")
              .exit_code == 1);
    CHECK(u.cli({"user", "create", "--name", "x", "--role", "owner"}).exit_code == 2);
}

TEST_CASE("refgate user set-password and disable end the user's sessions", "[console][pg]") {
    Users u;
    REQUIRE(u.cli({"user", "create", "--name", "eddie", "--role", "editor", "--password-stdin"},
                  "first password!")
                .exit_code == 0);
    std::string cookie = u.cookie("eddie", "first password!");
    auto set = u.cli({"user", "set-password", "eddie", "--password-stdin"}, "second password!");
    REQUIRE(set.exit_code == 0);
    CHECK(set.out.find("second password!") == std::string::npos);
    CHECK(u.session_status(cookie) == 401);
    CHECK(u.sign_in("eddie", "first password!").status == 401);
    cookie = u.cookie("eddie", "second password!");

    auto generated = u.cli({"user", "set-password", "eddie"});
    REQUIRE(generated.exit_code == 0);
    std::string third = last_line(generated.out);
    CHECK(third.size() == 24);
    cookie = u.cookie("eddie", third);
    CHECK(u.session_status(cookie) == 200);
    REQUIRE(u.cli({"user", "disable", "eddie"}).exit_code == 0);
    CHECK(u.session_status(cookie) == 401);
    CHECK(u.sign_in("eddie", third).status == 401);
    CHECK(u.cli({"user", "disable", "nobody"}).exit_code == 1);
    CHECK(u.cli({"user", "set-password", "nobody"}).exit_code == 1);

    auto audit = Json::parse(u.as_admin("GET", "/api/v1/audit?entity=user&slug=eddie").body);
    REQUIRE(audit["items"].size() == 4);
    CHECK(audit["items"][0]["after"]["disabled"] == true);
    CHECK(audit["items"][3]["action"] == "create");
    CHECK(audit.dump().find("argon2") == std::string::npos);
}

TEST_CASE("admins manage users over the API, audited without password hashes", "[console][pg]") {
    Users u;
    auto created = u.as_admin("POST", "/api/v1/users", R"({"name": "eddie", "role": "editor"})");
    REQUIRE(created.status == 201);
    CHECK(created.header("Location") == "/api/v1/users/eddie");
    auto body = Json::parse(created.body);
    std::string password = body["password"];
    CHECK(password.size() == 24);
    CHECK(body["disabled"] == false);
    CHECK(body["last_sign_in_at"].is_null());
    CHECK(u.as_admin("POST", "/api/v1/users", R"({"name": "eddie", "role": "editor"})").status ==
          409);
    auto given = u.as_admin("POST", "/api/v1/users",
                            R"({"name": "vera", "role": "viewer", "password": "chosen by ada"})");
    REQUIRE(given.status == 201);
    CHECK_FALSE(Json::parse(given.body).contains("password"));
    auto invalid = u.as_admin("POST", "/api/v1/users",
                              R"({"name": "Not Valid", "role": "boss", "password": "short"})");
    CHECK(invalid.status == 422);
    CHECK(Json::parse(invalid.body)["errors"].size() == 3);

    auto list = Json::parse(u.as_admin("GET", "/api/v1/users").body);
    REQUIRE(list["items"].size() == 2);
    CHECK(list["items"][0]["name"] == "eddie");
    CHECK(list["items"][0].size() == 7);  // name, role, disabled, 3 times, version
    CHECK(list.contains("next_cursor"));

    // A session of an editor may not manage users.
    std::string eddie = u.cookie("eddie", password);
    CHECK(u.call("GET", "/api/v1/users", {{"Cookie", eddie}}).status == 403);

    auto etag = u.as_admin("GET", "/api/v1/users/eddie").header("ETag");
    CHECK(u.as_admin("PATCH", "/api/v1/users/eddie", R"({"disabled": true})").status == 428);
    CHECK(u.as_admin("PATCH", "/api/v1/users/eddie", R"({"disabled": true})", "\"99\"").status ==
          412);
    auto disabled = u.as_admin("PATCH", "/api/v1/users/eddie", R"({"disabled": true})", etag);
    REQUIRE(disabled.status == 200);
    CHECK(Json::parse(disabled.body)["disabled"] == true);
    CHECK(u.session_status(eddie) == 401);

    auto audit = u.as_admin("GET", "/api/v1/audit?entity=user").body;
    CHECK(audit.find("argon2") == std::string::npos);
    CHECK(audit.find(password) == std::string::npos);
    CHECK(Json::parse(audit)["items"][0]["actor"] == "ada");
    CHECK(u.as_admin("GET", "/api/v1/users/nobody").status == 404);
    CHECK(u.as_admin("GET", "/api/v1/users/Bad%20Name").status == 404);
}

TEST_CASE("a new password from the user's own session ends only their other sessions",
          "[console][pg]") {
    Users u;
    u.as_admin("POST", "/api/v1/users",
               R"({"name": "root2", "role": "admin", "password": "the first one"})");
    std::string phone = u.cookie("root2", "the first one");
    auto r = u.sign_in("root2", "the first one");
    std::string set = r.header("Set-Cookie");
    std::string laptop = set.substr(0, set.find(';'));
    std::string csrf = Json::parse(r.body)["csrf_token"];
    auto etag = u.as_admin("GET", "/api/v1/users/root2").header("ETag");
    auto patched = u.call("PATCH", "/api/v1/users/root2",
                          {{"Cookie", laptop}, {"X-CSRF-Token", csrf}, {"If-Match", etag}},
                          R"({"password": "the second one"})");
    REQUIRE(patched.status == 200);
    CHECK(u.session_status(laptop) == 200);
    CHECK(u.session_status(phone) == 401);
    auto audit = Json::parse(u.as_admin("GET", "/api/v1/audit?entity=user&slug=root2").body);
    CHECK(audit["items"][0]["actor"] == "user:root2");
    CHECK(audit["items"][0]["after"]["password_changed"] == true);
}

TEST_CASE("the service log never holds a password, a session id or a CSRF token", "[console][pg]") {
    Users u;
    REQUIRE(u.cli({"user", "create", "--name", "eddie", "--role", "editor", "--password-stdin"},
                  "correct horse battery")
                .exit_code == 0);
    u.sign_in("eddie", "wrong horse battery");
    auto r = u.sign_in("eddie", "correct horse battery");
    REQUIRE(r.status == 200);
    std::string set = r.header("Set-Cookie");
    std::string id = set.substr(set.find('=') + 1, 43);
    std::string csrf = Json::parse(r.body)["csrf_token"];
    u.call("DELETE", "/api/v1/session", {{"Cookie", "refgate_session=" + id}});
    u.call("DELETE", "/api/v1/session",
           {{"Cookie", "refgate_session=" + id}, {"X-CSRF-Token", csrf}});
    u.call("GET", "/api/v1/partners", {{"Cookie", "refgate_session=" + id}});
    u.service.stop(SIGTERM);
    std::string log = u.service.log();
    CHECK_FALSE(log.empty());
    for (const std::string& secret :
         {std::string("correct horse battery"), std::string("wrong horse battery"), id, csrf}) {
        INFO(secret);
        CHECK(log.find(secret) == std::string::npos);
    }
}

TEST_CASE("an admin cannot disable or demote itself, nor anyone the last enabled admin (409)",
          "[console][pg]") {
    Users u;
    REQUIRE(u.cli({"user", "create", "--name", "root", "--role", "admin", "--password-stdin"},
                  "keys to the castle")
                .exit_code == 0);
    auto in = u.sign_in("root", "keys to the castle");
    REQUIRE(in.status == 200);
    std::string set = in.header("Set-Cookie");
    std::string cookie = set.substr(0, set.find(';'));
    std::string csrf = Json::parse(in.body)["csrf_token"];
    auto as_root = [&](const std::string& method, const std::string& target,
                       const std::string& body, const std::string& etag) {
        return u.call(method, target,
                      {{"Cookie", cookie}, {"X-CSRF-Token", csrf}, {"If-Match", etag}}, body);
    };
    auto etag = [&](const std::string& name) {
        return u.as_admin("GET", "/api/v1/users/" + name).header("ETag");
    };

    auto self_disable =
        as_root("PATCH", "/api/v1/users/root", R"({"disabled": true})", etag("root"));
    CHECK(self_disable.status == 409);
    CHECK(self_disable.header("Content-Type") == "application/problem+json");
    CHECK(Json::parse(self_disable.body)["detail"].get<std::string>().find("your own account") !=
          std::string::npos);
    auto self_demote =
        as_root("PATCH", "/api/v1/users/root", R"({"role": "editor"})", etag("root"));
    CHECK(self_demote.status == 409);
    CHECK(Json::parse(self_demote.body)["detail"].get<std::string>().find("your own role") !=
          std::string::npos);

    // An admin token is no user, and still may not remove the last enabled admin.
    auto last = u.as_admin("PATCH", "/api/v1/users/root", R"({"disabled": true})", etag("root"));
    CHECK(last.status == 409);
    std::string detail = Json::parse(last.body)["detail"];
    CHECK(detail.find("last enabled admin") != std::string::npos);
    CHECK(detail.find("refgate user disable root") != std::string::npos);
    CHECK(u.as_admin("PATCH", "/api/v1/users/root", R"({"role": "viewer"})", etag("root")).status ==
          409);
    auto root = Json::parse(u.as_admin("GET", "/api/v1/users/root").body);
    CHECK(root["role"] == "admin");
    CHECK(root["disabled"] == false);
    CHECK(u.session_status(cookie) == 200);

    // With a second admin, root may disable that one, and still not itself.
    REQUIRE(u.as_admin("POST", "/api/v1/users", R"({"name": "deputy", "role": "admin"})").status ==
            201);
    CHECK(as_root("PATCH", "/api/v1/users/root", R"({"disabled": true})", etag("root")).status ==
          409);
    CHECK(
        as_root("PATCH", "/api/v1/users/deputy", R"({"role": "editor"})", etag("deputy")).status ==
        200);
    CHECK(u.as_admin("PATCH", "/api/v1/users/root", R"({"disabled": true})", etag("root")).status ==
          409);

    // The CLI is the recovery path: it disables the last admin too, and warns.
    auto cli = u.cli({"user", "disable", "root"});
    CHECK(cli.exit_code == 0);
    CHECK(cli.err.find("warning") != std::string::npos);
    CHECK(cli.err.find("last enabled admin") != std::string::npos);
    CHECK(u.session_status(cookie) == 401);
    auto quiet = u.cli({"user", "disable", "deputy"});
    CHECK(quiet.exit_code == 0);
    CHECK(quiet.err.find("last enabled admin") == std::string::npos);
}

}  // namespace console_users_test
