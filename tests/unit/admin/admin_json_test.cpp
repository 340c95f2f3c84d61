// The admin API's objects are the import format's objects plus what the database adds, so what
// GET answers can be sent back (PATCH, import) and reads as the same partner or link.

#include "refgate/admin/admin_json.hpp"

#include <catch2/catch.hpp>

#include "refgate/codec/import_document.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace admin_json_test {

namespace {

using namespace refgate;
using namespace refgate::admin;
using Json = nlohmann::ordered_json;

PartnerRow stored_partner() {
    PartnerRow row;
    row.id = 7;
    row.partner.slug = "tailscale";
    row.partner.name = "Tailscale";
    row.partner.ref_param = "ref";
    row.partner.ref_code = "picks42";
    row.partner.allowed_domains = {"tailscale.com", "login.tailscale.com"};
    row.partner.extra_params = {{"utm_source", "picks"}, {"aff", "1"}};  // editor's order
    row.partner.active = false;
    row.partner.scheduled_codes = {
        {domain::SysSeconds{std::chrono::seconds{1'800'000'000}}, "winter"}};
    row.stamps = {1'800'000'000'123'456, 1'800'000'100'000'001, 3};
    return row;
}

LinkRow stored_link() {
    LinkRow row;
    row.link.slug = "pricing";
    row.link.partner = "tailscale";
    row.link.destination = "https://tailscale.com/pricing?plan=team#faq";
    row.link.status = domain::LinkStatus::disabled;
    row.link.expires_at = domain::SysSeconds{std::chrono::seconds{1'900'000'000}};
    row.link.fallback = "https://tailscale.com/";
    row.link.utm_passthrough = true;
    row.stamps = {1'000'000, 2'000'000, 2};
    return row;
}

}  // namespace

TEST_CASE("admin json: a partner object reads back as the same partner", "[admin][json]") {
    PartnerRow row = stored_partner();
    row.partner.subid_param = "subId1";
    row.partner.subid_style = refgate::domain::SubidStyle::readable;
    row.partner.subid_charset = "a-z0-9_";
    row.partner.channel_codes = {{"newsletter", "picks-nl"}, {"blog-*", "picks-blog"}};
    Json object = partner_object(row);
    std::vector<std::string> keys;
    for (const auto& [key, value] : object.items()) keys.push_back(key);
    CHECK(keys == std::vector<std::string>{
                      "slug", "name", "ref_param", "ref_code", "allowed_domains", "extra_params",
                      "active", "subid_param", "subid_style", "subid_charset", "channel_codes",
                      "scheduled_codes", "created_at", "updated_at", "version"});
    CHECK(object["channel_codes"].dump() == R"([{"channel":"newsletter","ref_code":"picks-nl"},)"
                                            R"({"channel":"blog-*","ref_code":"picks-blog"}])");
    CHECK(object["subid_style"] == "readable");
    CHECK(object["created_at"] == "2027-01-15T08:00:00.123456Z");
    CHECK(object["updated_at"] == "2027-01-15T08:01:40.000001Z");
    CHECK(object["version"] == 3);
    CHECK(object["scheduled_codes"] ==
          Json::array({Json{{"ref_code", "winter"}, {"valid_from", "2027-01-15T08:00:00Z"}}}));
    CHECK(object["extra_params"].dump() == R"({"utm_source":"picks","aff":"1"})");

    auto parsed = codec::parse_import(Json{{"partners", Json::array({writable(object)})}});
    REQUIRE(parsed.issues.empty());
    CHECK(codec::partner_to_json(parsed.document.partners.front()) ==
          codec::partner_to_json(row.partner));
}

TEST_CASE("admin json: a link object reads back as the same link", "[admin][json]") {
    LinkRow row = stored_link();
    Json object = link_object(row);
    CHECK(object["expires_at"] == "2030-03-17T17:46:40Z");
    CHECK(object["status"] == "disabled");
    CHECK(object["created_at"] == "1970-01-01T00:00:01.000000Z");
    auto parsed = codec::parse_import(Json{{"links", Json::array({writable(object)})}});
    REQUIRE(parsed.issues.empty());
    CHECK(codec::link_to_json(parsed.document.links.front()) == codec::link_to_json(row.link));

    row.link.expires_at.reset();
    row.link.fallback.reset();
    Json plain = link_object(row);
    CHECK(plain["expires_at"].is_null());
    CHECK(plain["fallback"].is_null());
    auto again = codec::parse_import(Json{{"links", Json::array({writable(plain)})}});
    REQUIRE(again.issues.empty());
    CHECK(codec::link_to_json(again.document.links.front()) == codec::link_to_json(row.link));
}

TEST_CASE("admin json: audit entries and tokens keep their documented shape", "[admin][json]") {
    AuditRow entry{
        42, 1'800'000'000'000'000,
        audit_record("eddie", "link", "pricing", "delete", Json{{"version", 2}}, nullptr)};
    CHECK(view_json(view_of(entry)).dump() ==
          R"({"id":42,"at":"2027-01-15T08:00:00.000000Z","actor":"eddie","entity":"link",)"
          R"("slug":"pricing","action":"delete","before":{"version":2},"after":null})");
    TokenRow token{9, "ci-bot", "editor", "", "2027-01-15T08:00:00Z", "", ""};
    CHECK(view_json(view_of(token)).dump() ==
          R"({"name":"ci-bot","role":"editor","created_at":"2027-01-15T08:00:00Z",)"
          R"("last_used_on":null,"revoked_at":null,"version":9,)"
          R"("scopes":["links:read","links:write","partners:read","partners:write","stats:read",)"
          R"("earnings:read","disclosures:write"],"partners":[],"domains":[],"expires_at":null})");
    // Scopes given (issue 46) are shown as given; restrictions and expiry as stored.
    token.scopes = std::vector<std::string>{"links:read"};
    token.partners = {"kagi"};
    token.domains = {"go.example.com"};
    token.expires_at = "2027-02-01T00:00:00Z";
    CHECK(view_json(view_of(token)).dump() ==
          R"({"name":"ci-bot","role":"editor","created_at":"2027-01-15T08:00:00Z",)"
          R"("last_used_on":null,"revoked_at":null,"version":9,"scopes":["links:read"],)"
          R"("partners":["kagi"],"domains":["go.example.com"],)"
          R"("expires_at":"2027-02-01T00:00:00Z"})");
}

}  // namespace admin_json_test
