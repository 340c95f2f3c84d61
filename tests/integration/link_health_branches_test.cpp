// Link health of a link with targeting rules: every branch's Location is checked with the
// partner of that branch, each is kept on its own, and the link's state is its worst branch's.

#include <catch2/catch.hpp>

#include "linkcheck_fixture.hpp"
#include "support/http_client.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace link_health_branches_test {

using namespace refgate::test;
using namespace linkcheck_fixture;

namespace {

// `multi` sends iOS readers through the `shop-tag` partner (its code in `tag`, other.test one of
// its domains) to a page that moves to other.test, and splits everyone else between a clean
// chain and one that drops the code.
std::string branches_document(int port, bool with_split) {
    auto at = [&](const char* path) {
        return with_port(std::string("https://shop.test:{P}") + path, port);
    };
    Json rules = Json::array(
        {{{"platform", {"ios"}}, {"partner", "shop-tag"}, {"destination", at("/moved")}}});
    if (with_split)
        rules.push_back({{"split",
                          {{{"weight", 50}, {"destination", at("/clean")}},
                           {{"weight", 50}, {"destination", at("/drop")}}}}});
    Json doc = Json::parse(document(port, {}));
    doc["partners"].push_back({{"slug", "shop-tag"},
                               {"name", "Shop (tag)"},
                               {"ref_param", "tag"},
                               {"ref_code", "picks-20"},
                               {"allowed_domains", {"shop.test", "other.test"}}});
    doc["links"].push_back(
        {{"slug", "multi"}, {"partner", "shop"}, {"destination", at("/clean")}, {"rules", rules}});
    return doc.dump();
}

// `sub-*` links route to `shop-sub`, whose Locations carry the sub-ID `sid` and, for a click
// without `src`, the code of the channel `direct`; /keepref keeps only `ref` on its way.
std::string subid_document(int port) {
    auto at = [&](const char* path) {
        return with_port(std::string("https://shop.test:{P}") + path, port);
    };
    Json doc = Json::parse(document(port, {}));
    doc["partners"].push_back(
        {{"slug", "shop-sub"},
         {"name", "Shop (sub-ID)"},
         {"ref_param", "ref"},
         {"ref_code", "picks42"},
         {"allowed_domains", {"shop.test"}},
         {"subid_param", "sid"},
         {"channel_codes", {{{"channel", "direct"}, {"ref_code", "picks-direct"}}}}});
    doc["links"].push_back(
        {{"slug", "sub-clean"}, {"partner", "shop-sub"}, {"destination", at("/clean")}});
    doc["links"].push_back(
        {{"slug", "sub-drop"}, {"partner", "shop-sub"}, {"destination", at("/keepref")}});
    // Its own partner has no sub-ID (the same chain is ok there); its iOS branch has one.
    doc["links"].push_back(
        {{"slug", "sub-multi"},
         {"partner", "shop"},
         {"destination", at("/keepref")},
         {"rules",
          {{{"platform", {"ios"}}, {"partner", "shop-sub"}, {"destination", at("/keepref")}}}}});
    return doc.dump();
}

EnvPairs env_confirming_at_once(const TestDatabase& db, const ScenarioServer& s) {
    EnvPairs env = checker_env(db, s);
    env.push_back({"REFGATE_LINKCHECK_CONFIRM_AFTER", "0s"});
    env.push_back({"REFGATE_LINKCHECK_INTERVAL", "0"});
    return env;
}

}  // namespace

