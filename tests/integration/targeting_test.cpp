// Targeting rules end to end: a link with country, platform, language and split rules imported
// into PostgreSQL, the refgate binary behind a trusted proxy (the test itself, 127.0.0.1, sending
// X-Forwarded-For) with a small country database written by MmdbCountryWriter.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <set>
#include <sstream>
#include <thread>

#include "refgate/tools/mmdb_writer.hpp"
#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"
#include "support/test_env.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace targeting_test {

using namespace refgate::test;
using Json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

Json store(const std::string& slug, const std::string& domain, const std::string& code) {
    return {{"slug", slug},
            {"name", slug},
            {"ref_param", "tag"},
            {"ref_code", code},
            {"allowed_domains", {domain}}};
}

std::string document() {
    Json rules = Json::parse(R"([
        {"country": ["DE", "AT"], "partner": "amazon-de", "destination": "https://www.amazon.de/dp/B0X"},
        {"country": ["AU"], "partner": "amazon-au", "destination": "https://www.amazon.com.au/dp/B0X"},
        {"platform": ["ios"], "destination": "https://www.amazon.com/dp/B0X?app=1"},
        {"language": ["fr"], "partner": "amazon-fr", "destination": "https://www.amazon.fr/dp/B0X"},
        {"language": ["en"], "split": [{"weight": 70, "destination": "https://www.amazon.com/dp/B0X"},
                   {"weight": 30, "destination": "https://www.amazon.com/dp/B0Y"}]}])");
    Json links = Json::array({{{"slug", "kindle"},
                               {"partner", "amazon-us"},
                               {"destination", "https://www.amazon.com/dp/B0X"},
                               {"rules", rules}}});
    Json partners = Json::array({store("amazon-us", "amazon.com", "picks-20"),
                                 store("amazon-de", "amazon.de", "picks-21"),
                                 store("amazon-fr", "amazon.fr", "picks-fr"),
                                 store("amazon-au", "amazon.com.au", "picks-au")});
    Json groups = Json::array({{{"family", "amazon"}, {"fallbacks", {{"NZ", "AU"}}}}});
    return Json{{"partners", partners}, {"links", links}, {"country_groups", groups}}.dump();
}

refgate::domain::IpBytes ip(const char* text) { return *refgate::domain::parse_ip(text); }

// 198.51.100.0/24 and 2001:db8:de::/48 in Germany, 203.0.113.0/24 in New Zealand, 192.0.2.0/24 in
// the United States.
void write_country_database(const std::string& path) {
    refgate::tools::MmdbCountryWriter writer;
    writer.add(ip("198.51.100.0"), ip("198.51.100.255"), "DE");
    writer.add(ip("2001:db8:de::"), ip("2001:db8:de:ffff:ffff:ffff:ffff:ffff"), "DE");
    writer.add(ip("203.0.113.0"), ip("203.0.113.255"), "NZ");
    writer.add(ip("192.0.2.0"), ip("192.0.2.255"), "US");
    std::ofstream(path, std::ios::binary) << writer.finish(1'795'953'600, "targeting_test");
}

struct Fixture {
    TempDir dir;
    TestDatabase db;
    PrivateRedis redis;
    std::unique_ptr<ServiceProcess> service;

    explicit Fixture(bool with_database) {
        auto imported = import_json(db.url(), document());
        INFO(imported.out + imported.err);
        REQUIRE(imported.exit_code == 0);
        write_country_database(dir.file("country.mmdb"));
        service = std::make_unique<ServiceProcess>(ServiceOptions{
            .database_url = db.url(),
            .redis_url = redis.url(),
            .env = {{"REFGATE_FLUSH_INTERVAL_MS", "300"},
                    {"REFGATE_BUCKET_SECONDS", "1"},
                    {"REFGATE_TRUSTED_PROXIES", "127.0.0.1"},
                    {"REFGATE_GEOIP_DB", with_database ? dir.file("country.mmdb") : ""}}});
    }

    std::string location(const std::string& client, const std::string& agent = kBrowser,
                         const std::string& language = "en-US,en;q=0.8") {
        auto r = http_request(
            service->port(), "GET", "/go/kindle",
            {{"User-Agent", agent}, {"X-Forwarded-For", client}, {"Accept-Language", language}});
        REQUIRE(r.status == 302);
        return r.header("Location");
    }

    // Clicks in refgate_clicks_by_country_daily for `where`, once it has `expected` (15 s at most).
    std::int64_t by_country(const std::string& where, std::int64_t expected) {
        std::int64_t n = -1;
        auto deadline = std::chrono::steady_clock::now() + 15s;
        do {
            if (n >= 0) std::this_thread::sleep_for(100ms);
            pqxx::connection c(db.url());
            pqxx::work tx(c);
            n = tx.exec1(
                      "SELECT coalesce(sum(clicks), 0) FROM refgate_clicks_by_country_daily "
                      "WHERE link = 'kindle' AND " +
                      where)[0]
                    .as<std::int64_t>();
        } while (n < expected && std::chrono::steady_clock::now() < deadline);
        return n;
    }
};

// The log line of `event` that also says `text`; empty when there is none.
std::string log_line(const std::string& log, const std::string& event, const std::string& text) {
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);)
        if (line.find("\"" + event + "\"") != std::string::npos &&
            line.find(text) != std::string::npos)
            return line;
    return {};
}

