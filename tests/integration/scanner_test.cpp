// The click class `scanner` end to end: the refgate binary behind a trusted proxy (the test
// itself, 127.0.0.1, sending X-Forwarded-For), a small ASN database written by MmdbAsnWriter, a
// scanner networks file, a Redis of the test's own, the stats API, /metrics and PostgreSQL.

#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "refgate/tools/mmdb_writer.hpp"
#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace scanner_test {

using namespace refgate::test;
using namespace std::chrono_literals;
using Json = nlohmann::json;

namespace {

constexpr int kLinks = 8;

std::string document() {
    Json links = Json::array();
    for (int i = 1; i <= kLinks; ++i) {
        links.push_back({{"slug", "pick" + std::to_string(i)},
                         {"partner", "tailscale"},
                         {"destination", "https://tailscale.com/" + std::to_string(i)}});
    }
    Json partners = Json::array({{{"slug", "tailscale"},
                                  {"name", "Tailscale"},
                                  {"ref_param", "ref"},
                                  {"ref_code", "picks42"},
                                  {"allowed_domains", {"tailscale.com"}}}});
    return Json{{"partners", partners}, {"links", links}}.dump();
}

refgate::domain::IpBytes ip(const char* text) { return *refgate::domain::parse_ip(text); }

// AS64500 (an e-mail security service): 198.51.100.0/24 and 2001:db8:aaaa::/48; AS64501 (a
// broadband provider): 203.0.113.0/24 and 2001:db8:1::/48.
void write_asn_database(const std::string& path) {
    refgate::tools::MmdbAsnWriter writer;
    writer.add(ip("198.51.100.0"), ip("198.51.100.255"), 64500, "Example Mail Security");
    writer.add(ip("2001:db8:aaaa::"), ip("2001:db8:aaaa:ffff:ffff:ffff:ffff:ffff"), 64500,
               "Example Mail Security");
    writer.add(ip("203.0.113.0"), ip("203.0.113.255"), 64501, "Example Broadband");
    writer.add(ip("2001:db8:1::"), ip("2001:db8:1:ffff:ffff:ffff:ffff:ffff"), 64501,
               "Example Broadband");
    std::ofstream(path, std::ios::binary) << writer.finish(1'795'953'600, "scanner_test");
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
}

struct Fixture {
    TempDir dir;
    TestDatabase db;
    PrivateRedis redis;
    std::string viewer = create_api_token(db.url(), "dashboards", "viewer");
    std::string networks = dir.file("scanner-networks.txt");
    std::unique_ptr<ServiceProcess> service;
    std::string today = utc_today();

    explicit Fixture(const std::string& networks_text = "AS64500  # Example Mail Security\n") {
        REQUIRE(import_json(db.url(), document()).exit_code == 0);
        write_asn_database(dir.file("asn.mmdb"));
        std::ofstream(networks) << networks_text;
        service = std::make_unique<ServiceProcess>(
            ServiceOptions{.database_url = db.url(),
                           .redis_url = redis.url(),
                           .env = {{"REFGATE_FLUSH_INTERVAL_MS", "3600000"},
                                   {"REFGATE_TRUSTED_PROXIES", "127.0.0.1"},
                                   {"REFGATE_ASN_DB", dir.file("asn.mmdb")},
                                   {"REFGATE_SCANNER_NETWORKS", networks}}});
        wait_for_salt();
    }

    void click(int link, const std::string& client, const std::string& agent = kBrowser) {
        auto r = http_request(service->port(), "GET",
                              "/go/pick" + std::to_string(link) + "?src=issue-48",
                              {{"User-Agent", agent}, {"X-Forwarded-For", client}});
        REQUIRE(r.status == 302);
    }
    void wait_for_salt() {
        std::string key = "refgate:salt:" + today;
        auto deadline = std::chrono::steady_clock::now() + 10s;
        while (trimmed(redis.cli("EXISTS " + key)) != "1" &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(20ms);
        REQUIRE(trimmed(redis.cli("EXISTS " + key)) == "1");
        std::this_thread::sleep_for(500ms);
    }
    Json overview() {
        auto r =
            http_get(service->admin_port(), "/api/v1/stats/overview?from=" + today + "&to=" + today,
                     {{"Authorization", "Bearer " + viewer}});
        REQUIRE(r.status == 200);
        return Json::parse(r.body);
    }
    // Polls the stats API until the day's totals reach the clicks made.
    Json wait_for_totals(std::uint64_t human, std::uint64_t scanner) {
        auto deadline = std::chrono::steady_clock::now() + 15s;
        Json body = overview();
        auto done = [&] {
            return body["totals"]["human"] == human &&
                   body["totals"].value("scanner", 0u) == scanner;
        };
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(100ms);
            body = overview();
        }
        INFO(body.dump());
        REQUIRE(done());
        return body;
    }
    std::int64_t number(const std::string& sql) {
        pqxx::connection c(db.url());
        pqxx::work tx(c);
        auto v = tx.exec1(sql)[0];
        return v.is_null() ? 0 : v.as<std::int64_t>();
    }
};

}  // namespace

TEST_CASE(
    "a newsletter send through X-Forwarded-For: the e-mail scanners' burst counts as scanner "
    "and human equals the readers' clicks",
    "[scanner][pg][redis]") {
    Fixture f;
    // On delivery, three scanner machines of AS64500 fetch every link of the issue.
    int scanner = 0;
    for (const char* machine : {"198.51.100.10", "198.51.100.11", "2001:db8:aaaa::7"}) {
        for (int link = 1; link <= kLinks; ++link, ++scanner) f.click(link, machine);
    }
    // Then readers, each from an address of their own (AS64501), open one or two links.
    int human = 0;
    int readers_of_pick1 = 0;
    for (int reader = 0; reader < 30; ++reader) {
        std::string address = reader < 20 ? "203.0.113." + std::to_string(reader + 1)
                                          : "2001:db8:1::" + std::to_string(reader);
        std::string agent =
            "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128." +
            std::to_string(reader);
        for (int k = 0; k <= reader % 2; ++k, ++human) {
            int link = 1 + (reader + 3 * k) % kLinks;
            readers_of_pick1 += link == 1;
            f.click(link, address, agent);
        }
    }
    auto body = f.wait_for_totals(human, scanner);
    CHECK(body["totals"]["bot"] == 0);
    // The stats CSV lists the class as a column.
    auto csv = http_get(f.service->admin_port(),
                        "/api/v1/stats/overview?from=" + f.today + "&to=" + f.today,
                        {{"Authorization", "Bearer " + f.viewer}, {"Accept", "text/csv"}});
    CHECK(csv.body.starts_with("day,human,bot,prefetch,scanner,unique_estimate"));
    // /metrics labels the class.
    auto metrics = http_get(f.service->admin_port(), "/metrics");
    CHECK(metrics.body.find("refgate_clicks_total{class=\"scanner\",partner=\"tailscale\"} " +
                            std::to_string(scanner)) != std::string::npos);

    REQUIRE(f.service->stop(SIGTERM) == 0);
    auto flushed = run_refgate(
        {"flush"}, {{"REFGATE_DATABASE_URL", f.db.url()}, {"REFGATE_REDIS_URL", f.redis.url()}});
    REQUIRE(flushed.exit_code == 0);
    CHECK(f.number("SELECT sum(clicks) FROM refgate_clicks_daily WHERE class = 'human'") == human);
    CHECK(f.number("SELECT sum(clicks) FROM refgate_clicks_daily WHERE class = 'scanner'") ==
          scanner);
    CHECK(f.number("SELECT sum(scanner) FROM refgate_click_counts") == scanner);
    // Only readers feed the unique estimate.
    CHECK(f.number("SELECT unique_estimate FROM refgate_uniques_daily WHERE link = 'pick1'") ==
          readers_of_pick1);
}

TEST_CASE("a network added to the scanner networks file counts as scanner after SIGHUP",
          "[scanner][redis]") {
    Fixture f("# nothing listed yet\n");
    f.click(1, "203.0.113.50");
    f.wait_for_totals(1, 0);
    std::ofstream(f.networks, std::ios::trunc) << "AS64501  # Example Broadband\n";
    ::kill(f.service->pid(), SIGHUP);
    REQUIRE(f.service->wait_for_log("scanner_networks_reloaded"));
    f.click(2, "203.0.113.51");
    f.wait_for_totals(1, 1);
    // After a reload the listed networks' ranges are flattened out of the database at once; the
    // check then answers from them, as it did from the database.
    REQUIRE(f.service->wait_for_log("scanner_asn_ranges"));
    f.click(3, "203.0.113.60");
    f.click(4, "2001:db8:2::9");  // in no autonomous system of the database
    f.wait_for_totals(2, 2);
    // A bad line on the next SIGHUP is refused, and the list in use stays.
    std::ofstream(f.networks, std::ios::trunc) << "AS64501\nnot a network\n";
    ::kill(f.service->pid(), SIGHUP);
    REQUIRE(f.service->wait_for_log("scanner_networks_rejected"));
    f.click(3, "203.0.113.52");
    f.wait_for_totals(2, 3);
    CHECK(f.service->log().find("203.0.113.") == std::string::npos);
}

TEST_CASE("a scanner networks file with a bad line or an unreadable ASN database stops serve",
          "[scanner]") {
    TempDir dir;
    std::ofstream(dir.file("networks.txt")) << "AS8075\n\nMicrosoft\n";
    EnvPairs env = {{"REFGATE_STATE_DIR", dir.path().string()},
                    {"REFGATE_LISTEN", "127.0.0.1:0"},
                    {"REFGATE_ADMIN_LISTEN", "127.0.0.1:0"},
                    {"REFGATE_DATABASE_URL", "postgresql://127.0.0.1:1/none"},
                    {"REFGATE_REDIS_URL", "redis://127.0.0.1:1"},
                    {"REFGATE_SCANNER_NETWORKS", dir.file("networks.txt")}};
    auto bad_line = run_refgate({"serve"}, env);
    CHECK(bad_line.exit_code != 0);
    CHECK(bad_line.err.find("networks.txt: line 3: not AS<number> or an address range: "
                            "Microsoft") != std::string::npos);
    env.back() = {"REFGATE_ASN_DB", dir.file("missing.mmdb")};
    auto missing = run_refgate({"serve"}, env);
    CHECK(missing.exit_code != 0);
    CHECK(missing.err.find("REFGATE_ASN_DB (asn_db): the ASN database") != std::string::npos);
}

}  // namespace scanner_test
