// Scheduled referral codes: PATCH ref_code with valid_from, and every instance switches at that
// second from its own snapshot, with or without PostgreSQL; the code history then shows the code
// live from that moment exactly.

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "refgate/domain/time.hpp"
#include "support/http_client.hpp"
#include "support/private_postgres.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace code_schedule_test {

using namespace refgate::test;
using namespace std::chrono_literals;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;
using SysClock = std::chrono::system_clock;

namespace {

Headers editing(const std::string& token, const std::string& etag = "") {
    Headers h{{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
    if (!etag.empty()) h.emplace_back("If-Match", etag);
    return h;
}

// Partner "tailscale" (code picks42) with the link /go/pick, through the API.
void create_pick(int admin_port, const std::string& token) {
    auto p = http_request(admin_port, "POST", "/api/v1/partners", editing(token),
                          R"({"slug": "tailscale", "name": "Tailscale", "ref_param": "ref",
                              "ref_code": "picks42", "allowed_domains": ["tailscale.com"]})");
    REQUIRE(p.status == 201);
    auto l = http_request(admin_port, "POST", "/api/v1/links", editing(token),
                          R"({"slug": "pick", "partner": "tailscale",
                              "destination": "https://tailscale.com/pricing"})");
    REQUIRE(l.status == 201);
}

void wait_for_redirect(int port) {
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (http_get(port, "/go/pick").status != 302 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    REQUIRE(http_get(port, "/go/pick").status == 302);
}

// A whole second at least `lead` ahead.
refgate::domain::SysSeconds second_after(std::chrono::seconds lead) {
    return std::chrono::ceil<std::chrono::seconds>(SysClock::now() + lead);
}

// Watches the instances' redirects across `at`: none may carry `code` before that second, and
// every one must carry it within a second after it.
void expect_switch_at(const std::vector<int>& ports, refgate::domain::SysSeconds at,
                      const std::string& code) {
    std::vector<bool> switched(ports.size(), false);
    while (SysClock::now() < at + 1s) {
        for (std::size_t i = 0; i < ports.size(); ++i) {
            auto r = http_get(ports[i], "/go/pick");
            auto seen_at = SysClock::now();
            REQUIRE(r.status == 302);
            bool carries = r.header("Location").find("ref=" + code) != std::string::npos;
            if (carries) {
                INFO("instance "
                     << i << " switched "
                     << std::chrono::duration_cast<std::chrono::milliseconds>(at - seen_at).count()
                     << " ms early");
                REQUIRE(seen_at >= at);
                switched[i] = true;
            }
        }
        std::this_thread::sleep_for(20ms);
    }
    for (std::size_t i = 0; i < ports.size(); ++i) {
        INFO("instance " << i);
        CHECK(switched[i]);
    }
}

}  // namespace

TEST_CASE("a scheduled code takes over at its second on every instance and in the history",
          "[admin][pg][schedule]") {
    TestDatabase db;
    std::string editor = create_api_token(db.url(), "eddie", "editor");
    ServiceProcess a{{.database_url = db.url()}};
    ServiceProcess b{{.database_url = db.url()}};
    create_pick(a.admin_port(), editor);
    wait_for_redirect(a.port());
    wait_for_redirect(b.port());

    auto at = second_after(3s);
    std::string at_text = refgate::domain::format_rfc3339(at);
    auto scheduled = http_request(a.admin_port(), "PATCH", "/api/v1/partners/tailscale",
                                  editing(editor, "\"1\""),
                                  Json{{"ref_code", "winter-26"}, {"valid_from", at_text}}.dump());
    INFO(scheduled.body);
    REQUIRE(scheduled.status == 200);
    auto partner = Json::parse(scheduled.body);
    CHECK(partner["ref_code"] == "picks42");
    CHECK(partner["version"] == 2);
    CHECK(partner["scheduled_codes"] ==
          Json::array({Json{{"ref_code", "winter-26"}, {"valid_from", at_text}}}));
    CHECK(scheduled.header("ETag") == "\"2\"");

    expect_switch_at({a.port(), b.port()}, at, "winter-26");

    // Written through to PostgreSQL by one of the instances, live from that second exactly.
    auto deadline = std::chrono::steady_clock::now() + 5s;
    Json codes;
    while (std::chrono::steady_clock::now() < deadline) {
        codes = Json::parse(
            http_request(a.admin_port(), "GET", "/api/v1/partners/tailscale/codes", editing(editor))
                .body)["items"];
        if (codes.size() == 2 && !codes[1]["scheduled"].get<bool>()) break;
        std::this_thread::sleep_for(50ms);
    }
    INFO(codes.dump());
    REQUIRE(codes.size() == 2);
    CHECK(codes[0]["ref_code"] == "picks42");
    CHECK(codes[0]["live_until"].get<std::string>().starts_with(at_text.substr(0, 19)));
    CHECK(codes[1]["ref_code"] == "winter-26");
    CHECK(codes[1]["live_from"].get<std::string>().starts_with(at_text.substr(0, 19)));
    CHECK(codes[1]["live_until"].is_null());
    CHECK(codes[1]["scheduled"] == false);
    auto current = Json::parse(
        http_request(a.admin_port(), "GET", "/api/v1/partners/tailscale", editing(editor)).body);
    CHECK(current["ref_code"] == "winter-26");
    CHECK(current["scheduled_codes"].empty());
    CHECK(db.scalar("SELECT count(*) FROM refgate_audit WHERE entity = 'partner' AND actor = "
                    "'schedule' AND after->>'ref_code' = 'winter-26'") == "1");
}

TEST_CASE("scheduling is validated, listed as scheduled, and can be cancelled",
          "[admin][pg][schedule]") {
    TestDatabase db;
    std::string editor = create_api_token(db.url(), "eddie", "editor");
    ServiceProcess service{{.database_url = db.url()}};
    create_pick(service.admin_port(), editor);
    auto patch = [&](const std::string& etag, const Json& body) {
        return http_request(service.admin_port(), "PATCH", "/api/v1/partners/tailscale",
                            editing(editor, etag), body.dump());
    };
    auto fields = [](const HttpResponse& r) {
        std::vector<std::string> names;
        auto problem = Json::parse(r.body);
        for (const auto& e : problem["errors"]) names.push_back(e["field"]);
        return names;
    };
    std::string later = refgate::domain::format_rfc3339(second_after(24h));
    std::string past = refgate::domain::format_rfc3339(second_after(-1h));

    CHECK(fields(patch("\"1\"", {{"ref_code", "x"}, {"valid_from", past}})) ==
          std::vector<std::string>{"valid_from"});
    CHECK(fields(patch("\"1\"", {{"ref_code", "x"}, {"valid_from", "tomorrow"}})) ==
          std::vector<std::string>{"valid_from"});
    // A second 60 is no time: PostgreSQL would store it as the next minute.
    CHECK(fields(patch("\"1\"", {{"ref_code", "x"}, {"valid_from", "2099-01-01T00:00:60Z"}})) ==
          std::vector<std::string>{"valid_from"});
    CHECK(fields(patch("\"1\"", {{"valid_from", later}})) == std::vector<std::string>{"ref_code"});
    CHECK(fields(patch("\"1\"", {{"ref_code", "x"}, {"name", "T"}, {"valid_from", later}})) ==
          std::vector<std::string>{"name"});
    CHECK(fields(patch("\"1\"", {{"ref_code", ""}, {"valid_from", later}})) ==
          std::vector<std::string>{"ref_code"});
    CHECK(fields(patch("\"1\"", {{"scheduled_codes", Json::array()}})) ==
          std::vector<std::string>{"scheduled_codes"});

    REQUIRE(patch("\"1\"", {{"ref_code", "spring-27"}, {"valid_from", later}}).status == 200);
    CHECK(patch("\"1\"", {{"ref_code", "spring-28"}, {"valid_from", later}}).status == 412);
    auto codes = Json::parse(http_request(service.admin_port(), "GET",
                                          "/api/v1/partners/tailscale/codes", editing(editor))
                                 .body)["items"];
    REQUIRE(codes.size() == 2);
    CHECK(codes[0]["live_until"] == later.substr(0, 19) + ".000000Z");
    CHECK(codes[1]["ref_code"] == "spring-27");
    CHECK(codes[1]["scheduled"] == true);
    // Redirects keep the current code meanwhile.
    wait_for_redirect(service.port());
    CHECK(http_get(service.port(), "/go/pick").header("Location").find("ref=picks42") !=
          std::string::npos);

    CHECK(patch("\"2\"", {{"ref_code", nullptr}, {"valid_from", past}}).status == 404);
    auto cancelled = patch("\"2\"", {{"ref_code", nullptr}, {"valid_from", later}});
    REQUIRE(cancelled.status == 200);
    CHECK(Json::parse(cancelled.body)["scheduled_codes"].empty());
    CHECK(db.scalar("SELECT count(*) FROM refgate_code_schedule") == "0");
}

TEST_CASE("a scheduled code takes over on time while PostgreSQL is down, and is written after",
          "[admin][pg][schedule]") {
    PrivatePostgres postgres;
    std::string url = postgres.create_database("refgate");
    std::string editor = create_api_token(url, "eddie", "editor");
    ServiceProcess service{{.database_url = url}};
    create_pick(service.admin_port(), editor);
    wait_for_redirect(service.port());

    auto at = second_after(4s);
    auto r = http_request(
        service.admin_port(), "PATCH", "/api/v1/partners/tailscale", editing(editor, "\"1\""),
        Json{{"ref_code", "offline-1"}, {"valid_from", refgate::domain::format_rfc3339(at)}}
            .dump());
    REQUIRE(r.status == 200);
    // The schedule reached the snapshot before PostgreSQL goes.
    std::this_thread::sleep_for(1s);
    postgres.stop();
    expect_switch_at({service.port()}, at, "offline-1");
    postgres.start();

    auto deadline = std::chrono::steady_clock::now() + 15s;
    std::string code;
    while (std::chrono::steady_clock::now() < deadline) {
        auto p = http_request(service.admin_port(), "GET", "/api/v1/partners/tailscale",
                              editing(editor));
        if (p.status == 200) {
            code = Json::parse(p.body)["ref_code"];
            if (code == "offline-1") break;
        }
        std::this_thread::sleep_for(100ms);
    }
    CHECK(code == "offline-1");
}

}  // namespace code_schedule_test