const std::string kIphone =
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";

}  // namespace

TEST_CASE("readers are sent to their country's store through a trusted X-Forwarded-For",
          "[targeting][pg]") {
    Fixture f(true);
    CHECK(f.location("198.51.100.7") == "https://www.amazon.de/dp/B0X?tag=picks-21");
    CHECK(f.location("2001:db8:de::5") == "https://www.amazon.de/dp/B0X?tag=picks-21");
    // New Zealand has no store: a reader no rule matches (the split is for English readers) is
    // tried again as a reader from Australia, by the amazon family's country group.
    CHECK(f.location("203.0.113.9", kBrowser, "mi") ==
          "https://www.amazon.com.au/dp/B0X?tag=picks-au");
    CHECK(f.location("203.0.113.9").starts_with("https://www.amazon.com/dp/B0"));
    // A German reader on an iPhone still gets the German store (the first rule wins); an
    // American one gets the app.
    CHECK(f.location("198.51.100.7", kIphone) == "https://www.amazon.de/dp/B0X?tag=picks-21");
    CHECK(f.location("192.0.2.1", kIphone) == "https://www.amazon.com/dp/B0X?app=1&tag=picks-20");
    CHECK(f.location("192.0.2.1", kBrowser, "fr-CH, fr;q=0.9") ==
          "https://www.amazon.fr/dp/B0X?tag=picks-fr");
    // The split: one reader keeps their branch (drawn with the fleet's daily salt, which the
    // process has a moment after start); many readers see both.
    REQUIRE(f.service->wait_for_log("daily_salts_loaded"));
    std::string first = f.location("192.0.2.44");
    CHECK(f.location("192.0.2.44") == first);
    std::set<std::string> seen;
    for (int i = 1; i <= 40; ++i) seen.insert(f.location("192.0.2." + std::to_string(i)));
    CHECK(seen == std::set<std::string>{"https://www.amazon.com/dp/B0X?tag=picks-20",
                                        "https://www.amazon.com/dp/B0Y?tag=picks-20"});
    auto ready = http_get(f.service->admin_port(), "/readyz");
    CHECK(Json::parse(ready.body)["country_db"] == "loaded");
    // Counted per country and per rule that answered: the German clicks by the first rule, the
    // New Zealand one by the second (through the fallback), the French reader's by the fourth.
    CHECK(f.by_country("country = 'DE' AND rule = '1' AND class = 'human'", 3) == 3);
    CHECK(f.by_country("country = 'NZ' AND rule = '2'", 1) == 1);
    CHECK(f.by_country("country = 'NZ' AND rule LIKE '5.%'", 1) == 1);
    CHECK(f.by_country("country = 'US' AND rule = '4'", 1) == 1);
    CHECK(f.by_country("country = 'US' AND rule LIKE '5.%'", 42) == 42);
}

