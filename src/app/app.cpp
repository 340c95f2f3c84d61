#include "refgate/app/app.hpp"

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>

#include "refgate/admin/admin_handler.hpp"
#include "refgate/admin/bearer.hpp"
#include "refgate/admin/pg_admin_store.hpp"
#include "refgate/admin/pg_stats_store.hpp"
#include "refgate/clicks/click_pipeline.hpp"
#include "refgate/clicks/pg_count_sink.hpp"
#include "refgate/clicks/redis_bucket_store.hpp"
#include "refgate/disclosure/disclosure_handler.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/http/router.hpp"
#include "refgate/http/server.hpp"
#include "refgate/metrics/counting_handler.hpp"
#include "refgate/metrics/exporter.hpp"
#include "refgate/ops/health.hpp"
#include "refgate/pg/snapshot_follower.hpp"
#include "refgate/redirect/redirect_handler.hpp"
#include "refgate/redis/redis_client.hpp"
#include "refgate/runtime/log.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace refgate {
namespace {

// SIGHUP reloads; the others stop gracefully. A signal that is not blocked here would end the
// process at once, losing the clicks still in memory.
sigset_t handled_signals() {
    sigset_t set;
    sigemptyset(&set);
    for (int signal : {SIGINT, SIGTERM, SIGQUIT, SIGHUP}) sigaddset(&set, signal);
    return set;
}

const char* signal_name(int signal) {
    switch (signal) {
        case SIGINT:
            return "SIGINT";
        case SIGTERM:
            return "SIGTERM";
        case SIGQUIT:
            return "SIGQUIT";
        case SIGHUP:
            return "SIGHUP";
        default:
            return "unknown";
    }
}

// Waits for a stop signal; every SIGHUP meanwhile forces a snapshot reload.
int wait_for_stop(const sigset_t& signals, pg::SnapshotFollower& follower) {
    for (;;) {
        int signal = 0;
        if (sigwait(&signals, &signal) != 0) continue;
        if (signal != SIGHUP) return signal;
        log::info("reload_requested", {{"signal", "SIGHUP"}});
        follower.request_reload();
    }
}

// From the first stop signal, /readyz answers 503 while the listeners keep serving for `duration`,
// so that load balancers and Kubernetes endpoints stop sending new connections before the listeners
// close. A second stop signal ends the wait early; a SIGHUP meanwhile still reloads.
void drain(const sigset_t& signals, HealthState& health, pg::SnapshotFollower& follower,
           std::chrono::milliseconds duration) {
    health.draining.store(true);
    if (duration.count() == 0) return;
    log::info("draining", {{"drain_ms", duration.count()}});
    auto deadline = std::chrono::steady_clock::now() + duration;
    for (;;) {
        auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::nanoseconds::zero()) break;
        auto seconds = std::chrono::duration_cast<std::chrono::seconds>(left);
        timespec wait{
            .tv_sec = static_cast<time_t>(seconds.count()),
            .tv_nsec = static_cast<long>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(left - seconds).count())};
        int signal = sigtimedwait(&signals, nullptr, &wait);
        if (signal < 0) continue;  // EAGAIN (time is up, checked above) or EINTR
        if (signal == SIGHUP) {
            follower.request_reload();
            continue;
        }
        log::info("drain_cut_short", {{"signal", signal_name(signal)}});
        return;
    }
    log::info("drained");
}

