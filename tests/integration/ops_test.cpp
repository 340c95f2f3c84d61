// What an operator meets: listeners that cannot clash, signals, `check-config`, Redis with a
// password, where the state files live, `--version`. Each runs the refgate binary.

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace ops_test {

using namespace refgate::test;
using namespace std::chrono_literals;

namespace {

// Human clicks on /go/alpha, each answered 302.
void click(int port, int count) {
    for (int i = 0; i < count; ++i) {
        auto r = http_get(port, "/go/alpha", {{"User-Agent", kBrowser}});
        REQUIRE(r.status == 302);
    }
}

std::int64_t total_clicks(TestDatabase& db) {
    auto text = db.scalar("SELECT coalesce(sum(clicks), 0) FROM refgate_clicks");
    return text.empty() ? 0 : std::stoll(text);
}

// `refgate flush` against `redis_url`; every count waiting there moves to PostgreSQL.
void flush(const std::string& database_url, const std::string& redis_url) {
    auto r = run_refgate(
        {"flush"}, {{"REFGATE_DATABASE_URL", database_url}, {"REFGATE_REDIS_URL", redis_url}});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
}

// Waits for a service that should stop by itself; its exit code (SIGKILLed and failed if not).
int exit_code_of(ServiceProcess& service, std::chrono::milliseconds timeout = 15s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (service.running() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    return service.stop(SIGKILL);
}

std::size_t count_of(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
        ++n;
    return n;
}

}  // namespace

TEST_CASE("both listeners on one address are a config error for check-config and serve",
          "[ops][config]") {
    auto port = std::to_string(unused_port());
    for (const auto& [listen, admin] : std::vector<std::pair<std::string, std::string>>{
             {"127.0.0.1:" + port, "127.0.0.1:" + port},
             {"0.0.0.0:" + port, "127.0.0.1:" + port},
             {"[::]:" + port, "127.0.0.1:" + port}}) {
        for (const char* command : {"check-config", "serve"}) {
            auto r = run_refgate({command},
                                 {{"REFGATE_LISTEN", listen}, {"REFGATE_ADMIN_LISTEN", admin}});
            INFO(command << " " << listen << " " << admin << ": " << r.err);
            CHECK(r.exit_code == 2);
            CHECK(r.err.find("REFGATE_LISTEN") != std::string::npos);
            CHECK(r.err.find("REFGATE_ADMIN_LISTEN") != std::string::npos);
        }
    }
}

TEST_CASE("a second refgate on a port that another refgate holds stops with one clear line",
          "[ops][listen]") {
    TestDatabase db;
    ServiceProcess first({.database_url = db.url()});
    std::string taken = "127.0.0.1:" + std::to_string(first.port());

    ServiceProcess second(
        {.database_url = db.url(), .env = {{"REFGATE_LISTEN", taken}}, .wait_ready = false});
    CHECK(exit_code_of(second) == 1);
    INFO(second.log());
    CHECK(count_of(second.log(), "listen_failed") == 1);
    CHECK(second.log().find("in use by another process") != std::string::npos);
    // The first one never shared its connections and still answers.
    CHECK(http_get(first.port(), "/healthz").status == 200);

    SECTION("unless both share the port on purpose") {
        ServiceProcess sharing(
            {.database_url = db.url(),
             .env = {{"REFGATE_LISTEN", taken}, {"REFGATE_REUSE_PORT", "true"}}});
        CHECK(sharing.port() == first.port());
        CHECK(sharing.stop(SIGTERM) == 0);
    }
    CHECK(first.stop(SIGTERM) == 0);
}

TEST_CASE("SIGHUP reloads the snapshot and the service keeps serving and counting",
          "[ops][signals]") {
    TestDatabase db;
    import_demo_links(db.url());
    PrivateRedis redis;
    ServiceProcess service({.database_url = db.url(), .redis_url = redis.url()});
    click(service.port(), 3);
    REQUIRE(service.wait_for_log("snapshot_loaded"));
    auto loads_before = count_of(service.log(), "\"snapshot_loaded\"");

    ::kill(service.pid(), SIGHUP);
    REQUIRE(service.wait_for_log("reload_requested"));
    // The reload happens although nothing changed in PostgreSQL.
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (count_of(service.log(), "\"snapshot_loaded\"") == loads_before &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    CHECK(count_of(service.log(), "\"snapshot_loaded\"") > loads_before);
    REQUIRE(service.running());
    click(service.port(), 2);

    CHECK(service.stop(SIGTERM) == 0);
    flush(db.url(), redis.url());
    CHECK(total_clicks(db) == 5);
}

TEST_CASE("SIGQUIT stops gracefully like SIGTERM: exit 0 and every click reaches PostgreSQL",
          "[ops][signals]") {
    TestDatabase db;
    import_demo_links(db.url());
    PrivateRedis redis;
    ServiceProcess service({.database_url = db.url(), .redis_url = redis.url()});
    click(service.port(), 4);
    CHECK(service.stop(SIGQUIT) == 0);
    CHECK(service.log().find("SIGQUIT") != std::string::npos);
    flush(db.url(), redis.url());
    CHECK(total_clicks(db) == 4);
}

TEST_CASE("check-config prints every setting and no password", "[ops][config]") {
    auto r = run_refgate(
        {"check-config"},
        {{"REFGATE_DATABASE_URL", "postgresql://u:hunter2@h/db?sslmode=require&password=hunter3"},
         {"REFGATE_REDIS_URL", "redis://counter:hunter4@127.0.0.1:6379/0"},
         {"REFGATE_STATE_DIR", "/srv/refgate-state"}});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("hunter") == std::string::npos);
    auto json = nlohmann::json::parse(r.out.substr(0, r.out.rfind('}') + 1));
    for (const char* key : {"listen", "spill_file", "trusted_proxies", "public_base_url",
                            "reuse_port", "state_dir", "admin_cors_origins", "admin_db_wait_ms"})
        CHECK(json.contains(key));
    CHECK(json.size() >= 31);
    CHECK(json["redis_url"] == "redis://counter:***@127.0.0.1:6379/0");
    // Relative file names live in the state directory.
    CHECK(json["snapshot_file"] == "/srv/refgate-state/refgate-snapshot.json");
    CHECK(json["spill_file"] == "/srv/refgate-state/refgate-spill.json");

    auto bad = run_refgate({"check-config"}, {{"REFGATE_REDIS_URL", "redis://:hunter5@h:port/0"}});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("REFGATE_REDIS_URL") != std::string::npos);
    CHECK(bad.err.find("hunter5") == std::string::npos);

    auto tls = run_refgate({"check-config"}, {{"REFGATE_REDIS_URL", "rediss://h:6380/0"}});
    CHECK(tls.exit_code == 2);
    CHECK(tls.err.find("stunnel") != std::string::npos);
}

TEST_CASE(
    "Redis with a password or an ACL user counts every click, and a wrong password stops start-up",
    "[ops][redis]") {
    TestDatabase db;
    import_demo_links(db.url());
    PrivateRedis redis;
    redis.cli("ACL SETUSER counter on '>p@ss:w/rd' '~*' '&*' +@all");
    redis.cli("CONFIG SET requirepass s3cret");
    std::string host = "127.0.0.1:" + std::to_string(redis.port());
    std::string default_user = "redis://:s3cret@" + host + "/0";
    std::string acl_user = "redis://counter:p%40ss%3Aw%2Frd@" + host + "/0";

    ServiceProcess service({.database_url = db.url(), .redis_url = default_user});
    click(service.port(), 3);
    CHECK(service.stop(SIGTERM) == 0);
    CHECK(service.log().find("redis_unavailable") == std::string::npos);
    flush(db.url(), acl_user);
    CHECK(total_clicks(db) == 3);

    ServiceProcess wrong({.database_url = db.url(),
                          .redis_url = "redis://counter:not-it@" + host + "/0",
                          .wait_ready = false});
    CHECK(exit_code_of(wrong) == 1);
    INFO(wrong.log());
    CHECK(wrong.log().find("redis_auth_failed") != std::string::npos);
    CHECK(wrong.log().find("not-it") == std::string::npos);
}

TEST_CASE("the spill file is readable by its owner only", "[ops][clicks]") {
    TestDatabase db;
    import_demo_links(db.url());
    TempDir dir;
    std::string spill = dir.file("spill.json");
    ServiceProcess service(
        {.database_url = db.url(),
         .redis_url = "redis://127.0.0.1:" + std::to_string(unused_port()) + "/0",
         .env = {{"REFGATE_SPILL_FILE", spill}}});
    click(service.port(), 2);
    CHECK(service.stop(SIGTERM) == 0);
    struct stat st {};
    REQUIRE(::stat(spill.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("serve creates its state directory owner-only and logs it with the version first",
          "[ops]") {
    TestDatabase db;
    TempDir dir;
    std::string state = dir.file("state/refgate");
    ServiceProcess service({.database_url = db.url(),
                            .env = {{"REFGATE_STATE_DIR", state},
                                    {"REFGATE_SNAPSHOT_FILE", "snapshot.json"},
                                    {"REFGATE_SPILL_FILE", "spill.json"}}});
    struct stat st {};
    REQUIRE(::stat(state.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    auto first_line = nlohmann::json::parse(service.log().substr(0, service.log().find('\n')));
    CHECK(first_line["msg"] == "starting");
    CHECK(first_line["state_dir"] == state);
    CHECK(first_line.contains("version"));
    CHECK(first_line.contains("commit"));
    CHECK(service.stop(SIGTERM) == 0);
}

TEST_CASE("refgate --version prints the version and commit", "[ops]") {
    auto r = run_refgate({"--version"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.rfind("refgate ", 0) == 0);
    CHECK(r.out.find(" (") != std::string::npos);
    CHECK(r.out.find(")\n") != std::string::npos);
}

}  // namespace ops_test
