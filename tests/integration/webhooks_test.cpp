// Webhooks (issue 44) end to end: the refgate binary delivers its outbox to a local HTTPS receiver
// (tests/webhooks/receiver.py, a CA of its own) that it reaches through REFGATE_WEBHOOK_RESOLVE.

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "linkcheck_fixture.hpp"
#include "refgate/domain/time.hpp"
#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"
#include "support/test_env.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace webhooks_test {

using namespace refgate::test;
using namespace std::chrono_literals;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

// The receiver, started once for the file's tests and stopped at exit.
class Receiver : public linkcheck_fixture::LocalPythonServer {
  public:
    Receiver() : LocalPythonServer("tests/webhooks/receiver.py") {}
    std::string url(const std::string& path) const {
        return "https://hooks.test:" + std::to_string(port()) + path;
    }
    // Every request so far whose body names `marker` (each test's own partner or link slugs).
    std::vector<Json> requests(const std::string& marker) const {
        std::vector<Json> out;
        std::istringstream in(read_text(dir_.file("requests.jsonl")));
        for (std::string line; std::getline(in, line);) {
            if (line.empty()) continue;
            auto r = Json::parse(line);
            if (r["body"].get<std::string>().find(marker) != std::string::npos) out.push_back(r);
        }
        return out;
    }
    // Waits until at least `n` requests name `marker`.
    std::vector<Json> wait_for(const std::string& marker, std::size_t n,
                               std::chrono::milliseconds timeout = 15s) const {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        auto got = requests(marker);
        while (got.size() < n && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(50ms);
            got = requests(marker);
        }
        return got;
    }
};

Receiver& receiver() {
    static Receiver instance;
    REQUIRE(instance.port() != 0);
    return instance;
}

EnvPairs webhook_env(const Receiver& r, EnvPairs more = {}) {
    EnvPairs env{
        {"REFGATE_WEBHOOK_CA_FILE", r.ca_file()},
        {"REFGATE_WEBHOOK_RESOLVE", "hooks.test:" + std::to_string(r.port()) + ":127.0.0.2"}};
    env.insert(env.end(), more.begin(), more.end());
    return env;
}

Headers json_headers(const std::string& token, const std::string& etag = "") {
    Headers h{{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
    if (!etag.empty()) h.emplace_back("If-Match", etag);
    return h;
}

// Creates a webhook through the API; returns its answer (with the secret).
Json create_webhook(int admin_port, const std::string& admin, const std::string& url,
                    const Json& events) {
    auto r = http_request(admin_port, "POST", "/api/v1/webhooks", json_headers(admin),
                          Json{{"url", url}, {"events", events}}.dump());
    INFO(r.body);
    REQUIRE(r.status == 201);
    return Json::parse(r.body);
}

void create_partner(int admin_port, const std::string& token, const std::string& slug) {
    auto p = http_request(admin_port, "POST", "/api/v1/partners", json_headers(token),
                          Json{{"slug", slug},
                               {"name", "Partner " + slug},
                               {"ref_param", "ref"},
                               {"ref_code", "picks42"},
                               {"allowed_domains", {"tailscale.com"}}}
                              .dump());
    INFO(p.body);
    REQUIRE(p.status == 201);
}

void create_link(int admin_port, const std::string& token, const std::string& slug,
                 const std::string& partner) {
    auto l = http_request(
        admin_port, "POST", "/api/v1/links", json_headers(token),
        Json{{"slug", slug}, {"partner", partner}, {"destination", "https://tailscale.com/" + slug}}
            .dump());
    INFO(l.body);
    REQUIRE(l.status == 201);
}

std::string unbase64(const std::string& text) {
    std::string out(3 * text.size() / 4, '\0');
    int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(text.data()),
                            static_cast<int>(text.size()));
    REQUIRE(n >= 0);
    std::size_t pad = text.ends_with("==") ? 2 : text.ends_with("=") ? 1 : 0;
    out.resize(static_cast<std::size_t>(n) - pad);
    return out;
}

// The Standard Webhooks signature, computed here on its own: v1, + base64 of HMAC-SHA256 over
// id.timestamp.body with the secret's decoded bytes.
std::string expected_signature(const std::string& secret, const Json& request) {
    std::string key = unbase64(secret.substr(6));
    std::string message = request["headers"]["webhook-id"].get<std::string>() + "." +
                          request["headers"]["webhook-timestamp"].get<std::string>() + "." +
                          request["body"].get<std::string>();
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &size);
    std::string b64(4 * ((size + 2) / 3), '\0');
    EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()), mac, static_cast<int>(size));
    return "v1," + b64;
}