TEST_CASE(
    "every targeting branch of a link is checked with its own partner's code, and the branch "
    "that drops the code makes the link code_dropped",
    "[linkhealth][pg]") {
    auto& s = server();
    TestDatabase db;
    REQUIRE(import_document(db.url(), branches_document(s.port(), true)));
    auto env = env_confirming_at_once(db, s);

    auto r = run_refgate({"check-links", "--slug", "multi"}, env);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const std::string p = std::to_string(s.port());
    CHECK(r.out.find("multi\tok\t-\t") != std::string::npos);
    // The iOS branch carries shop-tag's code and may end on other.test: ok for its partner.
    CHECK(r.out.find("multi@rules[0]\tok\t-\t") != std::string::npos);
    CHECK(r.out.find("  302 https://shop.test:" + p + "/moved?tag=picks-20 -> https://other.test:" +
                     p + "/p/moved?tag=picks-20") != std::string::npos);
    CHECK(r.out.find("multi@rules[1].split[0]\tok\t-\t") != std::string::npos);
    CHECK(r.out.find("multi@rules[1].split[1]\tcode_dropped\tmissing\tpending") !=
          std::string::npos);
    CHECK(r.out.find("checked: 1 link(s), 1 not ok") != std::string::npos);
    CHECK(db.scalar("SELECT count(*) FROM refgate_link_health") == "4");

    // The second check confirms it; the link's state is its worst branch's.
    REQUIRE(run_refgate({"check-links", "--slug", "multi"}, env).exit_code == 0);
    CHECK(db.scalar("SELECT branch || ' ' || state FROM refgate_link_health_worst") ==
          "rules[1].split[1] code_dropped");

    ServiceProcess service(ServiceOptions{.database_url = db.url(), .env = env});
    std::string viewer = create_api_token(db.url(), "vera", "viewer");
    auto api = [&](const std::string& target) {
        auto answer = http_request(service.admin_port(), "GET", target,
                                   {{"Authorization", "Bearer " + viewer}});
        INFO(answer.body);
        REQUIRE(answer.status == 200);
        return Json::parse(answer.body);
    };
    auto health = api("/api/v1/links/multi/health");
    CHECK(health["state"] == "code_dropped");
    CHECK(health["branch"] == "rules[1].split[1]");
    CHECK(health["chain"][0]["url"].get<std::string>().ends_with("/drop?ref=picks42"));
    REQUIRE(health["branches"].size() == 4);
    CHECK(health["branches"][0]["branch"] == "default");
    CHECK(health["branches"][1]["branch"] == "rules[0]");
    CHECK(health["branches"][1]["state"] == "ok");
    CHECK(health["branches"][1]["chain"][1]["url"] ==
          "https://other.test:" + p + "/p/moved?tag=picks-20");
    CHECK(health["history"][0].contains("branch"));
    // The filter names links with a branch in the state: the storefront branch that drops the
    // code is found even though the link's own destination is fine.
    CHECK(api("/api/v1/links?health=code_dropped")["items"].size() == 1);
    CHECK(api("/api/v1/links?health=ok")["items"].size() == 1);
    CHECK(api("/api/v1/links?health=broken")["items"].size() == 0);

    // Rules without the split: its branches' health is forgotten at the next check.
    REQUIRE(import_document(db.url(), branches_document(s.port(), false)));
    REQUIRE(run_refgate({"check-links", "--slug", "multi"}, env).exit_code == 0);
    CHECK(db.scalar("SELECT string_agg(branch || ' ' || state, ', ' ORDER BY branch) FROM "
                    "refgate_link_health") == "default ok, rules[0] ok");
    CHECK(api("/api/v1/links?health=ok")["items"].size() == 1);
}

TEST_CASE(
    "a branch whose partner chain drops the sub-ID parameter is code_dropped subid_missing, and "
    "each branch is checked with the code of the channel direct",
    "[linkhealth][pg][placements]") {
    auto& s = server();
    TestDatabase db;
    REQUIRE(import_document(db.url(), subid_document(s.port())));
    auto env = env_confirming_at_once(db, s);

    auto r = run_refgate({"check-links"}, env);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const std::string p = std::to_string(s.port());
    // The check requests what a click without `src` gets: the direct code and token.
    CHECK(r.out.find("  302 https://shop.test:" + p + "/clean?ref=picks-direct&sid=") !=
          std::string::npos);
    CHECK(r.out.find("sub-clean\tok\t-\t") != std::string::npos);
    CHECK(r.out.find("sub-drop\tcode_dropped\tsubid_missing\tpending") != std::string::npos);
    CHECK(r.out.find("sub-multi\tok\t-\t") != std::string::npos);
    CHECK(r.out.find("sub-multi@rules[0]\tcode_dropped\tsubid_missing\tpending") !=
          std::string::npos);

    // Confirmed by the second check: the API, the filter and the metric's state name it.
    REQUIRE(run_refgate({"check-links"}, env).exit_code == 0);
    ServiceProcess service(ServiceOptions{.database_url = db.url(), .env = env});
    std::string viewer = create_api_token(db.url(), "vera", "viewer");
    auto api = [&](const std::string& target) {
        auto answer = http_request(service.admin_port(), "GET", target,
                                   {{"Authorization", "Bearer " + viewer}});
        INFO(answer.body);
        REQUIRE(answer.status == 200);
        return Json::parse(answer.body);
    };
    auto health = api("/api/v1/links/sub-drop/health");
    CHECK(health["state"] == "code_dropped");
    CHECK(health["detail"] == "subid_missing");
    auto multi = api("/api/v1/links/sub-multi/health");
    CHECK(multi["state"] == "code_dropped");
    CHECK(multi["branch"] == "rules[0]");
    CHECK(multi["detail"] == "subid_missing");
    CHECK(api("/api/v1/links?health=code_dropped")["items"].size() == 2);
}

}  // namespace link_health_branches_test
