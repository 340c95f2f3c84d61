// The commission families of /metrics (issue 43) end to end: commissions imported with the CLI
// into a real PostgreSQL, read by the service's background worker, scraped from /metrics, and
// accepted by promtool.

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"
#include "support/test_env.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace commission_metrics_test {

using namespace refgate::test;
using namespace std::chrono_literals;

namespace {

// Two partners: one with commissions in two currencies, one without any.
const char* const kDocument = R"json({
  "partners": [
    {"slug": "impact-co", "name": "Impact Co", "ref_param": "ref", "ref_code": "picks42",
     "allowed_domains": ["shop.example.com"], "extra_params": {}, "subid_param": "subId1",
     "channel_codes": [{"channel": "newsletter", "ref_code": "picks-nl"}]},
    {"slug": "awin-co", "name": "Awin Co", "ref_param": "ref", "ref_code": "picks",
     "allowed_domains": ["store.example.org"]}
  ],
  "links": [
    {"slug": "shop", "partner": "impact-co", "destination": "https://shop.example.com/"}
  ]
})json";

constexpr const char* kHeader = "order_id,subid,tracking_id,status,amount,currency,occurred_at\n";

void import_csv(const std::string& url, const TempDir& dir, const std::string& rows) {
    std::string path = dir.file("commissions.csv");
    std::ofstream(path, std::ios::binary) << kHeader << rows;
    auto r = run_refgate({"commissions", "import", "--partner", "impact-co", path},
                         {{"REFGATE_DATABASE_URL", url}});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
}

// The value of the sample line that starts with `series` ("name{labels}"), or -1 when absent.
double sample(const std::string& text, const std::string& series) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
            line[series.size()] == ' ') {
            return std::stod(line.substr(series.size() + 1));
        }
    }
    return -1;
}

std::string count(const std::string& partner, const std::string& status) {
    return "refgate_commissions_total{partner=\"" + partner + "\",status=\"" + status + "\"}";
}

std::string amount(const std::string& currency, const std::string& status) {
    return "refgate_commission_amount{currency=\"" + currency +
           "\",partner=\"impact-co\",status=\"" + status + "\"}";
}

// Polls /metrics until every series has its value: the worker reads PostgreSQL every 10 s.
std::string wait_for_samples(int admin_port,
                             const std::vector<std::pair<std::string, double>>& want) {
    auto deadline = std::chrono::steady_clock::now() + 40s;
    std::string text;
    auto done = [&] {
        for (const auto& [series, value] : want) {
            if (sample(text, series) != value) return false;
        }
        return true;
    };
    do {
        auto r = http_get(admin_port, "/metrics");
        REQUIRE(r.status == 200);
        text = r.body;
        if (done()) break;
        std::this_thread::sleep_for(250ms);
    } while (std::chrono::steady_clock::now() < deadline);
    INFO(text);
    for (const auto& [series, value] : want) {
        INFO(series);
        REQUIRE(sample(text, series) == value);
    }
    return text;
}

}  // namespace

TEST_CASE("/metrics reports the stored commissions per partner and status, amounts per currency",
          "[metrics][commissions][pg][redis]") {
    TestDatabase db;
    PrivateRedis redis;
    auto imported = import_json(db.url(), kDocument);
    INFO(imported.err);
    REQUIRE(imported.exit_code == 0);
    TempDir dir;
    // Three pending EUR amounts whose exact sum is 12.80 (as floats added one by one, 12.5 + 0.1
    // + 0.2 is 12.799999999999999), an approved EUR one, and USD.
    import_csv(db.url(), dir,
               "ORD-1,,picks-nl,pending,12.50,EUR,2026-11-29T16:00:00Z\n"
               "ORD-2,,picks-nl,pending,0.10,EUR,2026-11-29T16:00:00Z\n"
               "ORD-3,,picks-nl,pending,0.20,EUR,2026-11-29T16:00:00Z\n"
               "ORD-4,,picks-nl,approved,7.25,EUR,2026-11-30T08:00:00Z\n"
               "ORD-5,,picks-nl,approved,30,USD,2026-11-30T08:00:00Z\n");

    ServiceProcess service({.database_url = db.url(), .redis_url = redis.url()});
    auto text = wait_for_samples(service.admin_port(), {{count("impact-co", "pending"), 3},
                                                        {count("impact-co", "approved"), 2},
                                                        {count("impact-co", "reversed"), 0},
                                                        {count("impact-co", "paid"), 0},
                                                        {count("awin-co", "pending"), 0},
                                                        {count("awin-co", "approved"), 0},
                                                        {amount("EUR", "pending"), 12.8},
                                                        {amount("EUR", "approved"), 7.25},
                                                        {amount("EUR", "reversed"), 0},
                                                        {amount("EUR", "paid"), 0},
                                                        {amount("USD", "approved"), 30},
                                                        {amount("USD", "pending"), 0}});
    CHECK(text.find("# TYPE refgate_commissions_total counter") != std::string::npos);
    CHECK(text.find("# TYPE refgate_commission_amount gauge") != std::string::npos);
    // A partner without commissions has no currency, so no amount series.
    CHECK(text.find("refgate_commission_amount{currency=\"EUR\",partner=\"awin-co\"") ==
          std::string::npos);

    // The network reverses ORD-4 and approves ORD-1: the counts only grow (ORD-4 was approved
    // and is reversed now), the amounts move to the status they have now.
    import_csv(db.url(), dir,
               "ORD-4,,picks-nl,reversed,7.25,EUR,2026-11-30T08:00:00Z\n"
               "ORD-1,,picks-nl,approved,12.50,EUR,2026-11-29T16:00:00Z\n");
    text = wait_for_samples(service.admin_port(), {{count("impact-co", "pending"), 3},
                                                   {count("impact-co", "approved"), 3},
                                                   {count("impact-co", "reversed"), 1},
                                                   {amount("EUR", "pending"), 0.3},
                                                   {amount("EUR", "approved"), 12.5},
                                                   {amount("EUR", "reversed"), 7.25},
                                                   {amount("USD", "approved"), 30}});

    std::ofstream(dir.file("metrics.txt")) << text;
    std::string output;
    int rc = run_shell("promtool check metrics < '" + dir.file("metrics.txt") + "'", output);
    INFO(output);
    CHECK(rc == 0);
    CHECK(output.empty());
}

}  // namespace commission_metrics_test