// The snapshot and spill files live here; created owner-only when missing.
bool prepare_state_dir(const std::string& dir) {
    std::error_code ec;
    bool created = std::filesystem::create_directories(dir, ec);
    if (!ec && created)
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::replace, ec);
    if (ec || ::access(dir.c_str(), W_OK | X_OK) != 0) {
        log::error("state_dir_unusable",
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

}  // namespace

int App::serve() {
    // Block the stop signals before any thread starts, so that every thread inherits the mask and
    // only sigwait() below receives them.
    sigset_t signals = handled_signals();
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    log::info("starting", {{"version", REFGATE_VERSION},
                           {"commit", REFGATE_GIT_COMMIT},
                           {"state_dir", config_.state_dir}});
    if (!prepare_state_dir(config_.state_dir)) return 1;
    auto redis_address = *redis::parse_redis_url(config_.redis_url);
    if (redis_credentials_refused(redis_address)) {
        log::error("start_refused", {{"detail", "Redis refused the credentials of redis_url"}});
        return 1;
    }

    HealthState health;
    SnapshotStore store;
    SystemClock clock;
    UrlPolicy url_policy{.allow_http = config_.allow_http_destinations};

    pg::SnapshotFollower follower(
        {config_.database_url, config_.snapshot_file, config_.reload_interval, url_policy}, store,
        health);
    if (!follower.load_initial()) {
        log::warn("no_snapshot",
                  {{"detail", "redirects answer 503 until PostgreSQL is reachable"}});
    }
    follower.start();

    // Counting: a shard and a recorder per I/O thread, one sender to Redis, one flusher.
    auto trusted_proxies =
        parse_networks(config_.clicks.trusted_proxies).value_or(std::vector<IpNetwork>{});
    SaltBox salts;
    ClickStats click_stats;
    std::vector<std::unique_ptr<ClickShard>> shards;
    std::vector<std::unique_ptr<ClickRecorder>> recorders;
    std::vector<ClickShard*> shard_pointers;
    for (unsigned i = 0; i < config_.threads; ++i) {
        shards.push_back(std::make_unique<ClickShard>());
        shard_pointers.push_back(shards.back().get());
        recorders.push_back(std::make_unique<ClickRecorder>(
            *shards.back(), salts, ClickClassifier::builtin(), trusted_proxies));
    }
    std::atomic<std::size_t> next_recorder{0};
    auto sender_store = clicks::make_redis_bucket_store({.address = redis_address});
    clicks::ClickSender sender({.window = config_.clicks.aggregation_window,
                                .bucket = config_.clicks.bucket,
                                .max_pending_keys = config_.clicks.max_pending_keys,
                                .spill_file = config_.clicks.spill_file},
                               *sender_store, shard_pointers, salts, clock, health, click_stats);
    sender.start();
    auto flusher_store = clicks::make_redis_bucket_store(
        {.address = redis_address, .timeout = clicks::kFlushRedisTimeout});
    auto flusher_sink = clicks::make_pg_count_sink({.database_url = config_.database_url});
    clicks::ClickFlusher flusher(
        *flusher_store, *flusher_sink,
        {.bucket = config_.clicks.bucket, .stats = &click_stats, .health = &health},
        config_.clicks.flush_interval);
    flusher.start();

    // Metrics: per-thread request counters, summed with everything else at scrape time.
    RequestMetrics request_metrics;
    std::atomic<std::uint64_t> admin_unavailable{0};
    metrics::Exporter exporter({.requests = &request_metrics,
                                .clicks = &click_stats,
                                .health = &health,
                                .snapshots = &store,
                                .admin_unavailable = &admin_unavailable,
                                .version = REFGATE_VERSION,
                                .commit = REFGATE_GIT_COMMIT});
    metrics::Authorizer metrics_auth;
    if (config_.metrics_token_required) {
        std::shared_ptr<admin::AdminStore> tokens =
            admin::make_pg_admin_store({.database_url = config_.database_url,
                                        .url_policy = url_policy,
                                        .connection_wait = config_.admin_db_wait});
        metrics_auth = [tokens](std::string_view authorization) {
            try {
                return admin::bearer_role(*tokens, authorization) ? metrics::Access::allowed
                                                                  : metrics::Access::unauthorized;
            } catch (const std::exception& e) {
                log::warn("metrics_token_check_failed", {{"error", e.what()}});
                return metrics::Access::unavailable;
            }
        };
    }
    auto metrics_handler = std::make_shared<metrics::MetricsHandler>(exporter, metrics_auth);

    auto health_handler = [&store, &health, &click_stats](ReadinessDetail detail) {
        return std::make_shared<HealthHandler>(store, health, &click_stats, detail);
    };
    http::ListenerOptions public_listener{
        .name = "public",
        .endpoint = config_.listen,
        .limits = config_.http,
        .share_port = config_.reuse_port,
        .handler_factory =
            [&, health_handler] {
                auto router = std::make_unique<http::Router>();
                ClickRecorder* recorder = recorders.at(next_recorder++).get();
                router->prefix(
                    "/go/", std::make_shared<RedirectHandler>(
                                store, clock, RedirectOptions{config_.referrer_policy}, recorder));
                auto ops = health_handler(ReadinessDetail::verdict);
                router->exact("/healthz", ops);
                router->exact("/readyz", ops);
                auto disclosure = std::make_shared<DisclosureHandler>(
                    store,
                    DisclosureOptions{config_.disclosure.default_locale, config_.disclosure.max_age,
                                      config_.disclosure.public_base_url});
                for (auto path : DisclosureHandler::kPaths)
                    router->exact(std::string(path), disclosure);
                router->prefix(std::string(DisclosureHandler::kSnippetPrefix), disclosure);
                return std::make_unique<http::CountingHandler>(std::move(router),
                                                               request_metrics.add_slot("public"));
            },
    };
    // Every admin call waits at most admin_db_wait for the blocking pool, and again for a
    // database connection; past either it answers 503 (counted in refgate_admin_unavailable_total).
    auto admin_api = std::make_shared<admin::AdminHandler>(
        admin::make_pg_admin_store({.database_url = config_.database_url,
                                    .url_policy = url_policy,
                                    .connection_wait = config_.admin_db_wait}),
        admin::AdminOptions{.cors_origins = config_.admin_cors_origins,
                            .unavailable = &admin_unavailable},
        admin::make_pg_stats_store({.database_url = config_.database_url,
                                    .redis = redis_address,
                                    .connection_wait = config_.admin_db_wait}));
    http::ListenerOptions admin_listener{
        .name = "admin",
        .endpoint = config_.admin_listen,
        .limits = config_.admin_http,
        .share_port = config_.reuse_port,
        .handler_factory =
            [health_handler, admin_api, metrics_handler, &request_metrics] {
                auto router = std::make_unique<http::Router>();
                router->prefix("/api/v1/", admin_api);
                auto ops = health_handler(ReadinessDetail::full);
                router->exact("/healthz", ops);
                router->exact("/readyz", ops);
                router->exact("/metrics", metrics_handler);
                return std::make_unique<http::CountingHandler>(std::move(router),
                                                               request_metrics.add_slot("admin"));
            },
        .blocking_wait = config_.admin_db_wait,
    };
    http::Server server(config_.threads, {public_listener, admin_listener});
    exporter.set_listeners({{"public", &server.stats(0)}, {"admin", &server.stats(1)}});
    try {
        server.bind();
    } catch (const std::exception& e) {
        log::error("listen_failed", {{"error", e.what()}});
        return 1;
    }
    server.start();
    log::info("listening", {{"listener", "public"},
                            {"host", config_.listen.host},
                            {"port", server.port(0)},
                            {"threads", config_.threads}});
    log::info(
        "listening",
        {{"listener", "admin"}, {"host", config_.admin_listen.host}, {"port", server.port(1)}});

    log::info("stopping", {{"signal", signal_name(wait_for_stop(signals, follower))}});
    drain(signals, health, follower, config_.drain);
    server.shutdown(config_.shutdown_timeout);
    // Every request is answered: what the shards hold goes to Redis (or the spill file).
    sender.stop();
    flusher.stop();
    follower.stop();
    log::info("stopped");
    return 0;
}

}  // namespace refgate
