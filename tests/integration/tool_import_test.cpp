// Moving in (issue 46): `refgate import --from <tool> FILE` against each tool's fixture
// (tests/fixtures/import/README.md says where each format comes from), into a real PostgreSQL.

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace tool_import_test {

using namespace refgate::test;

namespace {

std::string fixture(const std::string& name) {
    return std::string(REFGATE_SOURCE_DIR) + "/tests/fixtures/import/" + name;
}

// A file of this test's own in the temporary directory, holding `text`.
std::string temp_file(const std::string& name, const std::string& text) {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("refgate-" + std::to_string(::getpid()) + "-" + name))
                           .string();
    std::ofstream(path) << text;
    return path;
}

CommandResult import_from(TestDatabase& db, const std::string& tool, const std::string& file,
                          std::vector<std::string> options = {}) {
    std::vector<std::string> args{"import", "--from", tool};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(fixture(file));
    return run_refgate(args, {{"REFGATE_DATABASE_URL", db.url()}});
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string destination(TestDatabase& db, const std::string& slug) {
    return db.scalar("SELECT destination FROM refgate_links WHERE slug = '" + slug + "'");
}

std::string code(TestDatabase& db, const std::string& partner) {
    return db.scalar("SELECT ref_param || '=' || ref_code FROM refgate_partners WHERE slug = '" +
                     partner + "'");
}

}  // namespace

TEST_CASE("Pretty Links: the dry run shows partners by registrable domain and proposed codes",
          "[import][pg][tools]") {
    TestDatabase db;
    auto dry = import_from(db, "prettylinks", "prettylinks.csv", {"--dry-run"});
    INFO(dry.out << dry.err);
    REQUIRE(dry.exit_code == 0);
    // amazon.com and amazon.co.uk are two registrable domains (co.uk is a public suffix).
    CHECK(contains(dry.out, "partner amazon (amazon.com): destinations on amazon.com"));
    CHECK(contains(dry.out, "partner amazon-co-uk (amazon.co.uk)"));
    CHECK(contains(dry.out, "partner kagi (kagi.com)"));
    CHECK(contains(dry.out,
                   "proposed locked code: tag=picks-20 (in 2 link URL(s)); --lock-codes moves"));
    CHECK(contains(dry.out, "link Go/Echo-Dot -> go-echo-dot (amazon)"));
    CHECK(contains(dry.out, "click history is not imported"));
    CHECK(contains(dry.out, "dry run: nothing applied"));
    CHECK(db.scalar("SELECT count(*) FROM refgate_links") == "0");

    // With --lock-codes the code leaves the URLs (the other parameters stay) for the partner's.
    auto locked = import_from(db, "prettylinks", "prettylinks.csv", {"--lock-codes"});
    INFO(locked.out << locked.err);
    REQUIRE(locked.exit_code == 0);
    CHECK(contains(locked.out, "click history is not imported"));
    CHECK(code(db, "amazon") == "tag=picks-20");
    CHECK(code(db, "amazon-co-uk") == "tag=picksuk-21");
    CHECK(code(db, "kagi") == "ref=picks42");
    CHECK(destination(db, "go-echo-dot") == "https://www.amazon.com/dp/B09B8V1LZ3?th=1");
    CHECK(destination(db, "kindle") == "https://www.amazon.com/dp/B0CFPJYX7P");
    CHECK(db.scalar("SELECT count(*) FROM refgate_links") == "4");
    CHECK(db.scalar("SELECT name FROM refgate_partners WHERE slug = 'amazon'") == "amazon.com");
}

TEST_CASE("ThirstyAffiliates: codes stay in the URLs without --lock-codes, a map names partners",
          "[import][pg][tools]") {
    TestDatabase db;
    std::string map =
        temp_file("map-ta.json", R"({"nordvpn.net": {"slug": "nord", "name": "NordVPN"}})");
    auto r = import_from(db, "thirstyaffiliates", "thirstyaffiliates.csv", {"--partner-map", map});
    std::remove(map.c_str());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out,
                   "partner nord (NordVPN): destinations on nordvpn.net (named by --partner-map)"));
    CHECK(contains(r.out, "proposed locked code: aff_id=4242 (in 2 link URL(s))"));
    CHECK(code(db, "nord") == "aff_id=4242");
    CHECK(code(db, "bluehost") == "aff=picks42");
    // Not moved: the URL keeps its parameter (the Location sets it once, to the same code).
    CHECK(destination(db, "nordvpn") == "https://go.nordvpn.net/aff_c?offer_id=15&aff_id=4242");
    CHECK(db.scalar("SELECT count(*) FROM refgate_links WHERE partner_id = (SELECT id FROM "
                    "refgate_partners WHERE slug = 'nord')") == "2");
}

TEST_CASE("Shlink: a destination without a referral parameter needs its code from the map",
          "[import][pg][tools]") {
    TestDatabase db;
    auto refused = import_from(db, "shlink", "shlink.csv", {"--lock-codes"});
    INFO(refused.out << refused.err);
    CHECK(refused.exit_code == 1);
    CHECK(contains(refused.out + refused.err,
                   "partner 'example' (example.org): no referral parameter in its URLs"));
    CHECK(db.scalar("SELECT count(*) FROM refgate_partners") == "0");  // all or nothing

    std::string map = temp_file(
        "map-shlink.json",
        R"({"example.org": {"slug": "spec-org", "ref_param": "src", "ref_code": "picks"}})");
    auto r = import_from(db, "shlink", "shlink.csv", {"--lock-codes", "--partner-map", map});
    std::remove(map.c_str());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(code(db, "tailscale") == "ref=picks42");
    CHECK(code(db, "spec-org") == "src=picks");
    CHECK(destination(db, "tailscale") == "https://tailscale.com/pricing");
    CHECK(destination(db, "ts-docs") == "https://tailscale.com/kb/1017/install");
    CHECK(destination(db, "spec") == "https://www.example.org/spec/v2");  // "Spec" -> spec
}

TEST_CASE("YOURLS: the API's stats JSON, keywords from the short URLs, no clicks or addresses",
          "[import][pg][tools]") {
    TestDatabase db;
    auto r = import_from(db, "yourls", "yourls.json", {"--lock-codes"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "partner etsy (etsy.com)"));
    CHECK(contains(r.out, "proposed locked code: ref=picks42 (in 2 link URL(s)); moved out"));
    CHECK(code(db, "etsy") == "ref=picks42");
    CHECK(destination(db, "mug") == "https://www.etsy.com/listing/1234567/stoneware-mug?pro=1");
    CHECK(destination(db, "vase") == "https://www.etsy.com/listing/7654321/vase");
    // Neither the creator's address nor the old click counts went anywhere.
    CHECK(!contains(r.out, "203.0.113.7"));
    CHECK(db.scalar("SELECT count(*) FROM refgate_click_counts") == "0");
    // An unknown tool is a usage error.
    CHECK(import_from(db, "bitly", "yourls.json").exit_code == 2);
}

}  // namespace tool_import_test