TEST_CASE("without a country database country rules are skipped and /readyz says so",
          "[targeting][pg]") {
    Fixture f(false);
    // The German reader no longer matches the country rule; the split answers.
    std::string location = f.location("198.51.100.7");
    CHECK(location.starts_with("https://www.amazon.com/dp/B0"));
    CHECK(f.location("198.51.100.7", kIphone) ==
          "https://www.amazon.com/dp/B0X?app=1&tag=picks-20");
    auto ready = http_get(f.service->admin_port(), "/readyz");
    CHECK(Json::parse(ready.body)["country_db"] == "none: country rules skipped");
    CHECK(f.service->log().find("country_rules_skipped") != std::string::npos);
    // Without a database nothing is counted per country.
    std::this_thread::sleep_for(1500ms);
    CHECK(f.by_country("true", 0) == 0);
}

TEST_CASE(
    "the admin API previews a reader's Location and refuses a rule outside its partner's domains",
    "[targeting][pg]") {
    Fixture f(true);
    std::string editor = create_api_token(f.db.url(), "eddie", "editor");
    std::vector<std::pair<std::string, std::string>> headers = {
        {"Authorization", "Bearer " + editor}, {"Content-Type", "application/json"}};
    Json link = Json::parse(document())["links"][0];
    link["slug"] = "kindle-preview";
    link["reader"] = {{"country", "AT"}, {"platform", "android"}};
    auto preview = http_request(f.service->admin_port(), "POST", "/api/v1/links/preview", headers,
                                link.dump());
    REQUIRE(preview.status == 200);
    auto body = Json::parse(preview.body);
    CHECK(body["location"] == "https://www.amazon.de/dp/B0X?tag=picks-21");
    CHECK(body["rule"] == 1);
    link["reader"] = {{"language", "en-GB"}};
    body = Json::parse(
        http_request(f.service->admin_port(), "POST", "/api/v1/links/preview", headers, link.dump())
            .body);
    CHECK(body["rule"] == 5);
    CHECK(body["split_locations"].size() == 2);

    link.erase("reader");
    link["rules"][0]["destination"] = "https://www.amazon.com/dp/B0X";  // amazon-de: amazon.de
    auto refused =
        http_request(f.service->admin_port(), "POST", "/api/v1/links", headers, link.dump());
    CHECK(refused.status == 422);
    auto errors = Json::parse(refused.body)["errors"];
    REQUIRE(errors.size() == 1);
    CHECK(errors[0]["field"] == "rules[0].destination");
    CHECK(errors[0]["rule"] == "host_not_allowed");
    // Saved through the API with good rules, the link's rules come back as given.
    link["rules"][0]["destination"] = "https://www.amazon.de/dp/B0X";
    REQUIRE(http_request(f.service->admin_port(), "POST", "/api/v1/links", headers, link.dump())
                .status == 201);
    auto stored = http_get(f.service->admin_port(), "/api/v1/links/kindle-preview",
                           {{"Authorization", "Bearer " + editor}});
    CHECK(Json::parse(stored.body)["rules"] == link["rules"]);
}

