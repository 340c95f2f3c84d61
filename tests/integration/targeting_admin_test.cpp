// Targeting rules from the editors' side, end to end: country groups edited through the admin API
// (audited, previewed, followed by the redirect), the link stats' breakdown by country and rule
// branch, and a country database replaced on disk while refgate runs. The refgate binary sits
// behind a trusted proxy (the test, 127.0.0.1, sending X-Forwarded-For) with small country
// databases written by MmdbCountryWriter.

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "refgate/tools/mmdb_writer.hpp"
#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace targeting_admin_test {

using namespace refgate::test;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;
using namespace std::chrono_literals;

Json store(const std::string& slug, const std::string& domain, const std::string& code) {
    return {{"slug", slug},
            {"name", slug},
            {"ref_param", "tag"},
            {"ref_code", code},
            {"allowed_domains", {domain}}};
}

const std::string kUs = "https://www.amazon.com/dp/B0X?tag=picks-20";
const std::string kDe = "https://www.amazon.de/dp/B0X?tag=picks-21";

// "kindle": German readers to the German store (rule 1), everyone else to the link's own
// destination (rule 0). "plain": no rules.
std::string document() {
    Json rules = Json::parse(R"([{"country": ["DE"], "partner": "amazon-de",
                                  "destination": "https://www.amazon.de/dp/B0X"}])");
    Json links = Json::array({{{"slug", "kindle"},
                               {"partner", "amazon-us"},
                               {"destination", "https://www.amazon.com/dp/B0X"},
                               {"rules", rules}},
                              {{"slug", "plain"},
                               {"partner", "amazon-us"},
                               {"destination", "https://www.amazon.com/dp/B0P"}}});
    Json partners = Json::array({store("amazon-us", "amazon.com", "picks-20"),
                                 store("amazon-de", "amazon.de", "picks-21")});
    return Json{{"partners", partners}, {"links", links}}.dump();
}

refgate::domain::IpBytes ip(const char* text) { return *refgate::domain::parse_ip(text); }