// docs/webhooks.md's Python receiver, run as it is on a delivered request: "True" or "False".
std::string run_docs_receiver(const std::string& secret, const Json& request) {
    std::string doc = read_text((source_root() / "docs/webhooks.md").string());
    auto start = doc.find("<!-- receiver -->\n```python\n");
    REQUIRE(start != std::string::npos);
    start = doc.find('\n', doc.find("```python", start)) + 1;
    std::string snippet = doc.substr(start, doc.find("```", start) - start);
    TempDir dir;
    std::ofstream(dir.file("request.json")) << request.dump();
    std::ofstream(dir.file("check.py"))
        << snippet << "\n\nimport json, sys\n"
        << "r = json.load(open(sys.argv[1]))\n"
        << "print(verify(sys.argv[2], r['headers'], r['body'].encode()))\n";
    std::string out;
    int rc = run_shell(
        "python3 " + dir.file("check.py") + " " + dir.file("request.json") + " '" + secret + "'",
        out);
    INFO(out);
    REQUIRE(rc == 0);
    return out.substr(0, out.find('\n'));
}

std::vector<std::string> types_of(const std::vector<Json>& requests) {
    std::vector<std::string> types;
    for (const auto& r : requests)
        types.push_back(Json::parse(r["body"].get<std::string>())["type"]);
    return types;
}

Json deliveries(int admin_port, const std::string& admin, std::int64_t id) {
    auto r =
        http_request(admin_port, "GET", "/api/v1/webhooks/" + std::to_string(id) + "/deliveries",
                     json_headers(admin));
    INFO(r.body);
    REQUIRE(r.status == 200);
    return Json::parse(r.body)["items"];
}

}  // namespace

