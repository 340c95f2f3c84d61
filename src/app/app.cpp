#include "refgate/app/app.hpp"

#include <pthread.h>

#include <csignal>

#include "refgate/core/log.hpp"
#include "refgate/http/router.hpp"
#include "refgate/http/server.hpp"
#include "refgate/ops/health.hpp"
#include "refgate/pg/snapshot_follower.hpp"
#include "refgate/redirect/redirect_handler.hpp"
#include "refgate/redis/redis_client.hpp"

namespace refgate {
namespace {

sigset_t stop_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}

}  // namespace

int App::serve() {
    // Block the stop signals before any thread starts, so that every thread inherits the mask and
    // only sigwait() below receives them.
    sigset_t signals = stop_signals();
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

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

    auto redis_address = redis::parse_redis_url(config_.redis_url);
    redis::RedisHealthMonitor redis_monitor(*redis_address, health);
    redis_monitor.start();

    auto health_handler = [&store, &health] {
        return std::make_shared<HealthHandler>(store, health);
    };
    http::ListenerOptions public_listener{
        .name = "public",
        .endpoint = config_.listen,
        .limits = config_.http,
        .handler_factory =
            [&, health_handler] {
                auto router = std::make_unique<http::Router>();
                router->prefix("/go/", std::make_shared<RedirectHandler>(
                                           store, clock, RedirectOptions{config_.referrer_policy}));
                auto ops = health_handler();
                router->exact("/healthz", ops);
                router->exact("/readyz", ops);
                return router;
            },
    };
    http::ListenerOptions admin_listener{
        .name = "admin",
        .endpoint = config_.admin_listen,
        .limits = config_.admin_http,
        .handler_factory =
            [health_handler] {
                auto router = std::make_unique<http::Router>();
                auto ops = health_handler();
                router->exact("/healthz", ops);
                router->exact("/readyz", ops);
                return router;
            },
    };
    http::Server server(config_.threads, {public_listener, admin_listener});
    try {
        server.bind();
    } catch (const std::exception& e) {
        log::error("listen_failed", {{"error", e.what()}});
        follower.stop();
        redis_monitor.stop();
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

    int signal = 0;
    sigwait(&signals, &signal);
    log::info("stopping", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
    server.shutdown(config_.shutdown_timeout);
    follower.stop();
    redis_monitor.stop();
    log::info("stopped");
    return 0;
}

}  // namespace refgate
