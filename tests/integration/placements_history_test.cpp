// A partner's per-channel codes in its code history and audit trail (issue 42), and what a
// scheduled switch does with them.

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "refgate/domain/time.hpp"
#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace placements_history_test {

using namespace refgate::test;
using Json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

const char* const kDocument = R"json({
  "partners": [
    {"slug": "amazon-us", "name": "Amazon", "ref_param": "tag", "ref_code": "pub-20",
     "allowed_domains": ["amazon.com"], "subid_param": "ascsubtag"}
  ],
  "links": [{"slug": "echo", "partner": "amazon-us", "destination": "https://www.amazon.com/dp/B0X"}]
})json";

}  // namespace

TEST_CASE(
    "a change of channel_codes starts a new interval of the code history and is audited, and a "
    "scheduled switch of them takes over at its moment",
    "[placements][admin][pg]") {
    TestDatabase db;
    REQUIRE(import_document(db.url(), kDocument));
    std::string editor = create_api_token(db.url(), "editors", "editor");
    std::string admin = create_api_token(db.url(), "admins", "admin");
    ServiceProcess service{{.database_url = db.url()}};
    auto call = [&](const std::string& method, const std::string& target, const std::string& token,
                    const std::string& body = {}) {
        std::vector<std::pair<std::string, std::string>> headers{
            {"Authorization", "Bearer " + token}};
        if (!body.empty()) {
            headers.emplace_back("Content-Type", "application/json");
            headers.emplace_back("If-Match", "*");
        }
        return http_request(service.admin_port(), method, target, headers, body);
    };
    const Json codes = Json::parse(R"([{"channel": "newsletter", "ref_code": "pub-nl-20"}])");

    auto newsletter = [&] {
        return http_get(service.port(), "/go/echo?src=newsletter").header("Location");
    };
    // The newsletter's Location once it carries `code`, or the last one after 10 s.
    auto newsletter_with = [&](const std::string& code) {
        auto deadline = std::chrono::steady_clock::now() + 10s;
        std::string location = newsletter();
        while (location.find(code) == std::string::npos &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(50ms);
            location = newsletter();
        }
        return location;
    };

    auto r =
        call("PATCH", "/api/v1/partners/amazon-us", editor, Json{{"channel_codes", codes}}.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    // The change reaches the redirect through the snapshot's reload, which a busy machine may
    // still be doing when the PATCH answers.
    CHECK(newsletter_with("tag=pub-nl-20").find("tag=pub-nl-20") != std::string::npos);

    r = call("GET", "/api/v1/partners/amazon-us/codes", editor);
    INFO(r.body);
    REQUIRE(r.status == 200);
    auto items = Json::parse(r.body)["items"];
    REQUIRE(items.size() == 2);
    CHECK(items[0]["ref_code"] == "pub-20");
    CHECK(items[0]["channel_codes"] == Json::array());
    CHECK(!items[0]["live_until"].is_null());
    CHECK(items[1]["ref_code"] == "pub-20");
    CHECK(items[1]["channel_codes"] == codes);
    CHECK(items[1]["live_until"].is_null());
    CHECK(items[0]["live_until"] == items[1]["live_from"]);

    // The same list again changes nothing, and starts no interval.
    REQUIRE(
        call("PATCH", "/api/v1/partners/amazon-us", editor, Json{{"channel_codes", codes}}.dump())
            .status == 200);
    CHECK(
        Json::parse(call("GET", "/api/v1/partners/amazon-us/codes", editor).body)["items"].size() ==
        2);

    // The audit trail names the change, before and after.
    r = call("GET", "/api/v1/audit?entity=partner&slug=amazon-us", admin);
    INFO(r.body);
    REQUIRE(r.status == 200);
    auto audit = Json::parse(r.body)["items"];
    REQUIRE(!audit.empty());
    const Json* change = nullptr;
    for (const auto& a : audit) {
        if (a["action"] == "update" && a["after"]["channel_codes"] == codes) change = &a;
    }
    REQUIRE(change != nullptr);
    CHECK((*change)["before"]["channel_codes"] == Json::array());

    // A switch of the channel codes alone, five seconds ahead: listed, then live on the redirect
    // at its moment, the code kept, written through to the history and the audit trail.
    const Json later = Json::parse(R"([{"channel": "newsletter", "ref_code": "pub-nl-21"}])");
    auto at = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()) + 5s;
    const std::string when = refgate::domain::format_rfc3339(at);
    r = call("PATCH", "/api/v1/partners/amazon-us", editor,
             Json{{"channel_codes", later}, {"valid_from", when}}.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    auto partner = Json::parse(r.body);
    REQUIRE(partner["scheduled_codes"].size() == 1);
    CHECK(partner["scheduled_codes"][0]["ref_code"].is_null());
    CHECK(partner["scheduled_codes"][0]["channel_codes"] == later);
    CHECK(partner["channel_codes"] == codes);  // not yet
    items = Json::parse(call("GET", "/api/v1/partners/amazon-us/codes", editor).body)["items"];
    REQUIRE(items.size() == 3);
    CHECK(items[2]["scheduled"] == true);
    CHECK(items[2]["ref_code"] == "pub-20");
    CHECK(items[2]["channel_codes"] == later);
    // ref_code null with channel_codes is refused: null cancels.
    CHECK(call("PATCH", "/api/v1/partners/amazon-us", editor,
               Json{{"channel_codes", later}, {"valid_from", when}, {"ref_code", nullptr}}.dump())
              .status == 422);

    std::string first = newsletter();
    INFO(first);
    if (std::chrono::system_clock::now() < at - 1s)  // a busy machine may be past it already
        CHECK(first.find("tag=pub-nl-20") != std::string::npos);
    CHECK(newsletter_with("tag=pub-nl-21").find("tag=pub-nl-21") != std::string::npos);
    CHECK(std::chrono::system_clock::now() >= at);
    CHECK(http_get(service.port(), "/go/echo").header("Location").find("tag=pub-20") !=
          std::string::npos);

    // Written through: the history's last interval starts at valid_from with the new list.
    auto deadline = std::chrono::steady_clock::now() + 10s;
    do {
        items = Json::parse(call("GET", "/api/v1/partners/amazon-us/codes", editor).body)["items"];
        if (items.size() == 3 && items[2]["scheduled"] == false) break;
        std::this_thread::sleep_for(100ms);
    } while (std::chrono::steady_clock::now() < deadline);
    REQUIRE(items.size() == 3);
    CHECK(items[2]["scheduled"] == false);
    CHECK(items[2]["ref_code"] == "pub-20");
    CHECK(items[2]["channel_codes"] == later);
    CHECK(items[2]["live_from"].get<std::string>().starts_with(when.substr(0, 19)));
    r = call("GET", "/api/v1/audit?entity=partner&slug=amazon-us&actor=schedule", admin);
    INFO(r.body);
    auto switched = Json::parse(r.body)["items"];
    REQUIRE(switched.size() == 1);
    CHECK(switched[0]["before"]["channel_codes"] == codes);
    CHECK(switched[0]["after"]["channel_codes"] == later);
    CHECK(!switched[0]["after"].contains("ref_code"));
}

}  // namespace placements_history_test