// 198.51.100.0/24 in Germany, 203.0.113.0/24 in Austria, 192.0.2.0/24 in `documentation_country`.
std::string country_database(const std::string& documentation_country) {
    refgate::tools::MmdbCountryWriter writer;
    writer.add(ip("198.51.100.0"), ip("198.51.100.255"), "DE");
    writer.add(ip("203.0.113.0"), ip("203.0.113.255"), "AT");
    writer.add(ip("192.0.2.0"), ip("192.0.2.255"), documentation_country);
    return writer.finish(1'795'953'600, "targeting_admin_test");
}

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

struct Fixture {
    TempDir dir;
    TestDatabase db;
    PrivateRedis redis;
    std::unique_ptr<ServiceProcess> service;
    std::string editor;

    Fixture() {
        auto imported = import_json(db.url(), document());
        INFO(imported.out + imported.err);
        REQUIRE(imported.exit_code == 0);
        write_file(dir.file("country.mmdb"), country_database("US"));
        service = std::make_unique<ServiceProcess>(
            ServiceOptions{.database_url = db.url(),
                           .redis_url = redis.url(),
                           .env = {{"REFGATE_FLUSH_INTERVAL_MS", "300"},
                                   {"REFGATE_BUCKET_SECONDS", "1"},
                                   {"REFGATE_TRUSTED_PROXIES", "127.0.0.1"},
                                   {"REFGATE_GEOIP_DB", dir.file("country.mmdb")}}});
        editor = create_api_token(db.url(), "eddie", "editor");
    }

    HttpResponse click(const std::string& client, const std::string& slug = "kindle",
                       const std::string& agent = kBrowser) {
        return http_request(service->port(), "GET", "/go/" + slug,
                            {{"User-Agent", agent},
                             {"X-Forwarded-For", client},
                             {"Accept-Language", "en-US,en;q=0.8"}});
    }
    std::string location(const std::string& client) {
        auto r = click(client);
        REQUIRE(r.status == 302);
        return r.header("Location");
    }
    // The Location `client` gets once it is `expected` (the snapshot or the database follows
    // within a few seconds), or the last one after 10 s.
    std::string location_becomes(const std::string& client, const std::string& expected) {
        std::string got;
        auto deadline = std::chrono::steady_clock::now() + 10s;
        while ((got = location(client)) != expected && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(100ms);
        return got;
    }
    HttpResponse api(const std::string& method, const std::string& target, const Json& body = {},
                     Headers extra = {}) {
        extra.emplace_back("Authorization", "Bearer " + editor);
        if (body.is_null()) return http_request(service->admin_port(), method, target, extra);
        extra.emplace_back("Content-Type", "application/json");
        return http_request(service->admin_port(), method, target, extra, body.dump());
    }
};

Json preview_for(const std::string& country) {
    Json link = Json::parse(document())["links"][0];
    link["reader"] = {{"country", country}};
    return link;
}

TEST_CASE(
    "editors set a partner family's country groups through the API, audited, and a reader from "
    "AT then gets the DE store in the preview and the redirect",
    "[targeting][pg]") {
    Fixture f;
    CHECK(f.location("203.0.113.5") == kUs);
    CHECK(Json::parse(f.api("GET", "/api/v1/country-groups").body)["items"] == Json::array());
    auto preview = f.api("POST", "/api/v1/links/preview", preview_for("AT"));
    CHECK(Json::parse(preview.body)["location"] == kUs);

    // Refused like the import refuses it: a country to itself.
    auto refused = f.api("PUT", "/api/v1/country-groups/amazon", {{"fallbacks", {{"AT", "AT"}}}});
    CHECK(refused.status == 422);
    CHECK(Json::parse(refused.body)["errors"][0]["field"] == "fallbacks");
    std::string viewer = create_api_token(f.db.url(), "vera", "viewer");
    CHECK(
        http_request(f.service->admin_port(), "PUT", "/api/v1/country-groups/amazon",
                     {{"Authorization", "Bearer " + viewer}, {"Content-Type", "application/json"}},
                     R"({"fallbacks": {"AT": "DE"}})")
            .status == 403);

    auto created = f.api("PUT", "/api/v1/country-groups/amazon", {{"fallbacks", {{"AT", "DE"}}}});
    REQUIRE(created.status == 201);
    CHECK(created.header("Location") == "/api/v1/country-groups/amazon");
    CHECK(created.header("ETag") == "\"1\"");
    // Replacing needs the version read.
    Json replacement = {{"fallbacks", {{"AT", "DE"}, {"CH", "DE"}}}};
    CHECK(f.api("PUT", "/api/v1/country-groups/amazon", replacement).status == 428);
    CHECK(f.api("PUT", "/api/v1/country-groups/amazon", replacement, {{"If-Match", "\"1\""}})
              .status == 200);

    preview = f.api("POST", "/api/v1/links/preview", preview_for("AT"));
    CHECK(Json::parse(preview.body)["location"] == kDe);
    CHECK(Json::parse(preview.body)["rule"] == 1);
    CHECK(f.location_becomes("203.0.113.5", kDe) == kDe);

    std::string admin = create_api_token(f.db.url(), "ada", "admin");  // the audit is admins'
    auto read_audit = [&] {
        return Json::parse(http_get(f.service->admin_port(), "/api/v1/audit?entity=country_group",
                                    {{"Authorization", "Bearer " + admin}})
                               .body)["items"];
    };
    auto audit = read_audit();
    REQUIRE(audit.size() == 2);
    CHECK(audit[0]["action"] == "update");
    CHECK(audit[0]["actor"] == "eddie");
    CHECK(audit[1]["action"] == "create");
    CHECK(Json::parse(f.api("GET", "/api/v1/export").body)["country_groups"][0]["fallbacks"] ==
          replacement["fallbacks"]);

    CHECK(f.api("DELETE", "/api/v1/country-groups/amazon", {}, {{"If-Match", "\"2\""}}).status ==
          204);
    CHECK(f.api("GET", "/api/v1/country-groups/amazon").status == 404);
    CHECK(f.location_becomes("203.0.113.5", kUs) == kUs);
    // An import's change to a group is audited as the API's is.
    auto imported =
        f.api("POST", "/api/v1/import", Json::parse(R"({"country_groups": [{"family": "amazon",
                                          "fallbacks": {"NZ": "AU"}}]})"));
    CHECK(imported.status == 200);
    // Created again, the family has a new version: the ETag read before the delete is stale.
    CHECK(f.api("GET", "/api/v1/country-groups/amazon").header("ETag") == "\"3\"");
    CHECK(f.api("DELETE", "/api/v1/country-groups/amazon", {}, {{"If-Match", "\"2\""}}).status ==
          412);
    audit = read_audit();
    REQUIRE(audit.size() == 4);
    CHECK(audit[0]["action"] == "create");
    CHECK(audit[0]["after"]["fallbacks"] == Json{{"NZ", "AU"}});
}

