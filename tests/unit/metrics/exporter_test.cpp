#include "refgate/metrics/exporter.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "refgate/domain/click_classifier.hpp"
#include "refgate/metrics/counting_handler.hpp"
#include "refgate/runtime/snapshot_store.hpp"
#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace exporter_test {

namespace {

using namespace refgate;
using DrainedCounts = std::vector<std::pair<domain::CounterKey, std::uint64_t>>;

class Fixed final : public http::Handler {
  public:
    explicit Fixed(int status) : status_(status) {}
    void handle(const http::Request&, http::Response& response) override {
        response.set_status(status_);
    }

  private:
    int status_;
};

// A router whose every path goes to a handler answering `status`, under route class `route`.
std::unique_ptr<http::Router> answering(int status, metrics::RouteClass route) {
    auto router = std::make_unique<http::Router>();
    router->prefix("/", std::make_shared<Fixed>(status), metrics::route_tag(route));
    return router;
}

http::Response call(http::Handler& handler, std::string_view target) {
    std::vector<http::HeaderField> fields;
    http::Request request;
    request.method = http::Method::get;
    request.target = target;
    request.fields = &fields;
    http::Response response;
    handler.handle(request, response);
    return response;
}

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos;
}

std::shared_ptr<const domain::Snapshot> one_partner_snapshot() {
    domain::Link l = refgate::testing::make_link("alpha", "https://tailscale.com/alpha");
    l.id = 42;
    return refgate::testing::make_snapshot({refgate::testing::tailscale()}, {l}, 3, "postgres");
}

}  // namespace

TEST_CASE("route labels are a fixed set tagged on routes, never a raw path", "[metrics]") {
    metrics::RequestMetrics requests;
    auto router = std::make_unique<http::Router>();
    router->prefix("/go/", std::make_shared<Fixed>(302),
                   metrics::route_tag(metrics::RouteClass::redirect));
    router->exact("/readyz", std::make_shared<Fixed>(200),
                  metrics::route_tag(metrics::RouteClass::health));
    router->exact("/plain", std::make_shared<Fixed>(200));
    metrics::CountingHandler counting(std::move(router), requests.add_slot("public"));
    call(counting, "/go/alpha");
    call(counting, "/readyz");
    call(counting, "/plain");
    call(counting, "/wp-admin/x");
    metrics::Exporter exporter({.requests = &requests});
    std::string text = exporter.scrape();
    INFO(text);
    CHECK(has_line(
        text,
        "refgate_http_requests_total{code=\"302\",listener=\"public\",route=\"redirect\"} 1"));
    CHECK(has_line(
        text, "refgate_http_requests_total{code=\"200\",listener=\"public\",route=\"health\"} 1"));
    // Untagged routes and paths no route takes are "other".
    CHECK(has_line(
        text, "refgate_http_requests_total{code=\"200\",listener=\"public\",route=\"other\"} 1"));
    CHECK(has_line(
        text, "refgate_http_requests_total{code=\"404\",listener=\"public\",route=\"other\"} 1"));
    CHECK(metrics::route_class(http::kUntagged) == metrics::RouteClass::other);
    CHECK(metrics::status_slot(302) != metrics::status_slot(404));
    CHECK(metrics::status_slot(299) == metrics::kTrackedStatuses.size());
}

