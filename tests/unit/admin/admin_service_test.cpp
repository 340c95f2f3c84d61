// The admin service's rules against rows kept in memory: what it refuses, what it decides, and
// the audit entry each change leaves. No PostgreSQL; tests/integration/admin_api_test.cpp runs
// the same rules over the real repository.

#include "refgate/admin/admin_service.hpp"

#include <catch2/catch.hpp>

#include "fake_admin_rows.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/time.hpp"
#include "support/fake_clock.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace admin_service_test {

namespace {

using namespace refgate::admin;
using refgate::admin::testing::audited;
using refgate::admin::testing::body;
using refgate::admin::testing::FakeRepository;
using Json = nlohmann::ordered_json;
using refgate::codec::parse_link_patch;
using refgate::codec::parse_new_link;
using refgate::codec::parse_new_partner;
using refgate::codec::parse_partner_patch;

const Actor kEddie{"eddie", Role::editor};

const Json kPartner = Json::parse(R"({"slug": "tailscale", "name": "Tailscale",
    "ref_param": "ref", "ref_code": "picks42", "allowed_domains": ["tailscale.com"]})");

Json link_body(std::string slug, std::string destination) {
    return Json{{"slug", slug}, {"partner", "tailscale"}, {"destination", destination}};
}

struct Fixture {
    refgate::testing::FakeClock clock;
    FakeRepository* rows;
    AdminService service;

    Fixture() : Fixture(std::make_unique<FakeRepository>()) {}
    explicit Fixture(std::unique_ptr<FakeRepository> r)
        : rows(r.get()), service(std::move(r), {.clock = &clock}) {
        clock.set(std::chrono::sys_days{std::chrono::year{2027} / 1 / 15});
        REQUIRE(service.create_partner(kEddie, parse_new_partner(kPartner)).kind ==
                OutcomeKind::created);
    }
    const auto& state() const { return rows->state; }
};

// A PUT of the general disclosure in English, read as the API reads it.
refgate::codec::DisclosureInput put_text(const Json& body) {
    return refgate::codec::parse_disclosure_put("general", "en", body);
}

template <typename Answer>
std::vector<std::string> fields(const Answer& o) {
    std::vector<std::string> names;
    for (const auto& e : o.errors) names.push_back(e.field);
    return names;
}

}  // namespace

TEST_CASE("admin service: a link to a host outside its partner's allowed domains is refused",
          "[admin][service]") {
    Fixture f;
    auto commits = f.rows->commits;
    auto refused = f.service.create_link(
        kEddie, parse_new_link(link_body("pricing", "https://evil.example/x")));
    CHECK(refused.kind == OutcomeKind::invalid);
    REQUIRE(fields(refused) == std::vector<std::string>{"destination"});
    CHECK_THAT(refused.errors[0].message, Catch::EndsWith("[host_not_allowed]"));
    CHECK(f.state().links.empty());
    CHECK(f.rows->commits == commits);

    auto saved = f.service.create_link(
        kEddie, parse_new_link(link_body("pricing", "https://TailScale.com/pricing")));
    CHECK(saved.kind == OutcomeKind::created);
    CHECK(body(saved)["destination"] == "https://tailscale.com/pricing");  // canonical
    CHECK(f.service.create_link(kEddie, parse_new_link(link_body("other", "https://x.example")))
              .kind == OutcomeKind::invalid);
    auto unknown = link_body("orphan", "https://tailscale.com");
    unknown["partner"] = "nobody";
    CHECK(fields(f.service.create_link(kEddie, parse_new_link(unknown))) ==
          std::vector<std::string>{"partner"});
}

TEST_CASE("admin service: a partner that still has links cannot be deleted", "[admin][service]") {
    Fixture f;
    REQUIRE(f.service
                .create_link(kEddie,
                             parse_new_link(link_body("pricing", "https://tailscale.com/pricing")))
                .kind == OutcomeKind::created);
    auto audited = f.state().audit.size();
    auto refused = f.service.delete_partner(kEddie, "tailscale", {.any = true});
    CHECK(refused.kind == OutcomeKind::conflict);
    CHECK(refused.detail == "partner 'tailscale' still has 1 link(s); delete or move them first");
    CHECK(f.state().partners.contains("tailscale"));
    CHECK(f.state().audit.size() == audited);

    REQUIRE(f.service.delete_link(kEddie, "pricing", {.any = true}).kind == OutcomeKind::deleted);
    auto deleted = f.service.delete_partner(kEddie, "tailscale", {.version = 1});
    CHECK(deleted.kind == OutcomeKind::deleted);
    CHECK(deleted.version == 1);
    CHECK(f.state().partners.empty());
}

