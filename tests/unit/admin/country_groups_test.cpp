// The admin service's country groups against rows kept in memory: a family's mapping is created,
// replaced (with the ETag it was read at) and deleted, refused like the import refuses it, audited,
// and applied by the preview as the redirect applies it.

#include <catch2/catch.hpp>

#include "fake_admin_rows.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_document.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace country_groups_test {

using namespace refgate::admin;
using refgate::admin::testing::audited;
using refgate::admin::testing::body;
using refgate::admin::testing::FakeRepository;
using Json = nlohmann::ordered_json;
using refgate::codec::parse_link_preview;
using refgate::codec::parse_new_partner;

const Actor kEddie{"eddie", Role::editor};

Json store(const std::string& slug, const std::string& domain, const std::string& code) {
    return {{"slug", slug},
            {"name", slug},
            {"ref_param", "tag"},
            {"ref_code", code},
            {"allowed_domains", {domain}}};
}

struct Fixture {
    FakeRepository* rows;
    AdminService service;

    Fixture() : Fixture(std::make_unique<FakeRepository>()) {}
    explicit Fixture(std::unique_ptr<FakeRepository> r) : rows(r.get()), service(std::move(r)) {}
    Result<refgate::codec::CountryGroupView> put(const Json& body, PutPrecondition pre = {}) {
        return service.put_country_group(kEddie, "amazon", pre,
                                         refgate::codec::parse_country_group_put("amazon", body));
    }
};

TEST_CASE("country groups: a family's mapping is created, then replaced only at the version read",
          "[admin][service]") {
    Fixture f;
    auto created = f.put(Json::parse(R"({"fallbacks": {"AT": "DE", "NZ": "AU"}})"));
    REQUIRE(created.kind == OutcomeKind::created);
    CHECK(body(created)["fallbacks"] == Json::parse(R"({"AT": "DE", "NZ": "AU"})"));
    CHECK(created.version == 1);
    CHECK(body(f.service.list_country_groups())["items"].size() == 1);

    Json change = Json::parse(R"({"fallbacks": {"AT": "DE", "CH": "DE"}})");
    CHECK(f.put(change).kind == OutcomeKind::precondition_required);
    CHECK(f.put(change, {.if_match = Precondition{.version = 7}}).kind == OutcomeKind::stale);
    CHECK(f.put(change, {.if_none_match_any = true}).kind == OutcomeKind::stale);
    auto replaced = f.put(change, {.if_match = Precondition{.version = 1}});
    REQUIRE(replaced.kind == OutcomeKind::ok);
    CHECK(body(replaced)["fallbacks"] == Json::parse(R"({"AT": "DE", "CH": "DE"})"));
    CHECK(replaced.version == 2);

    const auto& audit = f.rows->state.audit;
    REQUIRE(audit.size() == 2);
    CHECK(audit[1].entity == "country_group");
    CHECK(audit[1].slug == "amazon");
    CHECK(audit[1].action == "update");
    CHECK(audited(audit[1].before)["fallbacks"]["NZ"] == "AU");

    CHECK(f.service.delete_country_group(kEddie, "amazon", {.version = 1}).kind ==
          OutcomeKind::stale);
    CHECK(f.service.delete_country_group(kEddie, "amazon", {.version = 2}).kind ==
          OutcomeKind::deleted);
    CHECK(f.service.get_country_group("amazon").kind == OutcomeKind::not_found);
    CHECK(f.rows->state.audit.back().action == "delete");
}

TEST_CASE("country groups: a bad mapping is refused field by field and nothing is stored",
          "[admin][service]") {
    Fixture f;
    auto refused = f.put(Json::parse(R"({"fallbacks": {"AT": "AT", "de": "FR"}})"));
    REQUIRE(refused.kind == OutcomeKind::invalid);
    REQUIRE(!refused.errors.empty());
    for (const auto& e : refused.errors) CHECK(e.field == "fallbacks");
    CHECK(f.put(Json::parse(R"({"fallbacks": []})")).kind == OutcomeKind::invalid);
    CHECK(f.put(Json::parse(R"({"family": "other", "fallbacks": {}})")).errors[0].field ==
          "family");
    CHECK(f.put(Json::parse(R"({"fallbacks": {}, "colour": 1})")).kind == OutcomeKind::invalid);
    CHECK(f.rows->state.country_groups.empty());
    CHECK(f.rows->commits == 0);
}

TEST_CASE("country groups: the preview sends a reader from AT to the DE store by the family's map",
          "[admin][service]") {
    Fixture f;
    for (const auto& p : {store("amazon-us", "amazon.com", "picks-20"),
                          store("amazon-de", "amazon.de", "picks-21")})
        REQUIRE(f.service.create_partner(kEddie, parse_new_partner(p)).kind ==
                OutcomeKind::created);
    Json link = Json::parse(R"({"slug": "kindle", "partner": "amazon-us",
        "destination": "https://www.amazon.com/dp/B0X",
        "rules": [{"country": ["DE"], "partner": "amazon-de",
                   "destination": "https://www.amazon.de/dp/B0X"}],
        "reader": {"country": "AT"}})");
    auto before = f.service.preview_link(parse_link_preview(link));
    REQUIRE(before.kind == OutcomeKind::ok);
    CHECK(body(before)["location"] == "https://www.amazon.com/dp/B0X?tag=picks-20");
    CHECK(body(before)["rule"] == 0);

    REQUIRE(f.put(Json::parse(R"({"fallbacks": {"AT": "DE"}})")).kind == OutcomeKind::created);
    auto after = f.service.preview_link(parse_link_preview(link));
    CHECK(body(after)["location"] == "https://www.amazon.de/dp/B0X?tag=picks-21");
    CHECK(body(after)["rule"] == 1);
}

}  // namespace country_groups_test
