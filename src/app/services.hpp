#pragma once

// What App::serve builds, for app.cpp and listeners.cpp. Each component is built by one small
// function, so that a change to its constructor touches one place.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "refgate/admin/admin_handler.hpp"
#include "refgate/admin/commissions.hpp"
#include "refgate/admin/webhooks.hpp"
#include "refgate/clicks/click_pipeline.hpp"
#include "refgate/config/config.hpp"
#include "refgate/domain/clock.hpp"
#include "refgate/domain/ip_network.hpp"
#include "refgate/http/server.hpp"
#include "refgate/linkcheck/host_pace.hpp"
#include "refgate/metrics/click_stats.hpp"
#include "refgate/metrics/commission_stats.hpp"
#include "refgate/metrics/exporter.hpp"
#include "refgate/metrics/link_health_stats.hpp"
#include "refgate/metrics/metrics.hpp"
#include "refgate/metrics/webhook_stats.hpp"
#include "refgate/redirect/click_recorder.hpp"
#include "refgate/redis/redis_client.hpp"
#include "refgate/runtime/health_state.hpp"
#include "refgate/runtime/snapshot_store.hpp"
#include "scanner.hpp"

namespace refgate::app {

// The Redis address of the settings (URL, and the sentinels' password).
redis::RedisAddress redis_address(const config::Config& config);

// What several components read or write. It outlives them all.
struct Shared {
    explicit Shared(const config::Config& config);

    const config::Config& config;
    redis::RedisAddress redis;
    domain::UrlPolicy url_policy;
    domain::SystemClock clock;
    runtime::HealthState health;
    runtime::SnapshotStore snapshots;
    metrics::ClickStats click_stats;
    metrics::RequestMetrics request_metrics;
    // Admin API calls answered 503 because the database was unreachable or busy.
    std::atomic<std::uint64_t> admin_unavailable{0};
    // Console sign-ins: ok, refused, limited.
    std::array<std::atomic<std::uint64_t>, 3> console_sign_ins{};
    metrics::LinkHealthStats link_health;
    // The one per-host pace of the scheduled and the on-demand link checks, and their stop.
    linkcheck::HostPace link_pace;
    // Commissions (issue 43): the admin API's import and the public listener's postbacks, over
    // one small pool of database connections, the postbacks' per-partner rate and their batches.
    std::shared_ptr<admin::CommissionStore> commissions;
    std::shared_ptr<admin::PostbackLimiter> postback_limiter;
    std::shared_ptr<admin::PostbackBatcher> postback_batcher;
    // The stored commissions' totals for /metrics, as last read.
    metrics::CommissionStats commission_stats;
    // Webhooks (issue 44): the admin API's store, and delivery's figures for /metrics.
    std::shared_ptr<admin::WebhookStore> webhooks;
    metrics::WebhookStats webhook_stats;
};

// The admin API's link-health routes over the checker (src/app/link_health_api.cpp).
std::shared_ptr<admin::LinkHealthService> make_link_health_api(Shared& shared);

// Counting: a shard and a recorder per I/O thread, handed out as the threads build their
// handlers; the sender drains the shards. Throws std::runtime_error when the scanner class's
// files cannot be loaded.
struct Counting {
    explicit Counting(Shared& shared);
    redirect::ClickRecorder& next_recorder() { return *recorders.at(next++); }
    std::vector<clicks::ClickShard*> shard_pointers() const;

    std::vector<domain::IpNetwork> trusted_proxies;
    ScannerData scanner;
    CountryData countries;
    clicks::SaltBox salts;
    std::vector<std::unique_ptr<clicks::ClickShard>> shards;
    std::vector<std::unique_ptr<redirect::ClickRecorder>> recorders;
    std::atomic<std::size_t> next{0};
};

// The admin API, and the token check of /metrics, over one pool of database connections.
struct AdminApi {
    std::shared_ptr<admin::AdminHandler> handler;
    metrics::Authorizer metrics_auth;  // empty: /metrics needs no token
};
AdminApi make_admin_api(Shared& shared);

// The public and admin listeners with everything only they use.
class HttpService {
  public:
    HttpService(Shared& shared, Counting& counting);
    // Binds and starts serving; false (logged) when a listener cannot have its port.
    bool start();
    // Stops accepting, finishes in-flight requests (at most `timeout`).
    void stop(std::chrono::milliseconds timeout) { server_.shutdown(timeout); }

  private:
    Shared& shared_;
    metrics::Exporter exporter_;
    AdminApi admin_;
    std::shared_ptr<metrics::MetricsHandler> metrics_;
    http::Server server_;
};

}  // namespace refgate::app