TEST_CASE("admin service: a stale If-Match changes nothing, a current one changes the object",
          "[admin][service]") {
    Fixture f;
    Json rename{{"name", "Tailscale Inc."}};
    auto stale =
        f.service.update_partner(kEddie, "tailscale", {.version = 7}, parse_partner_patch(rename));
    CHECK(stale.kind == OutcomeKind::stale);
    CHECK(stale.detail == "the partner changed; fetch it again");
    CHECK(f.state().partners.at("tailscale").partner.name == "Tailscale");

    auto changed =
        f.service.update_partner(kEddie, "tailscale", {.version = 1}, parse_partner_patch(rename));
    CHECK(changed.kind == OutcomeKind::ok);
    CHECK(changed.version == 2);
    CHECK(body(changed)["name"] == "Tailscale Inc.");
    CHECK(f.service.update_partner(kEddie, "tailscale", {.version = 1}, parse_partner_patch(rename))
              .kind == OutcomeKind::stale);
    CHECK(f.service.update_partner(kEddie, "nobody", {.any = true}, parse_partner_patch(rename))
              .kind == OutcomeKind::not_found);
}

TEST_CASE("admin service: every change leaves an audit entry with who, what, before and after",
          "[admin][service]") {
    Fixture f;
    REQUIRE(f.state().audit.size() == 1);
    const AuditRecord& created = f.state().audit[0];
    CHECK(created.actor == "eddie");
    CHECK(created.entity == "partner");
    CHECK(created.slug == "tailscale");
    CHECK(created.action == "create");
    CHECK(audited(created.before).is_null());
    CHECK(audited(created.after)["ref_code"] == "picks42");
    CHECK(audited(created.after)["version"] == 1);

    Actor ada{"ada", Role::admin};
    REQUIRE(f.service
                .update_partner(ada, "tailscale", {.version = 1},
                                parse_partner_patch({{"active", false}}))
                .kind == OutcomeKind::ok);
    const AuditRecord& updated = f.state().audit.back();
    CHECK(updated.actor == "ada");
    CHECK(updated.action == "update");
    CHECK(audited(updated.before)["active"] == true);
    CHECK(audited(updated.before)["version"] == 1);
    CHECK(audited(updated.after)["active"] == false);
    CHECK(audited(updated.after)["version"] == 2);

    // A change that changes nothing is answered, not audited.
    REQUIRE(f.service
                .update_partner(ada, "tailscale", {.any = true},
                                parse_partner_patch({{"active", false}}))
                .kind == OutcomeKind::ok);
    CHECK(f.state().audit.size() == 2);

    REQUIRE(f.service.delete_partner(ada, "tailscale", {.any = true}).kind == OutcomeKind::deleted);
    CHECK(f.state().audit.back().action == "delete");
    CHECK(audited(f.state().audit.back().before)["version"] == 2);
    CHECK(audited(f.state().audit.back().after).is_null());
}

TEST_CASE("admin service: narrowing a partner's domains past a stored link is refused",
          "[admin][service]") {
    Fixture f;
    REQUIRE(f.service
                .create_link(kEddie,
                             parse_new_link(link_body("pricing", "https://tailscale.com/pricing")))
                .kind == OutcomeKind::created);
    auto refused =
        f.service.update_partner(kEddie, "tailscale", {.any = true},
                                 parse_partner_patch({{"allowed_domains", {"tailscale.io"}}}));
    REQUIRE(refused.kind == OutcomeKind::invalid);
    REQUIRE(fields(refused) == std::vector<std::string>{"allowed_domains"});
    CHECK_THAT(refused.errors[0].message, Catch::StartsWith("would exclude stored links[0]"));
    CHECK(f.state().partners.at("tailscale").partner.allowed_domains ==
          std::vector<std::string>{"tailscale.com"});
}

