// /metrics end to end: the refgate binary, a Redis of the test's own (the service's flusher must
// not take other tests' buckets), PostgreSQL, promtool from Debian's prometheus package.

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace metrics_test {

using namespace refgate::test;
using namespace std::chrono_literals;

namespace {

const char* const kDocument = R"json({
  "partners": [
    {"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks42",
     "allowed_domains": ["tailscale.com"]},
    {"slug": "kagi", "name": "Kagi", "ref_param": "via", "ref_code": "picks",
     "allowed_domains": ["kagi.com"]}
  ],
  "links": [
    {"slug": "alpha", "partner": "tailscale", "destination": "https://tailscale.com/alpha"},
    {"slug": "search", "partner": "kagi", "destination": "https://kagi.com/pricing"}
  ]
})json";

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

std::string scrape(int admin_port, const std::vector<std::pair<std::string, std::string>>& h = {}) {
    auto r = http_get(admin_port, "/metrics", h);
    REQUIRE(r.status == 200);
    return r.body;
}

// Polls /metrics until every series has its value (a deadline, not a timing assertion).
std::string wait_for_samples(int admin_port,
                             const std::vector<std::pair<std::string, double>>& want,
                             std::chrono::seconds timeout = 15s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string text = scrape(admin_port);
    auto done = [&] {
        for (const auto& [series, value] : want) {
            if (sample(text, series) != value) return false;
        }
        return true;
    };
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(100ms);
        text = scrape(admin_port);
    }
    INFO(text);
    for (const auto& [series, value] : want) {
        INFO(series);
        REQUIRE(sample(text, series) == value);
    }
    return text;
}

// Metric names used in a text (PromQL in rules or dashboards), without histogram suffixes.
std::set<std::string> metric_names(const std::string& text) {
    std::set<std::string> names;
    std::regex name(R"((refgate|process)_[a-z_]+)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), name);
         it != std::sregex_iterator(); ++it) {
        std::string n = it->str();
        for (const char* suffix : {"_bucket", "_count", "_sum"}) {
            if (n.ends_with(suffix)) n.resize(n.size() - std::string(suffix).size());
        }
        names.insert(n);
    }
    return names;
}

struct Fixture {
    TestDatabase db;
    PrivateRedis redis;
    ServiceOptions options(refgate::test::EnvPairs env = {}) {
        auto imported = import_json(db.url(), kDocument);
        INFO(imported.err);
        REQUIRE(imported.exit_code == 0);
        return {.database_url = db.url(), .redis_url = redis.url(), .env = std::move(env)};
    }
};

}  // namespace

