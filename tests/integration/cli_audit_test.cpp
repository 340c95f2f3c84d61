// The CLI's writes leave the same audit trail as the admin API's: who, what, before and after.

#include <pwd.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace cli_audit_test {

using refgate::test::run_refgate;
using refgate::test::TestDatabase;
using Json = nlohmann::json;

namespace {

Json document(const std::string& code) {
    Json doc = Json::parse(R"json({
      "partners": [
        {"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks42",
         "allowed_domains": ["tailscale.com"]},
        {"slug": "backblaze", "name": "Backblaze", "ref_param": "referrer", "ref_code": "bb-7",
         "allowed_domains": ["backblaze.com"]}
      ],
      "links": [
        {"slug": "tailscale", "partner": "tailscale", "destination": "https://tailscale.com/"}
      ]
    })json");
    doc["partners"][0]["ref_code"] = code;
    return doc;
}

std::string os_user() {
    const passwd* user = getpwuid(geteuid());
    return user != nullptr ? user->pw_name : "uid" + std::to_string(geteuid());
}

int run_import(TestDatabase& db, const Json& doc, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"import", "-"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_refgate(args, {{"REFGATE_DATABASE_URL", db.url()}}, doc.dump());
    INFO(r.err);
    return r.exit_code;
}

}  // namespace

TEST_CASE("a referral code changed by refgate import is audited once, with who and before/after",
          "[audit][import][pg]") {
    TestDatabase db;
    REQUIRE(run_import(db, document("picks42")) == 0);
    const std::string actor = "cli:" + os_user();
    // Creating two partners and a link: one entry each, by the OS user.
    CHECK(db.scalar("SELECT count(*) FROM refgate_audit") == "3");
    CHECK(db.scalar("SELECT string_agg(DISTINCT actor, ',') FROM refgate_audit") == actor);
    CHECK(db.scalar("SELECT action FROM refgate_audit WHERE slug = 'backblaze'") == "create");

    REQUIRE(run_import(db, document("picks43")) == 0);
    const std::string changed =
        "FROM refgate_audit WHERE entity = 'partner' AND slug = 'tailscale' AND action = 'update'";
    CHECK(db.scalar("SELECT count(*) FROM refgate_audit") == "4");
    CHECK(db.scalar("SELECT actor " + changed) == actor);
    CHECK(db.scalar("SELECT before->>'ref_code' " + changed) == "picks42");
    CHECK(db.scalar("SELECT after->>'ref_code' " + changed) == "picks43");
    CHECK(db.scalar("SELECT (after->>'version')::int - (before->>'version')::int " + changed) ==
          "1");

    // The same file again changes nothing and records nothing.
    REQUIRE(run_import(db, document("picks43")) == 0);
    CHECK(db.scalar("SELECT count(*) FROM refgate_audit") == "4");

    // --actor names someone else.
    REQUIRE(run_import(db, document("picks44"), {"--actor", "release-bot"}) == 0);
    CHECK(db.scalar("SELECT actor FROM refgate_audit ORDER BY id DESC LIMIT 1") ==
          "cli:release-bot");
    CHECK(run_import(db, document("picks45"), {"--actor", "bad actor"}) == 2);
}

TEST_CASE("refgate token create and revoke are audited as the OS user", "[audit][admin][pg]") {
    TestDatabase db;
    const std::string actor = "cli:" + os_user();
    refgate::test::EnvPairs env{{"REFGATE_DATABASE_URL", db.url()}};
    REQUIRE(
        run_refgate({"token", "create", "--name", "ci-bot", "--role", "editor"}, env).exit_code ==
        0);
    CHECK(db.scalar("SELECT actor || ' ' || action || ' ' || (after->>'role') FROM refgate_audit "
                    "WHERE entity = 'token' AND slug = 'ci-bot'") == actor + " create editor");
    REQUIRE(run_refgate({"token", "revoke", "ci-bot"}, env).exit_code == 0);
    CHECK(
        db.scalar("SELECT actor FROM refgate_audit WHERE entity = 'token' AND action = 'revoke'") ==
        actor);
}

}  // namespace cli_audit_test
