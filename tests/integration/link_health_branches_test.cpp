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

}  // namespace link_health_branches_test
