#include "refgate/app/app.hpp"

#include <unistd.h>

#include <charconv>
#include <filesystem>

#include "click_caps.hpp"
#include "refgate/admin/pg_stats_store.hpp"
#include "refgate/clicks/pg_count_sink.hpp"
#include "refgate/clicks/redis_bucket_store.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/http/server.hpp"
#include "refgate/linkcheck/checker.hpp"
#include "refgate/linkcheck/fetcher.hpp"
#include "refgate/pg/snapshot_follower.hpp"
#include "refgate/redis/sentinel_watcher.hpp"
#include "refgate/runtime/background_thread.hpp"
#include "refgate/runtime/components.hpp"
#include "refgate/runtime/huge_table_memory.hpp"
#include "refgate/runtime/log.hpp"
#include "refgate/runtime/periodic_worker.hpp"
#include "refgate/webhooks/delivery.hpp"
#include "services.hpp"
#include "signals.hpp"

namespace refgate::app {
namespace {

// The snapshot and spill files live here; created owner-only when missing.
bool prepare_state_dir(const std::string& dir) {
    std::error_code ec;
    bool created = std::filesystem::create_directories(dir, ec);
    if (!ec && created)
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::replace, ec);
    if (ec || ::access(dir.c_str(), W_OK | X_OK) != 0) {
        runtime::log::error("state_dir_unusable",
                            {{"path", dir}, {"error", ec ? ec.message() : "not writable"}});
        return false;
    }
    return true;
}

// Wrong Redis credentials are a setting to fix: refuse to start rather than count into memory
// until the bound. Redis being down is not an error here (the sender keeps the counts).
bool redis_credentials_refused(const redis::RedisAddress& address) {
    redis::RedisConnection probe(address, std::chrono::milliseconds{1'000});
    return probe.auth_failed();
}

std::unique_ptr<pg::SnapshotFollower> make_follower(Shared& s) {
    const config::Config& c = s.config;
    return std::make_unique<pg::SnapshotFollower>(
        pg::SnapshotFollowerOptions{.database_url = c.database_url,
                                    .snapshot_file = c.snapshot_file,
                                    .reload_interval = c.reload_interval,
                                    .url_policy = s.url_policy,
                                    .clock = &s.clock},
        s.snapshots, s.health);
}

// Serves from the snapshot file, or nothing, until PostgreSQL answers.
bool start_follower(pg::SnapshotFollower& follower) {
    if (!follower.load_initial()) {
        runtime::log::warn("no_snapshot",
                           {{"detail", "redirects answer 503 until PostgreSQL is reachable"}});
    }
    follower.start();
    return true;
}

// A worker together with the connections it owns; the worker is destroyed first.
template <typename Worker>
struct Owned {
    std::unique_ptr<clicks::BucketStore> store;
    std::unique_ptr<clicks::CountSink> sink;
    std::unique_ptr<Worker> worker;
};

Owned<clicks::ClickSender> make_sender(Shared& s, Counting& counting) {
    const config::ClickConfig& c = s.config.clicks;
    Owned<clicks::ClickSender> sender;
    sender.store =
        clicks::make_redis_bucket_store({.address = s.redis,
                                         .min_replicas_acked = s.config.redis_ha.min_replicas_acked,
                                         .wait_timeout = s.config.redis_ha.wait_timeout});
    sender.worker = std::make_unique<clicks::ClickSender>(
        clicks::ClickSenderOptions{.window = c.aggregation_window,
                                   .bucket = c.bucket,
                                   .max_pending_keys = c.max_pending_keys,
                                   .spill_file = c.spill_file},
        *sender.store, counting.shard_pointers(), counting.salts, s.clock, s.health, s.click_stats);
    return sender;
}

Owned<clicks::ClickFlusher> make_flusher(Shared& s) {
    const config::Config& c = s.config;
    Owned<clicks::ClickFlusher> flusher;
    flusher.store =
        clicks::make_redis_bucket_store({.address = s.redis,
                                         .timeout = clicks::kFlushRedisTimeout,
                                         .min_replicas_acked = c.redis_ha.min_replicas_acked,
                                         .wait_timeout = c.redis_ha.wait_timeout});
    flusher.sink =
        clicks::make_pg_count_sink({.database_url = c.database_url,
                                    .health = &s.health,
                                    .max_channels_per_link_day = c.clicks.max_channels_per_link_day,
                                    .stats_retention_days = c.clicks.stats_retention_days});
    flusher.worker = std::make_unique<clicks::ClickFlusher>(
        *flusher.store, *flusher.sink,
        clicks::FlusherOptions{
            .bucket = c.clicks.bucket, .stats = &s.click_stats, .health = &s.health},
        c.clicks.flush_interval);
    return flusher;
}

// Follows the sentinels' master switches (redis+sentinel:// only).
redis::SentinelWatcher make_sentinel_watcher(Shared& s) {
    return redis::SentinelWatcher({.address = s.redis, .on_switch = [&stats = s.click_stats] {
                                       stats.redis_master_switches.fetch_add(
                                           1, std::memory_order_relaxed);
                                   }});
}

// /metrics' commission families: the stored totals, read off the request path (the amounts
// become floats only here, for Prometheus).
runtime::RoundOutcome read_commission_figures(Shared& s) {
    try {
        auto totals = s.commissions->totals();
        metrics::CommissionFigures figures;
        for (auto& c : totals.counts) {
            figures.counts.push_back({.partner = std::move(c.partner),
                                      .status = std::move(c.status),
                                      .commissions = c.commissions});
        }
        for (auto& a : totals.amounts) {
            double amount = 0;
            std::from_chars(a.amount.data(), a.amount.data() + a.amount.size(), amount);
            figures.amounts.push_back({.partner = std::move(a.partner),
                                       .currency = std::move(a.currency),
                                       .status = std::move(a.status),
                                       .amount = amount});
        }
        s.commission_stats.set(std::move(figures));
        return runtime::RoundOutcome::done;
    } catch (const std::exception& e) {
        runtime::log::warn("commission_metrics_failed", {{"error", e.what()}});
        return runtime::RoundOutcome::failed;
    }
}

// The process-wide settings that must come before any thread, snapshot or click table.
void prepare_process() {
    runtime::use_huge_table_memory();  // before the first snapshot or click table
    runtime::keep_large_blocks_mapped();
}

// Everything App::serve runs, built in this order and destroyed in reverse: a member may use
// those above it.
struct Running {
    explicit Running(Shared& s);

    Shared& shared;
    std::unique_ptr<pg::SnapshotFollower> follower;
    redis::SentinelWatcher sentinel_watcher;
    Counting counting;
    Owned<clicks::ClickFlusher> flusher;
    Owned<clicks::ClickSender> sender;
    HttpService http;
    // The scheduled link-health checks (REFGATE_LINKCHECK_INTERVAL=0: on demand only).
    std::unique_ptr<linkcheck::HealthWorker> link_checker;
    // Webhook delivery: every instance reads the queue's age, one (an advisory lock) delivers.
    webhooks::DeliveryWorker webhook_delivery;
    // Click caps (issue 44): the capped links' fleet-wide human clicks, each kClickCapRefresh,
    // from the primary (a standby's lag would add to the overshoot); one connection.
    std::unique_ptr<admin::StatsStore> cap_counts;
    ClickCapWorker click_caps;
    // Follows the country database's file: a replaced file is in use within kCountryFilePoll.
    runtime::PeriodicWorker country_watch;
    runtime::PeriodicWorker commission_figures;
};

Running::Running(Shared& s)
    : shared(s),
      follower(make_follower(s)),
      sentinel_watcher(make_sentinel_watcher(s)),
      counting(s),
      flusher(make_flusher(s)),
      sender(make_sender(s, counting)),
      http(s, counting),
      link_checker(s.config.linkcheck.interval.count() > 0
                       ? std::make_unique<linkcheck::HealthWorker>(
                             s.config, s.snapshots, s.link_health, s.link_pace, REFGATE_VERSION)
                       : nullptr),
      webhook_delivery(s.config, s.webhook_stats, REFGATE_VERSION),
      cap_counts(admin::make_pg_stats_store({.database_url = s.config.database_url,
                                             .redis = s.redis,
                                             .max_idle_connections = 1,
                                             .max_open_connections = 1})),
      click_caps(s.snapshots, *cap_counts, kClickCapRefresh),
      country_watch({.name = "rg-geoip-watch",
                     .priority = runtime::BackgroundPriority::low,
                     .interval = kCountryFilePoll,
                     .first_round_at_once = false},
                    [&countries = counting.countries] {
                        follow_country_database_file(countries);
                        return runtime::RoundOutcome::done;
                    }),
      commission_figures({.name = "rg-commissions",
                          .priority = runtime::BackgroundPriority::idle,
                          .interval = metrics::kCommissionMetricsInterval,
                          .min_backoff = metrics::kCommissionMetricsInterval,
                          .max_backoff = 6 * metrics::kCommissionMetricsInterval},
                         [&s] { return read_commission_figures(s); }) {}

// Started in this order, stopped in reverse: the listeners first, so that every request is
// answered; then the sender, which sends what the shards hold to Redis (or the spill file).
void add_in_start_order(runtime::Components& components, Running& r) {
    if (r.shared.redis.via_sentinel())
        components.add_worker("sentinel_watcher", r.sentinel_watcher);
    components.add(
        "snapshot_follower", [&r] { return start_follower(*r.follower); },
        [&r] { r.follower->stop(); });
    components.add_worker("click_flusher", *r.flusher.worker);
    components.add_worker("click_sender", *r.sender.worker);
    if (r.link_checker) components.add_worker("link_checker", *r.link_checker);
    if (!r.counting.countries.path.empty()) components.add_worker("country_watch", r.country_watch);
    components.add_worker("commission_figures", r.commission_figures);
    components.add_worker("webhook_delivery", r.webhook_delivery);
    components.add_worker("click_caps", r.click_caps);
    components.add(
        "http", [&r] { return r.http.start(); },
        [&r] { r.http.stop(r.shared.config.shutdown_timeout); });
}

// Serves until a stop signal (a SIGHUP meanwhile reloads), then drains while every component
// still runs.
void serve_until_stopped(const sigset_t& signals, Running& r) {
    auto reload = [&r] {
        r.follower->request_reload();
        reload_scanner_networks(r.counting.scanner);
        reload_country_database(r.counting.countries);
    };
    runtime::log::info("stopping", {{"signal", signal_name(wait_for_stop(signals, reload))}});
    drain(signals, r.shared.health, reload, r.shared.config.drain);
    // Link checks in flight (the schedule's and the API's) abort rather than wait for a timeout.
    r.shared.link_pace.stop();
}

}  // namespace

redis::RedisAddress redis_address(const config::Config& config) {
    redis::RedisAddress address = *redis::parse_redis_url(config.redis_url);
    address.sentinel_password = config.redis_ha.sentinel_password;
    return address;
}

Shared::Shared(const config::Config& c)
    : config(c),
      redis(redis_address(c)),
      url_policy{.allow_http = c.allow_http_destinations},
      link_pace(c.linkcheck.host_gap),
      commissions(admin::make_pg_commission_store({.database_url = c.database_url,
                                                   .connection_wait = c.admin_db_wait,
                                                   .secret_lifetime = c.auth_cache})),
      postback_limiter(
          std::make_shared<admin::PostbackLimiter>(c.postback_rate, 2.0 * c.postback_rate)),
      postback_batcher(std::make_shared<admin::PostbackBatcher>(commissions)),
      webhooks(admin::make_webhook_store({.database_url = c.database_url,
                                          .connection_wait = c.admin_db_wait,
                                          .url_refusal = [&c](const std::string& url) {
                                              return linkcheck::outbound_refusal(
                                                  url, c.webhooks.resolve);
                                          }})) {}

Counting::Counting(Shared& s)
    : trusted_proxies(config::parse_networks(s.config.clicks.trusted_proxies)
                          .value_or(std::vector<domain::IpNetwork>{})) {
    load_scanner(s.config.clicks, scanner);
    load_country_database(s.config.clicks, countries, s.health);
    // One per handler the server makes: its I/O threads' and its blocking lane's.
    for (unsigned i = 0; i < http::Server::handler_threads(s.config.threads); ++i) {
        shards.push_back(std::make_unique<clicks::ClickShard>());
        recorders.push_back(std::make_unique<redirect::ClickRecorder>(
            *shards.back(), salts, domain::ClickClassifier::builtin(), trusted_proxies,
            &scanner.sources, s.config.clicks.max_channels_per_link_day));
    }
}

std::vector<clicks::ClickShard*> Counting::shard_pointers() const {
    std::vector<clicks::ClickShard*> pointers;
    for (const auto& shard : shards) pointers.push_back(shard.get());
    return pointers;
}

int App::serve() {
    sigset_t signals = block_stop_signals();  // before any thread starts
    prepare_process();
    runtime::log::info("starting", {{"version", REFGATE_VERSION},
                                    {"commit", REFGATE_GIT_COMMIT},
                                    {"state_dir", config_.state_dir}});
    if (!prepare_state_dir(config_.state_dir)) return 1;
    Shared shared(config_);
    if (redis_credentials_refused(shared.redis)) {
        runtime::log::error("start_refused",
                            {{"detail", "Redis refused the credentials of redis_url"}});
        return 1;
    }
    Running running(shared);
    runtime::Components components;
    add_in_start_order(components, running);
    if (!components.start()) return 1;
    serve_until_stopped(signals, running);
    components.stop();
    runtime::log::info("stopped");
    return 0;
}

}  // namespace refgate::app