TEST_CASE("a storefront partner set inactive gets no rule traffic, and the preview says so",
          "[targeting][pg]") {
    Fixture f(true);
    std::string editor = create_api_token(f.db.url(), "eddie", "editor");
    std::vector<std::pair<std::string, std::string>> headers = {
        {"Authorization", "Bearer " + editor}, {"Content-Type", "application/json"}};
    REQUIRE(f.location("198.51.100.7") == "https://www.amazon.de/dp/B0X?tag=picks-21");

    auto partner = http_get(f.service->admin_port(), "/api/v1/partners/amazon-de", headers);
    REQUIRE(partner.status == 200);
    auto with_etag = headers;
    with_etag.emplace_back("If-Match", partner.header("ETag"));
    auto patched = http_request(f.service->admin_port(), "PATCH", "/api/v1/partners/amazon-de",
                                with_etag, R"({"active": false})");
    REQUIRE(patched.status == 200);
    // The German reader's rule is skipped once the snapshot has the change (within a second):
    // the next rule that matches answers, the English readers' split of amazon-us.
    std::string location;
    auto deadline = std::chrono::steady_clock::now() + 3s;
    do {
        location = f.location("198.51.100.7");
        if (location.find("amazon.de") == std::string::npos) break;
        std::this_thread::sleep_for(20ms);
    } while (std::chrono::steady_clock::now() < deadline);
    CHECK(location.starts_with("https://www.amazon.com/dp/B0"));
    CHECK(location.ends_with("?tag=picks-20"));
    CHECK(f.location("2001:db8:de::5", kIphone) ==
          "https://www.amazon.com/dp/B0X?app=1&tag=picks-20");
    // Another storefront keeps its readers.
    CHECK(f.location("203.0.113.9", kBrowser, "mi") ==
          "https://www.amazon.com.au/dp/B0X?tag=picks-au");

    Json link = Json::parse(document())["links"][0];
    link["reader"] = {{"country", "DE"}, {"language", "en"}};
    auto preview = http_request(f.service->admin_port(), "POST", "/api/v1/links/preview", headers,
                                link.dump());
    REQUIRE(preview.status == 200);
    auto body = Json::parse(preview.body);
    CHECK(body["rule"] == 5);
    CHECK(body["skipped_branches"] == Json::parse(R"([{"branch": "rules[0]", "partner": "amazon-de",
                                                    "reason": "partner_inactive",
                                                    "rule_skipped": true}])"));
    // Said without a reader too.
    link.erase("reader");
    body = Json::parse(
        http_request(f.service->admin_port(), "POST", "/api/v1/links/preview", headers, link.dump())
            .body);
    CHECK(body["skipped_branches"].size() == 1);
    CHECK_FALSE(body.contains("rule"));
}

