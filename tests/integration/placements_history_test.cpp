// A partner's per-channel codes in its code history and audit trail (issue 42), and what a
// scheduled switch does with them.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace placements_history_test {

using namespace refgate::test;
using Json = nlohmann::json;

namespace {

const char* const kDocument = R"json({
  "partners": [
    {"slug": "amazon-us", "name": "Amazon", "ref_param": "tag", "ref_code": "pub-20",
     "allowed_domains": ["amazon.com"], "subid_param": "ascsubtag"}
  ],
  "links": []
})json";

}  // namespace

TEST_CASE(
    "a change of channel_codes starts a new interval of the code history and is audited, and a "
    "scheduled switch changes the code only",
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

    auto r =
        call("PATCH", "/api/v1/partners/amazon-us", editor, Json{{"channel_codes", codes}}.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);

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

    // A switch is scheduled for a code; channel codes cannot be scheduled with it, and stay.
    r = call(
        "PATCH", "/api/v1/partners/amazon-us", editor,
        R"({"ref_code": "pub-21", "valid_from": "2099-01-01T00:00:00Z", "channel_codes": []})");
    CHECK(r.status == 422);
    CHECK(r.body.find("cannot be changed together with valid_from") != std::string::npos);
    r = call("PATCH", "/api/v1/partners/amazon-us", editor,
             R"({"ref_code": "pub-21", "valid_from": "2099-01-01T00:00:00Z"})");
    INFO(r.body);
    REQUIRE(r.status == 200);
    items = Json::parse(call("GET", "/api/v1/partners/amazon-us/codes", editor).body)["items"];
    REQUIRE(items.size() == 3);
    CHECK(items[2]["scheduled"] == true);
    CHECK(items[2]["ref_code"] == "pub-21");
    CHECK(items[2]["channel_codes"] == codes);
}

}  // namespace placements_history_test
