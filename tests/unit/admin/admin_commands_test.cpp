// The admin API's commands as the HTTP layer reads them from a body (import_document.hpp): a
// PATCH answers exactly as the patch merged into the stored object (RFC 7396) and read whole by
// the import's rules did before commands were typed (same fields, same messages, same order),
// and the service applies the typed patch.

#include <catch2/catch.hpp>

#include "fake_admin_rows.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_document.hpp"
#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace admin_commands_test {

namespace {

using namespace refgate::admin;
using refgate::admin::testing::body;
using refgate::admin::testing::FakeRepository;
using Json = nlohmann::ordered_json;

const Actor kEddie{"eddie", Role::editor};
const Precondition kAny{.any = true};

// What a PATCH answered before: the stored object with the patch merged in, read by the import.
std::pair<Json, std::vector<refgate::codec::FieldError>> merged_then_read(const char* array,
                                                                          const Json& stored,
                                                                          const Json& patch) {
    Json merged = stored;
    merged.merge_patch(patch);
    auto parsed = refgate::codec::parse_import(Json{{array, Json::array({merged})}});
    std::vector<refgate::codec::FieldError> errors;
    for (const auto& issue : parsed.issues) errors.push_back({issue.field, issue.message});
    Json value = std::string(array) == "partners"
                     ? refgate::codec::partner_to_json(parsed.document.partners.front())
                     : refgate::codec::link_to_json(parsed.document.links.front());
    return {value, errors};
}

std::vector<std::string> texts(const std::vector<refgate::codec::FieldError>& errors) {
    std::vector<std::string> out;
    for (const auto& e : errors) out.push_back(e.field + " " + e.message);
    return out;
}

refgate::domain::Link stored_link() {
    auto link = refgate::testing::make_link("pricing");
    link.fallback = "https://tailscale.com/";
    link.expires_at = refgate::domain::parse_rfc3339("2031-01-01T00:00:00Z");
    link.utm_passthrough = true;
    return link;
}

struct Fixture {
    AdminService service{std::make_unique<FakeRepository>()};

    Fixture() {
        Json partner = refgate::codec::partner_to_json(refgate::testing::tailscale());
        REQUIRE(service.create_partner(kEddie, refgate::codec::parse_new_partner(partner)).kind ==
                OutcomeKind::created);
        REQUIRE(service
                    .create_link(kEddie, refgate::codec::parse_new_link(
                                             refgate::codec::link_to_json(stored_link())))
                    .kind == OutcomeKind::created);
    }
};

}  // namespace

TEST_CASE("admin commands: a partner patch answers as the merged object read by the import did",
          "[admin][commands]") {
    const refgate::domain::Partner stored =
        refgate::testing::tailscale();  // ref, utm_medium=affiliate
    const char* patches[] = {
        R"({"colour": "red"})",
        R"({"colour": null, "name": "Tailscale Inc."})",
        R"({"name": 5})",
        R"({"name": null})",
        R"({"active": null})",
        R"({"active": "yes", "name": "", "colour": 1, "shade": 2})",
        R"({"extra_params": null})",
        R"({"extra_params": []})",
        R"({"extra_params": {"utm_medium": null, "utm_source": "picks"}})",
        R"({"extra_params": {"bad key": "x", "utm_medium": 5, "n": {"a": null}}})",
        R"({"ref_param": "utm_medium"})",
        R"({"ref_param": "utm_medium", "extra_params": {"utm_medium": 7, "bad key": "x"}})",
        R"({"ref_param": 5, "ref_code": "", "active": 1})",
        R"({"active": 1, "extra_params": {"bad key": "x"}, "name": ""})",
        R"({"allowed_domains": [5, "Tailscale.COM", "bad domain", "tailscale.io"]})",
        R"({"allowed_domains": null})",
        R"({"allowed_domains": {"a": null}})",
        R"({"version": 3, "created_at": "x", "updated_at": null})",
    };
    for (const char* text : patches) {
        INFO(text);
        Json patch = Json::parse(text);
        auto [value, errors] =
            merged_then_read("partners", refgate::codec::partner_to_json(stored), patch);
        auto patched =
            refgate::codec::apply_patch(refgate::codec::parse_partner_patch(patch), stored);
        CHECK(texts(patched.errors) == texts(errors));
        if (errors.empty()) CHECK(refgate::codec::partner_to_json(patched.partner) == value);
    }
}