TEST_CASE(
    "serve maps the built country and ASN ranges and answers by country and scanner class as the "
    "databases do",
    "[targeting][pg]") {
    // The databases and their range files the build puts beside the binary (REFGATE_GEOIP_DB and
    // REFGATE_ASN_DB default), made from the data packages: addresses of well-known networks.
    auto beside = std::filesystem::path(require_env("REFGATE_BIN")).parent_path();
    if (!std::filesystem::exists(beside / "country.ranges") ||
        !std::filesystem::exists(beside / "asn.ranges")) {
        WARN("built without the country or ASN data set: nothing to map");
        return;
    }
    TestDatabase db;
    PrivateRedis redis;
    REQUIRE(import_json(db.url(), document()).exit_code == 0);
    auto serve = [&](std::vector<std::pair<std::string, std::string>> databases) {
        ServiceOptions options{.database_url = db.url(),
                               .redis_url = redis.url(),
                               .env = {{"REFGATE_FLUSH_INTERVAL_MS", "300"},
                                       {"REFGATE_BUCKET_SECONDS", "1"},
                                       {"REFGATE_TRUSTED_PROXIES", "127.0.0.1"}}};
        for (auto& pair : databases) options.env.push_back(std::move(pair));
        return std::make_unique<ServiceProcess>(std::move(options));
    };
    auto location = [](ServiceProcess& service, const std::string& client,
                       const std::string& agent) {
        auto r = http_request(service.port(), "GET", "/go/kindle",
                              {{"User-Agent", agent},
                               {"X-Forwarded-For", client},
                               {"Accept-Language", "en-US,en;q=0.8"}});
        REQUIRE(r.status == 302);
        return r.header("Location");
    };
    const std::vector<std::pair<std::string, std::string>> readers = {
        {"85.214.1.1", kBrowser},
        {"2a01:4f8::1", kBrowser},
        {"1.1.1.1", kBrowser},
        {"8.8.8.8", kIphone},
        {"::ffff:85.214.1.1", kIphone}};

    auto mapped = serve({});
    REQUIRE(mapped->wait_for_log("scanner_check"));
    std::string log = mapped->log();
    INFO(log);
    CHECK_FALSE(log_line(log, "country_ranges", "\"form\":\"mapped\"").empty());
    CHECK_FALSE(log_line(log, "scanner_asn_ranges", "\"form\":\"mapped\"").empty());
    CHECK(log.find("range_file_rejected") == std::string::npos);
    CHECK(location(*mapped, "85.214.1.1", kBrowser) == "https://www.amazon.de/dp/B0X?tag=picks-21");
    CHECK(location(*mapped, "2a01:4f8::1", kBrowser) ==
          "https://www.amazon.de/dp/B0X?tag=picks-21");
    CHECK(location(*mapped, "1.1.1.1", kBrowser) ==
          "https://www.amazon.com.au/dp/B0X?tag=picks-au");
    CHECK(location(*mapped, "8.8.8.8", kIphone) ==
          "https://www.amazon.com/dp/B0X?app=1&tag=picks-20");
    // 40.76.4.15 is Microsoft's AS8075, in the scanner networks beside the binary, as are Hetzner's
    // AS24940 (2a01:4f8::1, found in the IPv6 table) and Google's AS15169 (8.8.8.8): scanner
    // clicks; the reader at Strato (85.214.1.1, AS6724) is a human one.
    REQUIRE(mapped->wait_for_log("daily_salts_loaded"));
    location(*mapped, "40.76.4.15", kBrowser);
    std::vector<std::string> answers;
    for (const auto& [client, agent] : readers) answers.push_back(location(*mapped, client, agent));
    auto counted = [&](const std::string& where, std::int64_t expected) {
        std::int64_t n = -1;
        auto deadline = std::chrono::steady_clock::now() + 15s;
        do {
            if (n >= 0) std::this_thread::sleep_for(100ms);
            pqxx::connection c(db.url());
            pqxx::work tx(c);
            n = tx.exec1(
                      "SELECT coalesce(sum(clicks), 0) FROM refgate_clicks_by_country_daily "
                      "WHERE link = 'kindle' AND " +
                      where)[0]
                    .as<std::int64_t>();
        } while (n < expected && std::chrono::steady_clock::now() < deadline);
        return n;
    };
    // With a pass over the readers: two more scanner clicks, two more human ones from Germany.
    CHECK(counted("class = 'scanner'", 5) == 5);
    CHECK(counted("country = 'DE' AND class = 'human'", 3) == 3);
    mapped.reset();

    // The same databases named by path: looked up in the MMDB files, as before the range files.
    auto named = serve({{"REFGATE_GEOIP_DB", (beside / "country.mmdb").string()},
                        {"REFGATE_ASN_DB", (beside / "asn.mmdb").string()}});
    REQUIRE(named->wait_for_log("scanner_check"));
    CHECK(log_line(named->log(), "country_ranges", "\"form\":\"mapped\"").empty());
    for (std::size_t i = 0; i < readers.size(); ++i)
        CHECK(location(*named, readers[i].first, readers[i].second) == answers[i]);
    location(*named, "40.76.4.15", kBrowser);
    CHECK(counted("class = 'scanner'", 8) == 8);
    CHECK(counted("country = 'DE' AND class = 'human'", 5) == 5);
}

}  // namespace targeting_test