TEST_CASE("/metrics counts the requests and clicks a test sends, and promtool accepts it",
          "[metrics][pg][redis]") {
    Fixture f;
    ServiceProcess service(f.options());

    for (int i = 0; i < 5; ++i) {
        CHECK(http_get(service.port(), "/go/alpha", {{"User-Agent", kBrowser}}).status == 302);
    }
    CHECK(http_request(service.port(), "HEAD", "/go/alpha", {{"User-Agent", kBrowser}}).status ==
          302);
    CHECK(http_get(service.port(), "/go/search", {{"User-Agent", "Slackbot-LinkExpanding 1.0"}})
              .status == 302);
    CHECK(http_get(service.port(), "/go/search",
                   {{"User-Agent", kBrowser}, {"Sec-Purpose", "prefetch"}})
              .status == 302);
    CHECK(http_get(service.port(), "/go/no-such-link", {{"User-Agent", kBrowser}}).status == 404);

    // Each I/O thread's clicks reach the sender in the window its shard was drained in.
    wait_for_samples(service.admin_port(),
                     {{"refgate_clicks_total{class=\"human\",partner=\"tailscale\"}", 5},
                      {"refgate_clicks_total{class=\"bot\",partner=\"tailscale\"}", 1},
                      {"refgate_clicks_total{class=\"bot\",partner=\"kagi\"}", 1},
                      {"refgate_clicks_total{class=\"prefetch\",partner=\"kagi\"}", 1}});
    // One more scrape: it sees the ones before it on the admin listener.
    auto text = scrape(service.admin_port());
    CHECK(sample(text, "refgate_clicks_total{class=\"human\",partner=\"kagi\"}") == 0);
    CHECK(sample(text,
                 "refgate_http_requests_total{code=\"302\",listener=\"public\",route="
                 "\"redirect\"}") == 8);
    CHECK(sample(text,
                 "refgate_http_requests_total{code=\"404\",listener=\"public\",route="
                 "\"redirect\"}") == 1);
    CHECK(sample(text, "refgate_redirect_unknown_slug_total") == 1);
    CHECK(sample(text,
                 "refgate_http_request_duration_seconds_count{listener=\"public\",route="
                 "\"redirect\"}") == 9);
    CHECK(sample(text, "refgate_postgres_up") == 1);
    CHECK(sample(text, "refgate_snapshot_links") == 2);
    CHECK(sample(text, "refgate_snapshot_loaded") == 1);
    CHECK(sample(text, "refgate_clicks_dropped_total") == 0);
    CHECK(sample(text, "refgate_redis_config_risky") == 0);
    CHECK(sample(text, "process_resident_memory_bytes") > 1e6);
    CHECK(sample(text, "process_open_fds") > 3);
    CHECK(text.find("refgate_build_info{commit=\"") != std::string::npos);
    // The scrape that answered this one is counted too, on the admin listener.
    CHECK(
        sample(text,
               "refgate_http_requests_total{code=\"200\",listener=\"admin\",route=\"metrics\"}") >=
        1);

    auto response = http_get(service.admin_port(), "/metrics");
    CHECK(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8");

    TempDir dir;
    std::ofstream(dir.file("metrics.txt")) << response.body;
    std::string output;
    int rc = run_shell("promtool check metrics < '" + dir.file("metrics.txt") + "'", output);
    INFO(output);
    CHECK(rc == 0);
    CHECK(output.empty());
}

TEST_CASE("/metrics needs a viewer token when REFGATE_METRICS_TOKEN=required",
          "[metrics][pg][auth]") {
    Fixture f;
    auto options = f.options({{"REFGATE_METRICS_TOKEN", "required"}});
    std::string viewer = create_api_token(f.db.url(), "prometheus", "viewer");
    ServiceProcess service(std::move(options));

    auto none = http_get(service.admin_port(), "/metrics");
    CHECK(none.status == 401);
    CHECK(none.header("WWW-Authenticate").starts_with("Bearer"));
    CHECK(http_get(service.admin_port(), "/metrics",
                   {{"Authorization", "Bearer rg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}})
              .status == 401);
    auto ok = http_get(service.admin_port(), "/metrics", {{"Authorization", "Bearer " + viewer}});
    CHECK(ok.status == 200);
    CHECK(ok.body.find("refgate_build_info") != std::string::npos);
    // Never on the public listener.
    CHECK(http_get(service.port(), "/metrics").status == 404);
}

TEST_CASE("the alerting rules and the dashboard only use metrics that refgate exports",
          "[metrics][deploy]") {
    Fixture f;
    ServiceProcess service(f.options());
    auto exported = metric_names(scrape(service.admin_port()));

    auto dashboard_text =
        read_text((source_root() / "deploy/grafana/refgate-dashboard.json").string());
    auto dashboard = nlohmann::json::parse(dashboard_text, nullptr, false);
    REQUIRE_FALSE(dashboard.is_discarded());
    CHECK(dashboard["panels"].size() >= 4);
    std::string rules = read_text((source_root() / "deploy/prometheus/rules.yml").string());
    REQUIRE_FALSE(rules.empty());

    for (const auto& text : {dashboard_text, rules}) {
        auto used = metric_names(text);
        CHECK_FALSE(used.empty());
        for (const auto& name : used) {
            INFO(name);
            CHECK(exported.count(name) == 1);
        }
    }
    for (const char* needed : {"refgate_clicks_total", "refgate_http_request_duration_seconds",
                               "refgate_flush_lag_seconds", "refgate_http_requests_total"}) {
        CHECK(metric_names(dashboard_text).count(needed) == 1);
    }
}

namespace {

// The labels a dashboard query's result keeps: those of its outermost `by (...)` (minus `le`
// under histogram_quantile), none after an aggregation without `by`, or all of them (nullopt)
// for a plain selector or function.
std::optional<std::set<std::string>> labels_kept(const std::string& expr) {
    static const std::regex aggregation(
        R"(^\s*(?:histogram_quantile\([^,]*,\s*)?(sum|min|max|avg|count)\s*(?:by\s*\(([^)]*)\))?\s*\()");
    std::smatch m;
    if (!std::regex_search(expr, m, aggregation)) return std::nullopt;
    std::set<std::string> kept;
    static const std::regex label(R"([a-z_]+)");
    std::string by = m[2].str();
    for (auto it = std::sregex_iterator(by.begin(), by.end(), label); it != std::sregex_iterator();
         ++it) {
        if (it->str() != "le") kept.insert(it->str());
    }
    return kept;
}

}  // namespace

TEST_CASE("every dashboard legend names only labels that its query keeps", "[metrics][deploy]") {
    auto dashboard = nlohmann::json::parse(
        read_text((source_root() / "deploy/grafana/refgate-dashboard.json").string()), nullptr,
        false);
    REQUIRE_FALSE(dashboard.is_discarded());
    static const std::regex placeholder(R"(\{\{\s*([a-zA-Z_]+)\s*\}\})");
    std::size_t targets = 0;
    for (const auto& panel : dashboard["panels"]) {
        for (const auto& target : panel.value("targets", nlohmann::json::array())) {
            ++targets;
            auto expr = target.value("expr", std::string());
            auto legend = target.value("legendFormat", std::string());
            INFO(panel.value("title", std::string()) << ": " << expr << " | " << legend);
            // An empty legend shows the raw series, which is unreadable after an aggregation.
            CHECK_FALSE(legend.empty());
            auto kept = labels_kept(expr);
            if (!kept) continue;
            for (auto it = std::sregex_iterator(legend.begin(), legend.end(), placeholder);
                 it != std::sregex_iterator(); ++it) {
                CHECK(kept->count((*it)[1].str()) == 1);
            }
        }
    }
    CHECK(targets > 0);
}

}  // namespace metrics_test