TEST_CASE("admin commands: a link patch answers as the merged object read by the import did",
          "[admin][commands]") {
    const refgate::domain::Link stored = stored_link();
    const char* patches[] = {
        R"({"expires_at": null, "fallback": null})",
        R"({"status": null, "utm_passthrough": null})",
        R"({"status": "gone", "utm_passthrough": 1})",
        R"({"destination": null, "partner": "Not A Slug", "colour": 1})",
        R"({"destination": 5})",
        R"({"expires_at": "2031-02-30T00:00:00Z"})",
        R"({"rules": {"a": null}})",
        R"({"rules": "all"})",
        R"({"rules": [{"country": ["DE"], "destination": "https://tailscale.com/de"}]})",
        R"({"rules": null, "fallback": "https://tailscale.com/x"})",
    };
    for (const char* text : patches) {
        INFO(text);
        Json patch = Json::parse(text);
        auto [value, errors] =
            merged_then_read("links", refgate::codec::link_to_json(stored), patch);
        auto parsed = refgate::codec::parse_link_patch(patch);
        CHECK(texts(parsed.errors) == texts(errors));
        if (errors.empty())
            CHECK(refgate::codec::link_to_json(refgate::codec::apply_patch(parsed, stored)) ==
                  value);
    }
}

TEST_CASE("admin commands: a patch with an unknown field or a wrong type is refused by name",
          "[admin][commands]") {
    Fixture f;
    auto unknown = f.service.update_link(kEddie, "pricing", kAny,
                                         refgate::codec::parse_link_patch({{"colour", 1}}));
    CHECK(unknown.kind == OutcomeKind::invalid);
    CHECK(texts(unknown.errors) == std::vector<std::string>{"colour is not a known field"});
    auto wrong = f.service.update_partner(kEddie, "tailscale", kAny,
                                          refgate::codec::parse_partner_patch({{"active", "no"}}));
    CHECK(texts(wrong.errors) == std::vector<std::string>{"active must be true or false"});
    CHECK(body(f.service.get_partner("tailscale"))["active"] == true);
    // As before, the object is found and If-Match checked before the body's rules are applied.
    CHECK(
        f.service
            .update_link(kEddie, "nobody", kAny, refgate::codec::parse_link_patch({{"colour", 1}}))
            .kind == OutcomeKind::not_found);
    CHECK(f.service
              .update_partner(kEddie, "tailscale", {.version = 9},
                              refgate::codec::parse_partner_patch({{"active", "no"}}))
              .kind == OutcomeKind::stale);
    auto renamed = f.service.update_link(
        kEddie, "pricing", kAny, refgate::codec::parse_link_patch({{"slug", 7}, {"colour", 1}}));
    CHECK(texts(renamed.errors) == std::vector<std::string>{"slug cannot be changed"});
}

TEST_CASE("admin commands: null clears what may be cleared and stores the change",
          "[admin][commands]") {
    Fixture f;
    auto cleared = f.service.update_link(
        kEddie, "pricing", kAny,
        refgate::codec::parse_link_patch(Json::parse(R"({"fallback": null, "expires_at": null})")));
    REQUIRE(cleared.kind == OutcomeKind::ok);
    CHECK_FALSE(cleared.view.link.fallback);
    CHECK_FALSE(cleared.view.link.expires_at);
    CHECK(cleared.view.link.utm_passthrough);  // what the patch does not name stays
    CHECK(body(f.service.get_link("pricing"))["fallback"].is_null());

    auto extras = f.service.update_partner(kEddie, "tailscale", kAny,
                                           refgate::codec::parse_partner_patch(Json::parse(
                                               R"({"extra_params": {"utm_medium": null}})")));
    REQUIRE(extras.kind == OutcomeKind::ok);
    CHECK(extras.view.partner.extra_params.empty());
    CHECK(extras.view.partner.ref_code == "picks42");

    auto required = f.service.update_link(
        kEddie, "pricing", kAny,
        refgate::codec::parse_link_patch(Json::parse(R"({"destination": null})")));
    CHECK(texts(required.errors) == std::vector<std::string>{"destination is required"});
}

TEST_CASE("admin commands: a patched destination outside the partner's domains is never stored",
          "[admin][commands]") {
    Fixture f;
    std::string stored = f.service.get_link("pricing").view.link.destination;
    auto refused = f.service.update_link(
        kEddie, "pricing", kAny,
        refgate::codec::parse_link_patch({{"destination", "https://evil.example/"}}));
    REQUIRE(refused.kind == OutcomeKind::invalid);
    REQUIRE(refused.errors.size() == 1);
    CHECK(refused.errors[0].field == "destination");
    CHECK_THAT(refused.errors[0].message, Catch::EndsWith("[host_not_allowed]"));
    CHECK(f.service.get_link("pricing").view.link.destination == stored);

    auto created = f.service.create_link(
        kEddie, refgate::codec::parse_new_link({{"slug", "evil"},
                                                {"partner", "tailscale"},
                                                {"destination", "https://evil.example/"}}));
    CHECK(created.kind == OutcomeKind::invalid);
    CHECK(f.service.get_link("evil").kind == OutcomeKind::not_found);
}

}  // namespace admin_commands_test