TEST_CASE(
    "a partner change is checked against every stored link that names it in any branch, and a "
    "partner still named by a rule cannot be deleted, so the export always imports again",
    "[targeting][pg][admin]") {
    Fixture f;
    auto etag = [&](const std::string& slug) {
        return f.api("GET", "/api/v1/partners/" + slug).header("ETag");
    };
    auto patch = [&](const std::string& slug, const Json& body) {
        return f.api("PATCH", "/api/v1/partners/" + slug, body, {{"If-Match", etag(slug)}});
    };

    // The storefront narrowing its domains past kindle's German rule is refused, naming the branch.
    auto narrowed = patch("amazon-de", {{"allowed_domains", {"amazon.co.uk"}}});
    REQUIRE(narrowed.status == 422);
    auto errors = Json::parse(narrowed.body)["errors"];
    REQUIRE(errors.size() == 1);
    CHECK(errors[0]["field"] == "allowed_domains");
    CHECK_THAT(errors[0]["message"].get<std::string>(),
               Catch::Contains("(kindle)") && Catch::Contains("rules[0].destination"));
    CHECK(Json::parse(f.api("GET", "/api/v1/partners/amazon-de").body)["allowed_domains"] ==
          Json::array({"amazon.de"}));
    CHECK(f.location_becomes("198.51.100.7", kDe) == kDe);

    // The main partner's code rotates although kindle's rule names another partner's store.
    auto rotated = patch("amazon-us", {{"ref_code", "picks-22"}});
    INFO(rotated.body);
    CHECK(rotated.status == 200);
    CHECK(f.location_becomes("203.0.113.5", "https://www.amazon.com/dp/B0X?tag=picks-22") ==
          "https://www.amazon.com/dp/B0X?tag=picks-22");

    // A rule still names the storefront: 409, and it stays.
    auto deleted =
        f.api("DELETE", "/api/v1/partners/amazon-de", {}, {{"If-Match", etag("amazon-de")}});
    CHECK(deleted.status == 409);
    CHECK_THAT(Json::parse(deleted.body)["detail"].get<std::string>(),
               Catch::Contains("kindle rules[0]"));
    CHECK(f.api("GET", "/api/v1/partners/amazon-de").status == 200);

    // What the API accepted, the import accepts: the export goes back in whole.
    auto exported = run_refgate({"export"}, {{"REFGATE_DATABASE_URL", f.db.url()}});
    REQUIRE(exported.exit_code == 0);
    auto imported = import_json(f.db.url(), exported.out);
    INFO(imported.out + imported.err);
    CHECK(imported.exit_code == 0);
}

TEST_CASE("the link stats break a targeted link's clicks down by country and by rule branch",
          "[targeting][pg]") {
    Fixture f;
    for (const char* client : {"198.51.100.7", "198.51.100.8", "198.51.100.9"})
        REQUIRE(f.click(client).status == 302);
    for (const char* client : {"192.0.2.1", "192.0.2.2"}) REQUIRE(f.click(client).status == 302);
    REQUIRE(f.click("192.0.2.3", "kindle", "curl/8.0").status == 302);  // a bot
    REQUIRE(f.click("198.51.100.7", "plain").status == 302);

    // The breakdown comes from the flushed counts (a flush every 300 ms here, of 1 s buckets):
    // asked until every click is in, 15 s at most.
    Json by_country = Json::parse(R"([
        {"country": "DE", "human": 3, "bot": 0, "prefetch": 0},
        {"country": "US", "human": 2, "bot": 1, "prefetch": 0}])");
    Json stats;
    auto deadline = std::chrono::steady_clock::now() + 15s;
    do {
        if (!stats.is_null()) std::this_thread::sleep_for(200ms);
        stats = Json::parse(f.api("GET", "/api/v1/stats/links/kindle").body);
    } while (stats["by_country"] != by_country && std::chrono::steady_clock::now() < deadline);
    CHECK(stats["by_country"] == by_country);
    CHECK(stats["by_rule"] == Json::parse(R"([
        {"rule": "0", "human": 2, "bot": 1, "prefetch": 0},
        {"rule": "1", "human": 3, "bot": 0, "prefetch": 0}])"));
    CHECK(stats["totals"]["human"] == 5);
    // A link without rules has no breakdown.
    auto plain = Json::parse(f.api("GET", "/api/v1/stats/links/plain").body);
    CHECK(plain["totals"]["human"] == 1);
    CHECK_FALSE(plain.contains("by_country"));
    CHECK_FALSE(plain.contains("by_rule"));
}

TEST_CASE(
    "a country database renamed over the configured file is used within seconds with no SIGHUP, "
    "and a broken one is refused once and the old one kept",
    "[targeting][pg]") {
    Fixture f;
    CHECK(f.location("192.0.2.7") == kUs);
    // As a package upgrade installs a file: written aside, renamed over the old one.
    write_file(f.dir.file("country.mmdb.new"), country_database("DE"));
    REQUIRE(std::rename(f.dir.file("country.mmdb.new").c_str(),
                        f.dir.file("country.mmdb").c_str()) == 0);
    CHECK(f.location_becomes("192.0.2.7", kDe) == kDe);
    CHECK(f.service->log().find("file_changed") != std::string::npos);

    write_file(f.dir.file("country.mmdb.new"), "not a MaxMind database");
    REQUIRE(std::rename(f.dir.file("country.mmdb.new").c_str(),
                        f.dir.file("country.mmdb").c_str()) == 0);
    REQUIRE(f.service->wait_for_log("country_database_rejected"));
    std::this_thread::sleep_for(2500ms);  // another poll: the same file is not tried again
    std::string log = f.service->log();
    auto first = log.find("country_database_rejected");
    CHECK(log.find("country_database_rejected", first + 1) == std::string::npos);
    CHECK(f.location("192.0.2.7") == kDe);
    CHECK(f.location("198.51.100.7") == kDe);
}

}  // namespace targeting_admin_test