TEST_CASE("the exporter sums per-thread counters and clicks by partner at scrape time",
          "[metrics]") {
    metrics::RequestMetrics requests;
    metrics::CountingHandler found(answering(302, metrics::RouteClass::redirect),
                                   requests.add_slot("public"));
    metrics::CountingHandler missing(std::make_unique<http::Router>(), requests.add_slot("public"));
    auto unknown_slug = std::make_unique<http::Router>();
    unknown_slug->prefix("/go/", std::make_shared<Fixed>(404),
                         metrics::route_tag(metrics::RouteClass::redirect));
    metrics::CountingHandler unknown(std::move(unknown_slug), requests.add_slot("public"));
    for (int i = 0; i < 3; ++i) call(found, "/go/alpha");
    call(found, "/go/alpha?src=x");
    call(unknown, "/go/nope");
    call(missing, "/favicon.ico");

    metrics::ClickStats clicks;
    runtime::HealthState health;
    health.redis = runtime::DependencyState::up;
    runtime::SnapshotStore store;
    store.publish(one_partner_snapshot());
    clicks.link_clicks.add(
        DrainedCounts{{domain::CounterKey(42, 20'000, domain::ClickClass::human, "direct"), 5},
                      {domain::CounterKey(42, 20'000, domain::ClickClass::bot, "direct"), 2},
                      {domain::CounterKey(99, 20'000, domain::ClickClass::human, "direct"), 1}});
    clicks.dropped_clicks = 4;
    clicks.channels_capped = 6;
    clicks.channel_identifiers = 2;
    clicks.redis_latency.observe(std::chrono::microseconds{30});

    metrics::Exporter exporter({.requests = &requests,
                                .clicks = &clicks,
                                .health = &health,
                                .snapshots = &store,
                                .version = "0.1.0",
                                .commit = "abc"});
    std::string text = exporter.scrape();
    INFO(text);
    CHECK(has_line(
        text,
        "refgate_http_requests_total{code=\"302\",listener=\"public\",route=\"redirect\"} 4"));
    CHECK(has_line(
        text, "refgate_http_requests_total{code=\"404\",listener=\"public\",route=\"other\"} 1"));
    CHECK(has_line(text, "refgate_redirect_unknown_slug_total 1"));
    CHECK(has_line(
        text,
        "refgate_http_request_duration_seconds_count{listener=\"public\",route=\"redirect\"} 5"));
    CHECK(has_line(text, "refgate_clicks_total{class=\"human\",partner=\"tailscale\"} 5"));
    CHECK(has_line(text, "refgate_clicks_total{class=\"bot\",partner=\"tailscale\"} 2"));
    CHECK(has_line(text, "refgate_clicks_total{class=\"human\",partner=\"unknown\"} 1"));
    // No branded domain defined: every link is on the default domain.
    CHECK(has_line(text, "refgate_clicks_by_domain_total{class=\"human\",domain=\"default\"} 5"));
    CHECK(has_line(text, "refgate_clicks_by_domain_total{class=\"bot\",domain=\"default\"} 2"));
    CHECK(has_line(text, "refgate_clicks_by_domain_total{class=\"human\",domain=\"unknown\"} 1"));
    CHECK(has_line(text, "refgate_clicks_dropped_total 4"));
    CHECK(has_line(text, "refgate_channels_capped_total{reason=\"cap\"} 6"));
    CHECK(has_line(text, "refgate_channels_capped_total{reason=\"identifier\"} 2"));
    CHECK(has_line(text, "refgate_redis_up 1"));
    CHECK(has_line(text, "refgate_postgres_up 0"));
    CHECK(has_line(text, "refgate_snapshot_version 3"));
    CHECK(has_line(text, "refgate_redis_request_duration_seconds_bucket{le=\"5e-05\"} 1"));
    CHECK(has_line(text, "refgate_build_info{commit=\"abc\",version=\"0.1.0\"} 1"));
    CHECK(text.find("process_resident_memory_bytes ") != std::string::npos);

    // Totals only grow: clicks taken at one scrape stay counted at the next.
    clicks.link_clicks.add(
        DrainedCounts{{domain::CounterKey(42, 20'000, domain::ClickClass::human, "news"), 1}});
    text = exporter.scrape();
    CHECK(has_line(text, "refgate_clicks_total{class=\"human\",partner=\"tailscale\"} 6"));
    CHECK(has_line(text, "refgate_clicks_total{class=\"prefetch\",partner=\"tailscale\"} 0"));
}

// Sleeps `pause` and answers 302.
class Slow final : public http::Handler {
  public:
    explicit Slow(std::chrono::milliseconds pause) : pause_(pause) {}
    void handle(const http::Request&, http::Response& response) override {
        std::this_thread::sleep_for(pause_);
        response.set_status(302);
    }

  private:
    std::chrono::milliseconds pause_;
};

TEST_CASE(
    "clicks by branded domain: one series per domain and class, taken at scrape time off the "
    "redirect",
    "[metrics][domains]") {
    domain::Snapshot::Builder b(1, {refgate::testing::tailscale()}, {}, "test",
                                domain::SysSeconds{std::chrono::seconds{1'795'968'000}}, 4);
    b.domains({{"go.example.com", true, ""}, {"de.example.com", false, ""}});
    domain::Link on_default = refgate::testing::make_link("deal", "https://tailscale.com/deal");
    on_default.id = 1;
    domain::Link on_de = refgate::testing::make_link("deal", "https://tailscale.com/angebot");
    on_de.id = 2;
    on_de.domain = "de.example.com";
    b.add(std::move(on_default));
    b.add(std::move(on_de));
    runtime::SnapshotStore store;
    store.publish(b.finish({}));
    metrics::ClickStats clicks;
    clicks.link_clicks.add(
        DrainedCounts{{domain::CounterKey(1, 20'000, domain::ClickClass::human, "direct"), 3},
                      {domain::CounterKey(2, 20'000, domain::ClickClass::human, "direct"), 2},
                      {domain::CounterKey(2, 20'000, domain::ClickClass::bot, "direct"), 1}});
    metrics::Exporter exporter({.clicks = &clicks, .snapshots = &store});
    std::string text = exporter.scrape();
    INFO(text);
    CHECK(has_line(text,
                   "refgate_clicks_by_domain_total{class=\"human\",domain=\"go.example.com\"} 3"));
    CHECK(has_line(text,
                   "refgate_clicks_by_domain_total{class=\"human\",domain=\"de.example.com\"} 2"));
    CHECK(has_line(text,
                   "refgate_clicks_by_domain_total{class=\"bot\",domain=\"de.example.com\"} 1"));
    CHECK(has_line(text,
                   "refgate_clicks_by_domain_total{class=\"bot\",domain=\"go.example.com\"} 0"));
    CHECK(has_line(text, "refgate_clicks_total{class=\"human\",partner=\"tailscale\"} 5"));
}

TEST_CASE("a request's duration is the time its handler took", "[metrics]") {
    // Timed with the CPU's time-stamp counter where the kernel keeps time with it: a wrong rate
    // would put the 3 ms handler below 2.5 ms or above the time the test saw it take.
    metrics::RequestMetrics requests;
    auto router = std::make_unique<http::Router>();
    router->prefix("/go/", std::make_shared<Slow>(std::chrono::milliseconds(3)),
                   metrics::route_tag(metrics::RouteClass::redirect));
    metrics::CountingHandler counting(std::move(router), requests.add_slot("public"));
    auto started = std::chrono::steady_clock::now();
    call(counting, "/go/alpha");
    std::chrono::duration<double> seen = std::chrono::steady_clock::now() - started;

    runtime::HealthState health;
    metrics::ClickStats clicks;
    metrics::Exporter exporter({.requests = &requests, .clicks = &clicks, .health = &health});
    std::string text = exporter.scrape();
    INFO(text);
    CHECK(has_line(
        text,
        "refgate_http_request_duration_seconds_bucket{listener=\"public\",route=\"redirect\","
        "le=\"0.0025\"} 0"));
    const std::string sum_label =
        "\nrefgate_http_request_duration_seconds_sum{listener=\"public\",route=\"redirect\"} ";
    auto at = text.find(sum_label);
    REQUIRE(at != std::string::npos);
    double sum = std::stod(text.substr(at + sum_label.size()));
    CHECK(sum >= 0.003);
    CHECK(sum <= seen.count());
}

TEST_CASE("flush durations are resolved from 10 ms to a minute rather than on the redirect's scale",
          "[metrics]") {
    metrics::ClickStats clicks;
    clicks.flush_duration.observe(std::chrono::milliseconds{700});
    clicks.flush_duration.observe(std::chrono::seconds{20});
    metrics::Exporter exporter({.clicks = &clicks});
    std::string text = exporter.scrape();
    INFO(text);
    CHECK(has_line(text, "refgate_flush_duration_seconds_bucket{le=\"0.01\"} 0"));
    CHECK(has_line(text, "refgate_flush_duration_seconds_bucket{le=\"0.5\"} 0"));
    CHECK(has_line(text, "refgate_flush_duration_seconds_bucket{le=\"0.75\"} 1"));
    CHECK(has_line(text, "refgate_flush_duration_seconds_bucket{le=\"15\"} 1"));
    CHECK(has_line(text, "refgate_flush_duration_seconds_bucket{le=\"30\"} 2"));
    CHECK(has_line(text, "refgate_flush_duration_seconds_bucket{le=\"60\"} 2"));
    CHECK(has_line(text, "refgate_flush_duration_seconds_count 2"));
    // The redirect's histograms keep their microsecond buckets.
    CHECK(has_line(text, "refgate_redis_request_duration_seconds_bucket{le=\"1e-05\"} 0"));
}

TEST_CASE("/metrics answers the text format, or 401 without a token when one is required",
          "[metrics]") {
    metrics::Exporter exporter(metrics::Sources{});
    metrics::MetricsHandler open(exporter, nullptr);
    auto response = call(open, "/metrics");
    CHECK(response.status() == 200);
    CHECK(response.headers().find("Content-Type: text/plain; version=0.0.4; charset=utf-8") !=
          std::string::npos);
    CHECK(response.body().find("# TYPE refgate_build_info gauge") != std::string::npos);
    CHECK_FALSE(open.may_block());

    metrics::MetricsHandler guarded(exporter, [](std::string_view authorization) {
        return authorization == "Bearer good" ? metrics::Access::allowed
                                              : metrics::Access::unauthorized;
    });
    CHECK(guarded.may_block());
    CHECK(call(guarded, "/metrics").status() == 401);
}

TEST_CASE("every status refgate sends has its own code label, 406 included", "[metrics]") {
    metrics::RequestMetrics requests;
    for (const auto& status : http::kHttpStatuses) {
        metrics::CountingHandler handler(answering(status.code, metrics::RouteClass::admin_api),
                                         requests.add_slot("admin"));
        call(handler, "/api/v1/partners");
    }
    metrics::Exporter exporter({.requests = &requests, .version = "0.1.0", .commit = "abc"});
    std::string text = exporter.scrape();
    INFO(text);
    CHECK(has_line(
        text,
        "refgate_http_requests_total{code=\"406\",listener=\"admin\",route=\"admin_api\"} 1"));
    CHECK(text.find("code=\"other\"") == std::string::npos);
}

TEST_CASE("a scraper's token, once checked, is not asked of the database again for a while",
          "[metrics]") {
    metrics::Exporter exporter(metrics::Sources{});
    int checks = 0;
    metrics::MetricsHandler guarded(exporter, [&checks](std::string_view authorization) {
        ++checks;
        return authorization == "Bearer good" ? metrics::Access::allowed
                                              : metrics::Access::unauthorized;
    });
    std::vector<http::HeaderField> good{{"Authorization", "Bearer good"}};
    std::vector<http::HeaderField> bad{{"Authorization", "Bearer bad"}};
    http::Request request;
    request.method = http::Method::get;
    request.target = "/metrics";
    request.fields = &good;
    CHECK(guarded.blocking(request));
    http::Response response;
    guarded.handle(request, response);
    CHECK(response.status() == 200);
    // Remembered: answered on the I/O thread from now on, without another check.
    CHECK_FALSE(guarded.blocking(request));
    http::Response again;
    guarded.handle(request, again);
    CHECK(again.status() == 200);
    CHECK(checks == 1);
    // An unknown token is never remembered.
    request.fields = &bad;
    http::Response refused;
    guarded.handle(request, refused);
    CHECK(refused.status() == 401);
    CHECK(guarded.blocking(request));
}

TEST_CASE("admin calls answered 503 are counted by reason", "[metrics]") {
    std::atomic<std::uint64_t> database{3};
    http::ServerStats admin;
    admin.unavailable_requests = 5;
    metrics::Exporter exporter(metrics::Sources{.admin_unavailable = &database});
    exporter.set_listeners({{"admin", &admin}});
    auto text = exporter.scrape();
    CHECK(has_line(text, "refgate_admin_unavailable_total{reason=\"busy\"} 5"));
    CHECK(has_line(text, "refgate_admin_unavailable_total{reason=\"database\"} 3"));
}

}  // namespace exporter_test