TEST_CASE(
    "admin service: a partner change is checked against every link that names it, by the "
    "partners each branch routes to",
    "[admin][service]") {
    // tailscale's link sends iPhones to the storefront partner "appstore".
    Fixture f;
    Json store = Json::parse(R"({"slug": "appstore", "name": "App Store", "ref_param": "at",
        "ref_code": "picks", "allowed_domains": ["apps.apple.com"]})");
    REQUIRE(f.service.create_partner(kEddie, parse_new_partner(store)).kind ==
            OutcomeKind::created);
    Json link = link_body("pricing", "https://tailscale.com/pricing");
    link["rules"] = Json::parse(R"([{"platform": ["ios"], "partner": "appstore",
        "destination": "https://apps.apple.com/app/tailscale/id1470499037"}])");
    REQUIRE(f.service.create_link(kEddie, parse_new_link(link)).kind == OutcomeKind::created);

    // The main partner's code rotates although the rule names another partner's store.
    CHECK(f.service
              .update_partner(kEddie, "tailscale", {.any = true},
                              parse_partner_patch({{"ref_code", "picks43"}}))
              .kind == OutcomeKind::ok);

    // The storefront cannot narrow its domains past the rule, and the refusal names the branch.
    auto narrowed =
        f.service.update_partner(kEddie, "appstore", {.any = true},
                                 parse_partner_patch({{"allowed_domains", {"itunes.apple.com"}}}));
    REQUIRE(narrowed.kind == OutcomeKind::invalid);
    REQUIRE(fields(narrowed) == std::vector<std::string>{"allowed_domains"});
    CHECK_THAT(narrowed.errors[0].message,
               Catch::Contains("(pricing)") && Catch::Contains("rules[0].destination"));
    CHECK(f.state().partners.at("appstore").partner.allowed_domains ==
          std::vector<std::string>{"apps.apple.com"});
    // A change that keeps the rule's destination is fine.
    CHECK(f.service
              .update_partner(kEddie, "appstore", {.any = true},
                              parse_partner_patch(
                                  {{"allowed_domains", {"apps.apple.com", "itunes.apple.com"}}}))
              .kind == OutcomeKind::ok);

    // Nor can the storefront go while the rule names it.
    auto audited = f.state().audit.size();
    auto deleted = f.service.delete_partner(kEddie, "appstore", {.any = true});
    CHECK(deleted.kind == OutcomeKind::conflict);
    CHECK(deleted.detail ==
          "partner 'appstore' is still named by pricing rules[0]; change those rules first");
    CHECK(f.state().partners.contains("appstore"));
    CHECK(f.state().audit.size() == audited);
}

TEST_CASE("admin service: a code is scheduled only for a moment after the clock's now",
          "[admin][service]") {
    Fixture f;
    auto at = [](int day) {
        return refgate::domain::format_rfc3339(
            std::chrono::sys_days{std::chrono::year{2027} / 1 / day});
    };
    auto past = f.service.update_partner(
        kEddie, "tailscale", {.any = true},
        parse_partner_patch({{"ref_code", "winter"}, {"valid_from", at(14)}}));
    CHECK(fields(past) == std::vector<std::string>{"valid_from"});
    auto future = f.service.update_partner(
        kEddie, "tailscale", {.any = true},
        parse_partner_patch({{"ref_code", "winter"}, {"valid_from", at(16)}}));
    REQUIRE(future.kind == OutcomeKind::ok);
    CHECK(future.version == 2);
    CHECK(body(future)["scheduled_codes"] ==
          Json::array({Json{{"ref_code", "winter"}, {"valid_from", at(16)}}}));
    CHECK(body(future)["ref_code"] == "picks42");

    f.clock.advance(std::chrono::hours{48});  // the 16th has passed now
    auto late = f.service.update_partner(
        kEddie, "tailscale", {.any = true},
        parse_partner_patch({{"ref_code", "spring"}, {"valid_from", at(16)}}));
    CHECK(fields(late) == std::vector<std::string>{"valid_from"});
}