TEST_CASE("webhooks receive signed events of partner and link changes, in order",
          "[webhooks][pg]") {
    auto& rx = receiver();
    TestDatabase db;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    std::string editor = create_api_token(db.url(), "eddie", "editor");
    ServiceProcess svc{{.database_url = db.url(), .env = webhook_env(rx)}};

    // Editors may not manage webhooks.
    auto refused = http_request(svc.admin_port(), "GET", "/api/v1/webhooks", json_headers(editor));
    CHECK(refused.status == 403);

    Json hook = create_webhook(svc.admin_port(), admin, rx.url("/ok"), {"*"});
    std::string secret = hook["secret"];
    CHECK(std::regex_match(secret, std::regex("whsec_[A-Za-z0-9+/]{43}=")));
    CHECK(unbase64(secret.substr(6)).size() == 32);
    auto id = hook["id"].get<std::int64_t>();
    // Shown once: neither the object nor the list carries it afterwards.
    auto got = http_request(svc.admin_port(), "GET", "/api/v1/webhooks/" + std::to_string(id),
                            json_headers(admin));
    REQUIRE(got.status == 200);
    CHECK_FALSE(Json::parse(got.body).contains("secret"));
    CHECK(got.body.find(secret) == std::string::npos);

    create_partner(svc.admin_port(), editor, "signed-co");
    create_link(svc.admin_port(), editor, "signed-pick", "signed-co");
    auto patched = http_request(svc.admin_port(), "PATCH", "/api/v1/links/signed-pick",
                                json_headers(editor, "\"1\""),
                                R"({"destination": "https://tailscale.com/changed"})");
    INFO(patched.body);
    REQUIRE(patched.status == 200);

    auto requests = rx.wait_for("signed-", 3);
    REQUIRE(requests.size() == 3);
    CHECK(types_of(requests) ==
          std::vector<std::string>{"partner.created", "link.created", "link.updated"});
    std::set<std::string> ids;
    for (const auto& r : requests) {
        INFO(r.dump());
        CHECK(r["path"] == "/ok");
        CHECK(r["headers"]["content-type"] == "application/json");
        CHECK(r["headers"]["webhook-signature"] == expected_signature(secret, r));
        auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
        CHECK(std::abs(now - std::stoll(r["headers"]["webhook-timestamp"].get<std::string>())) <
              60);
        ids.insert(r["headers"]["webhook-id"].get<std::string>());
        auto body = Json::parse(r["body"].get<std::string>());
        CHECK(body.size() == 3);
        CHECK(body["timestamp"].get<std::string>().ends_with("Z"));
        CHECK(body["data"].is_object());
    }
    CHECK(ids.size() == 3);
    auto link = Json::parse(requests[2]["body"].get<std::string>())["data"];
    CHECK(link["link"]["slug"] == "signed-pick");
    CHECK(link["link"]["destination"] == "https://tailscale.com/changed");
    CHECK(link["actor"] == "eddie");

    // docs/webhooks.md's receiver accepts it, and refuses a changed body or another secret.
    CHECK(run_docs_receiver(secret, requests[0]) == "True");
    Json tampered = requests[0];
    tampered["body"] = tampered["body"].get<std::string>() + " ";
    CHECK(run_docs_receiver(secret, tampered) == "False");
    CHECK(run_docs_receiver("whsec_" + std::string(43, 'A') + "=", requests[0]) == "False");

    // The delivery log, and "send again" of a delivered event.
    Json log;
    auto deadline = std::chrono::steady_clock::now() + 5s;
    do {
        log = deliveries(svc.admin_port(), admin, id);
        std::this_thread::sleep_for(50ms);
    } while ((log.size() < 3 || log[0]["status"] != "delivered") &&
             std::chrono::steady_clock::now() < deadline);
    REQUIRE(log.size() == 3);
    CHECK(log[0]["type"] == "link.updated");
    CHECK(log[0]["status"] == "delivered");
    CHECK(log[0]["attempt"] == 1);
    CHECK(log[0]["response_status"] == 200);
    CHECK(log[0]["duration_ms"].is_number());
    auto again = http_request(svc.admin_port(), "POST",
                              "/api/v1/webhooks/" + std::to_string(id) + "/deliveries/" +
                                  std::to_string(log[2]["id"].get<std::int64_t>()) + "/retry",
                              json_headers(admin));
    INFO(again.body);
    REQUIRE(again.status == 200);
    auto resent = rx.wait_for("signed-", 4);
    REQUIRE(resent.size() == 4);
    CHECK(resent[3]["headers"]["webhook-id"] == requests[0]["headers"]["webhook-id"]);

    // A rotated secret signs what follows; the old one no longer verifies.
    auto rotated =
        http_request(svc.admin_port(), "POST", "/api/v1/webhooks/" + std::to_string(id) + "/secret",
                     json_headers(admin));
    INFO(rotated.body);
    REQUIRE(rotated.status == 200);
    std::string new_secret = Json::parse(rotated.body)["secret"];
    CHECK(new_secret != secret);
    create_link(svc.admin_port(), editor, "signed-second", "signed-co");
    auto after = rx.wait_for("signed-second", 1);
    REQUIRE(after.size() == 1);
    CHECK(after[0]["headers"]["webhook-signature"] == expected_signature(new_secret, after[0]));
    CHECK(after[0]["headers"]["webhook-signature"] != expected_signature(secret, after[0]));
    CHECK(db.scalar("SELECT count(*) FROM refgate_audit WHERE entity = 'webhook'") == "3");
    CHECK(db.scalar("SELECT count(*) FROM refgate_audit WHERE entity = 'webhook' AND "
                    "(before::text LIKE '%whsec_%' OR after::text LIKE '%whsec_%')") == "0");
}

TEST_CASE("a delivery answered 500 is retried within seconds, and later events wait for it",
          "[webhooks][pg]") {
    auto& rx = receiver();
    TestDatabase db;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    ServiceProcess svc{{.database_url = db.url(),
                        .env = webhook_env(rx, {{"REFGATE_WEBHOOK_RETRY_BASE_MS", "1000"}})}};
    Json hook = create_webhook(svc.admin_port(), admin, rx.url("/flaky"),
                               {"partner.created", "link.created"});
    create_partner(svc.admin_port(), admin, "retry-co");
    create_link(svc.admin_port(), admin, "retry-one", "retry-co");
    create_link(svc.admin_port(), admin, "retry-two", "retry-co");

    auto requests = rx.wait_for("retry-", 6, 30s);
    REQUIRE(requests.size() == 6);
    // Each event is answered 500 once then 200, and the next one is sent only after that.
    CHECK(types_of(requests) == std::vector<std::string>{"partner.created", "partner.created",
                                                         "link.created", "link.created",
                                                         "link.created", "link.created"});
    for (std::size_t i = 0; i < 6; i += 2)
        CHECK(requests[i]["headers"]["webhook-id"] == requests[i + 1]["headers"]["webhook-id"]);
    CHECK(requests[2]["body"].get<std::string>().find("retry-one") != std::string::npos);
    CHECK(requests[4]["body"].get<std::string>().find("retry-two") != std::string::npos);
    auto log = deliveries(svc.admin_port(), admin, hook["id"]);
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (log[0]["status"] != "delivered" && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(50ms);
        log = deliveries(svc.admin_port(), admin, hook["id"]);
    }
    for (const auto& d : log) {
        INFO(d.dump());
        CHECK(d["status"] == "delivered");
        CHECK(d["attempt"] == 2);
    }
    auto metrics = http_get(svc.admin_port(), "/metrics").body;
    CHECK(metrics.find("refgate_webhook_deliveries_total{outcome=\"delivered\"} 3") !=
          std::string::npos);
    CHECK(metrics.find("refgate_webhook_deliveries_total{outcome=\"retry\"} 3") !=
          std::string::npos);
}

TEST_CASE(
    "an event committed but not delivered when the instance is killed is sent after the "
    "restart",
    "[webhooks][pg]") {
    auto& rx = receiver();
    TestDatabase db;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    auto svc = std::make_unique<ServiceProcess>(
        ServiceOptions{.database_url = db.url(), .env = webhook_env(rx)});
    // The receiver holds each request for 3 s: the instance dies while it waits for the answer.
    create_webhook(svc->admin_port(), admin, rx.url("/hold"), {"partner.created"});
    create_partner(svc->admin_port(), admin, "killed-co");
    auto first = rx.wait_for("killed-co", 1);
    REQUIRE(first.size() == 1);
    REQUIRE(svc->stop(SIGKILL) == 128 + SIGKILL);
    svc.reset();
    CHECK(db.scalar("SELECT status FROM refgate_webhook_deliveries") == "pending");

    ServiceProcess restarted{{.database_url = db.url(), .env = webhook_env(rx)}};
    auto again = rx.wait_for("killed-co", 2);
    REQUIRE(again.size() == 2);
    CHECK(again[1]["headers"]["webhook-id"] == first[0]["headers"]["webhook-id"]);
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (db.scalar("SELECT status FROM refgate_webhook_deliveries") != "delivered" &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(100ms);
    CHECK(db.scalar("SELECT status FROM refgate_webhook_deliveries") == "delivered");
}

TEST_CASE("a scheduled code emits partner.code_changed at its second, once", "[webhooks][pg]") {
    auto& rx = receiver();
    TestDatabase db;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    ServiceProcess a{{.database_url = db.url(), .env = webhook_env(rx)}};
    ServiceProcess b{{.database_url = db.url(), .env = webhook_env(rx)}};
    create_webhook(a.admin_port(), admin, rx.url("/ok"), {"partner.code_changed"});
    create_partner(a.admin_port(), admin, "sched-co");
    auto at = std::chrono::ceil<std::chrono::seconds>(std::chrono::system_clock::now() + 3s);
    std::string at_text = refgate::domain::format_rfc3339(at);
    auto scheduled = http_request(a.admin_port(), "PATCH", "/api/v1/partners/sched-co",
                                  json_headers(admin, "\"1\""),
                                  Json{{"ref_code", "winter-26"}, {"valid_from", at_text}}.dump());
    INFO(scheduled.body);
    REQUIRE(scheduled.status == 200);
    CHECK(rx.requests("sched-co").empty());  // scheduling changes no code yet

    auto requests = rx.wait_for("sched-co", 1, 10s);
    REQUIRE(requests.size() == 1);
    auto body = Json::parse(requests[0]["body"].get<std::string>());
    CHECK(body["type"] == "partner.code_changed");
    CHECK(body["data"]["partner"] == "sched-co");
    CHECK(body["data"]["ref_code"] == "winter-26");
    CHECK(body["data"]["previous_ref_code"] == "picks42");
    CHECK(body["data"]["scheduled"] == true);
    CHECK(body["data"]["effective_at"] == at_text);
    // Written when the switch took effect: within two seconds of its second.
    auto written =
        refgate::domain::parse_rfc3339(body["timestamp"].get<std::string>().substr(0, 19) + "Z");
    REQUIRE(written);
    CHECK(*written >= at);
    CHECK(*written <= at + 2s);
    std::this_thread::sleep_for(2s);  // neither instance emits it twice
    CHECK(rx.requests("sched-co").size() == 1);
    CHECK(db.scalar("SELECT count(*) FROM refgate_webhook_events WHERE type = "
                    "'partner.code_changed'") == "1");
}

TEST_CASE("private, loopback and metadata addresses are refused at save and at delivery",
          "[webhooks][pg]") {
    auto& rx = receiver();
    TestDatabase db;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    ServiceProcess svc{{.database_url = db.url(), .env = webhook_env(rx)}};
    for (std::string url : {"https://127.0.0.1:" + std::to_string(rx.port()) + "/ok",
                            std::string("https://10.1.2.3/"),
                            std::string("https://169.254.169.254/latest/meta-data/"),
                            std::string("https://[::1]/"), std::string("https://localhost/"),
                            "http://hooks.test:" + std::to_string(rx.port()) + "/ok",
                            std::string("https://user:pw@hooks.test/")}) {
        auto r = http_request(svc.admin_port(), "POST", "/api/v1/webhooks", json_headers(admin),
                              Json{{"url", url}, {"events", {"*"}}}.dump());
        INFO(url << " " << r.body);
        CHECK(r.status == 422);
        CHECK(r.body.find("\"url\"") != std::string::npos);
    }
    CHECK(db.scalar("SELECT count(*) FROM refgate_webhooks") == "0");
    auto bad_events =
        http_request(svc.admin_port(), "POST", "/api/v1/webhooks", json_headers(admin),
                     Json{{"url", rx.url("/ok")}, {"events", {"link.nope"}}}.dump());
    CHECK(bad_events.status == 422);

    // A row that names a loopback address (written around the API, as an old row or a changed
    // DNS answer would be) is refused when delivering: nothing reaches the receiver.
    db.exec("INSERT INTO refgate_webhooks (url, events, secret) VALUES ('https://127.0.0.2:" +
            std::to_string(rx.port()) + "/ok', '{*}', 'whsec_" + std::string(43, 'A') + "=')");
    create_partner(svc.admin_port(), admin, "ssrf-co");
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (db.scalar("SELECT coalesce(error, '') FROM refgate_webhook_deliveries").empty() &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(100ms);
    CHECK(db.scalar("SELECT error FROM refgate_webhook_deliveries").find("refused") == 0);
    CHECK(db.scalar("SELECT status FROM refgate_webhook_deliveries") == "pending");
    CHECK(rx.requests("ssrf-co").empty());
}

TEST_CASE("a webhook failing for the give-up window is disabled, audited and counted",
          "[webhooks][pg]") {
    auto& rx = receiver();
    TestDatabase db;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    ServiceProcess svc{{.database_url = db.url(),
                        .env = webhook_env(rx, {{"REFGATE_WEBHOOK_RETRY_BASE_MS", "200"},
                                                {"REFGATE_WEBHOOK_GIVE_UP", "3s"}})}};
    Json hook = create_webhook(svc.admin_port(), admin, rx.url("/fail"), {"partner.created"});
    std::string path = "/api/v1/webhooks/" + std::to_string(hook["id"].get<std::int64_t>());
    create_partner(svc.admin_port(), admin, "failing-co");

    Json now;
    auto deadline = std::chrono::steady_clock::now() + 20s;
    do {
        std::this_thread::sleep_for(200ms);
        now = Json::parse(http_request(svc.admin_port(), "GET", path, json_headers(admin)).body);
    } while (now["active"] == true && std::chrono::steady_clock::now() < deadline);
    INFO(now.dump());
    CHECK(now["active"] == false);
    CHECK(now["disabled_at"].is_string());
    CHECK(now["disabled_reason"].get<std::string>().find("answered 500") != std::string::npos);
    CHECK(rx.requests("failing-co").size() >= 3);
    CHECK(db.scalar("SELECT count(*) FROM refgate_audit WHERE entity = 'webhook' AND actor = "
                    "'webhooks' AND after->>'active' = 'false'") == "1");
    CHECK(db.scalar("SELECT status FROM refgate_webhook_deliveries") == "failed");
    auto metrics = http_get(svc.admin_port(), "/metrics").body;
    CHECK(metrics.find("refgate_webhooks_disabled_total 1") != std::string::npos);
    CHECK(metrics.find("refgate_webhook_deliveries_total{outcome=\"failed\"} 1") !=
          std::string::npos);
    // Disabled, it takes no new events.
    std::size_t before = rx.requests("-co").size();
    create_partner(svc.admin_port(), admin, "later-co");
    std::this_thread::sleep_for(1500ms);
    CHECK(rx.requests("later-co").empty());
    CHECK(rx.requests("-co").size() == before);
}

TEST_CASE("clicks.hourly reports each link's clicks per class once its hour has closed",
          "[webhooks][pg]") {
    auto& rx = receiver();
    TestDatabase db;
    // A Redis of its own: the suite's shared one holds other tests' click buckets (ctest runs
    // several at once), which this service's flusher would take and count into its hour.
    PrivateRedis redis;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    ServiceProcess svc{{.database_url = db.url(),
                        .redis_url = redis.url(),
                        .env = webhook_env(rx, {{"REFGATE_FLUSH_INTERVAL_MS", "300"},
                                                {"REFGATE_BUCKET_SECONDS", "1"}})}};
    create_webhook(svc.admin_port(), admin, rx.url("/ok"), {"clicks.hourly"});
    create_partner(svc.admin_port(), admin, "hourly-co");
    create_link(svc.admin_port(), admin, "hourly-pick", "hourly-co");
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (http_get(svc.port(), "/go/hourly-pick").status != 302 &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    for (int i = 0; i < 3; ++i)
        REQUIRE(http_get(svc.port(), "/go/hourly-pick", {{"User-Agent", kBrowser}}).status == 302);
    REQUIRE(http_get(svc.port(), "/go/hourly-pick", {{"User-Agent", "curl/8.0"}}).status == 302);

    // The flushes sum the hour's clicks per link (the three readers', the probe's and curl's as
    // bots); nothing is sent while the hour is open.
    std::string sums =
        "SELECT coalesce(sum(human), 0) || '/' || coalesce(sum(bot), 0) FROM "
        "refgate_webhook_clicks_hourly";
    deadline = std::chrono::steady_clock::now() + 15s;
    while (db.scalar(sums) != "3/2" && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(100ms);
    INFO("stored: " << db.scalar("SELECT coalesce(sum(human), 0) || '/' || coalesce(sum(bot), 0) "
                                 "FROM refgate_click_counts"));
    REQUIRE(db.scalar(sums) == "3/2");
    std::this_thread::sleep_for(1s);
    CHECK(rx.requests("hourly-pick").empty());

    // The hour closes (moved back an hour, rather than waiting for the clock): one event. Read
    // in the same statement: the service may send and delete the row at once.
    std::string hour = db.scalar(
        "UPDATE refgate_webhook_clicks_hourly SET hour = hour - interval '1 hour' RETURNING "
        "to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:00:00\"Z\"')");
    REQUIRE(!hour.empty());
    auto requests = rx.wait_for("hourly-pick", 1);
    REQUIRE(requests.size() == 1);
    auto body = Json::parse(requests[0]["body"].get<std::string>());
    CHECK(body["type"] == "clicks.hourly");
    CHECK(body["data"] ==
          Json{{"link", "hourly-pick"},
               {"hour", hour},
               {"clicks", {{"human", 3}, {"bot", 2}, {"prefetch", 0}, {"scanner", 0}}}});
    CHECK(db.scalar("SELECT count(*) FROM refgate_webhook_clicks_hourly") == "0");
}

TEST_CASE(
    "a confirmed change of a link's health is queued as link.health_changed with its "
    "branch and finding",
    "[webhooks][pg][linkhealth]") {
    auto& s = linkcheck_fixture::server();
    TestDatabase db;
    REQUIRE(import_document(db.url(), linkcheck_fixture::document(s.port(), {"gone"})));
    db.exec(
        "INSERT INTO refgate_webhooks (url, events, secret) VALUES ('https://hooks.test/x', "
        "'{link.health_changed}', 'whsec_" +
        std::string(43, 'A') + "=')");
    auto env = linkcheck_fixture::checker_env(db, s);
    env.emplace_back("REFGATE_LINKCHECK_CONFIRM_AFTER", "0s");
    for (int i = 0; i < 2; ++i) {
        auto r = run_refgate({"check-links"}, env);
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
    }
    // Written in the check's transaction: one event, for the confirmed change only.
    CHECK(db.scalar("SELECT count(*) FROM refgate_webhook_events") == "1");
    auto body = Json::parse(
        db.scalar("SELECT body FROM refgate_webhook_events WHERE type = 'link.health_changed'"));
    CHECK(body["data"] == Json{{"link", "gone"},
                               {"branch", "default"},
                               {"finding", "broken"},
                               {"detail", "http_404"},
                               {"previous_finding", "ok"}});
}

}  // namespace webhooks_test