TEST_CASE("admin service: tokens are created once per live name and revoked with an audit entry",
          "[admin][service]") {
    Fixture f;
    Actor ada{"ada", Role::admin};
    auto created =
        f.service.create_token(ada, parse_new_token({{"name", "ci-bot"}, {"role", "editor"}}));
    REQUIRE(created.kind == OutcomeKind::created);
    CHECK(body(created)["token"].get<std::string>().starts_with("rg_"));
    // The audit records what the token may do: no scopes given, everything the role allows.
    CHECK(audited(f.state().audit.back().after) ==
          Json{{"name", "ci-bot"},
               {"role", "editor"},
               {"scopes",
                {"links:read", "links:write", "partners:read", "partners:write", "stats:read",
                 "earnings:read", "disclosures:write"}},
               {"partners", Json::array()},
               {"domains", Json::array()},
               {"expires_at", nullptr}});
    CHECK(f.service.create_token(ada, parse_new_token({{"name", "ci-bot"}, {"role", "viewer"}}))
              .kind == OutcomeKind::conflict);

    auto version = created.version;
    CHECK(f.service.revoke_token(ada, "ci-bot", {.version = version + 1}).kind ==
          OutcomeKind::stale);
    CHECK(f.service.revoke_token(ada, "ci-bot", {.version = version}).kind == OutcomeKind::deleted);
    CHECK(f.state().audit.back().action == "revoke");
    CHECK(audited(f.state().audit.back().after)["revoked"] == true);
    CHECK(f.service.revoke_token(ada, "ci-bot", {.any = true}).kind == OutcomeKind::not_found);
}

TEST_CASE("admin service: a disclosure is replaced only with If-Match, and a new version each time",
          "[admin][service]") {
    Fixture f;
    Json text{{"text", "Paid picks we use ourselves."}};
    auto first = f.service.put_disclosure(kEddie, "general", "en", {}, put_text(text));
    REQUIRE(first.kind == OutcomeKind::created);
    CHECK(first.version == 1);
    CHECK(f.service.put_disclosure(kEddie, "general", "en", {}, put_text({{"text", "B"}})).kind ==
          OutcomeKind::precondition_required);
    CHECK(f.service
              .put_disclosure(kEddie, "general", "en", {.if_none_match_any = true}, put_text(text))
              .kind == OutcomeKind::stale);
    auto second =
        f.service.put_disclosure(kEddie, "general", "en", {.if_match = Precondition{.version = 1}},
                                 put_text({{"text", "B"}}));
    CHECK(second.kind == OutcomeKind::ok);
    CHECK(second.version == 2);
    CHECK(body(second)["updated_by"] == "eddie");
    CHECK(audited(f.state().audit.back().before)["version"] == 1);
}

}  // namespace admin_service_test

namespace admin_service_test {

TEST_CASE("admin service: a code scheduled centuries away is judged past or future correctly",
          "[admin][service]") {
    // Centuries away does not fit the clock's nanoseconds: compared in seconds.
    Fixture f;
    auto past = f.service.update_partner(
        kEddie, "tailscale", {.any = true},
        parse_partner_patch({{"ref_code", "winter27"}, {"valid_from", "1013-02-01T00:00:00Z"}}));
    CHECK(past.kind == OutcomeKind::invalid);
    REQUIRE(fields(past) == std::vector<std::string>{"valid_from"});
    auto far = f.service.update_partner(
        kEddie, "tailscale", {.any = true},
        parse_partner_patch({{"ref_code", "winter27"}, {"valid_from", "2500-01-01T00:00:00Z"}}));
    CHECK(far.kind == OutcomeKind::ok);
}

TEST_CASE("admin service: a time with second 60 is refused, never stored as the next minute",
          "[admin][service]") {
    Fixture f;
    auto scheduled = f.service.update_partner(
        kEddie, "tailscale", {.any = true},
        parse_partner_patch({{"ref_code", "winter99"}, {"valid_from", "2099-01-01T00:00:60Z"}}));
    CHECK(scheduled.kind == OutcomeKind::invalid);
    CHECK(fields(scheduled) == std::vector<std::string>{"valid_from"});
    auto body = link_body("pricing", "https://tailscale.com/pricing");
    body["expires_at"] = "2099-01-01T00:00:60Z";
    auto created = f.service.create_link(kEddie, parse_new_link(body));
    CHECK(created.kind == OutcomeKind::invalid);
    CHECK(fields(created) == std::vector<std::string>{"expires_at"});
}

}  // namespace admin_service_test
