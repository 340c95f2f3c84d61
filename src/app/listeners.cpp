#include "refgate/admin/bearer.hpp"
#include "refgate/admin/pg_admin_store.hpp"
#include "refgate/admin/pg_stats_store.hpp"
#include "refgate/console/console_handler.hpp"
#include "refgate/disclosure/disclosure_handler.hpp"
#include "refgate/domain/request_host.hpp"
#include "refgate/http/router.hpp"
#include "refgate/metrics/counting_handler.hpp"
#include "refgate/ops/health.hpp"
#include "refgate/redirect/redirect_handler.hpp"
#include "refgate/runtime/log.hpp"
#include "services.hpp"

namespace refgate::app {
namespace {

using metrics::route_tag;

// The redirects' options: REFGATE_UNKNOWN_HOST, and the public base URL's host as the default
// domain's while no domain is defined (issue 46).
redirect::RedirectOptions redirect_options(const config::Config& config) {
    redirect::RedirectOptions options{config.referrer_policy, config.reject_unknown_host, {}};
    std::string_view host =
        domain::authority_host(domain::absolute_form_authority(config.disclosure.public_base_url));
    std::array<char, domain::kMaxRequestHost> lower{};
    options.default_host = domain::lower_host(host, lower);
    return options;
}

void add_health_routes(http::Router& router, Shared& s, ops::ReadinessDetail detail) {
    auto ops = std::make_shared<ops::HealthHandler>(s.snapshots, s.health, &s.click_stats, detail,
                                                    &s.clock);
    router.exact("/healthz", ops, route_tag(metrics::RouteClass::health));
    router.exact("/readyz", ops, route_tag(metrics::RouteClass::health));
}

// The public listener's handler: postbacks (database work, on the server's blocking pool) apart
// from everything else, so that the redirects' router never blocks and keeps counting with plain
// additions on its own thread (Writers::one); only the postbacks' counters take atomic ones.
class PublicHandler final : public http::Handler {
  public:
    PublicHandler(std::unique_ptr<metrics::CountingHandler> main,
                  std::unique_ptr<metrics::CountingHandler> postbacks)
        : main_(std::move(main)), postbacks_(std::move(postbacks)) {}

    void handle(const http::Request& request, http::Response& response) override {
        (postback(request.path()) ? postbacks_ : main_)->handle(request, response);
    }
    bool blocking(const http::Request& request) const override { return postback(request.path()); }
    bool may_block() const override { return true; }
    void prepare(std::string_view path, Parsed stage, http::RequestNotes& notes) override {
        (postback(path) ? postbacks_ : main_)->prepare(path, stage, notes);
    }
    void unavailable(const http::Request& request, http::Response& response) override {
        (postback(request.path()) ? postbacks_ : main_)->unavailable(request, response);
    }

  private:
    static bool postback(std::string_view path) {
        return path.starts_with(admin::PostbackHandler::kPrefix);
    }
    std::unique_ptr<metrics::CountingHandler> main_;
    std::unique_ptr<metrics::CountingHandler> postbacks_;
};

http::ListenerOptions public_listener(Shared& s, Counting& counting) {
    return {
        .name = "public",
        .endpoint = s.config.listen,
        .limits = s.config.http,
        .share_port = s.config.reuse_port,
        .handler_factory =
            [&s, &counting] {
                auto router = std::make_unique<http::Router>();
                router->prefix(
                    "/go/",
                    std::make_shared<redirect::RedirectHandler>(
                        s.snapshots, s.clock, redirect_options(s.config), &counting.next_recorder(),
                        redirect::TargetingSources{.trusted_proxies = &counting.trusted_proxies,
                                                   .salts = &counting.salts,
                                                   .countries = &counting.countries.box}),
                    route_tag(metrics::RouteClass::redirect));
                add_health_routes(*router, s, ops::ReadinessDetail::verdict);
                const auto& d = s.config.disclosure;
                using disclosure::DisclosureHandler;
                auto disclosures = std::make_shared<DisclosureHandler>(
                    s.snapshots,
                    disclosure::DisclosureOptions{d.default_locale, d.max_age, d.public_base_url});
                for (auto path : DisclosureHandler::kPaths)
                    router->exact(std::string(path), disclosures,
                                  route_tag(metrics::RouteClass::disclosure));
                router->prefix(std::string(DisclosureHandler::kSnippetPrefix), disclosures,
                               route_tag(metrics::RouteClass::disclosure));
                auto postbacks = std::make_unique<http::Router>();
                postbacks->prefix(std::string(admin::PostbackHandler::kPrefix),
                                  std::make_shared<admin::PostbackHandler>(
                                      s.commissions, s.postback_limiter, s.postback_batcher),
                                  route_tag(metrics::RouteClass::other));
                return std::make_unique<PublicHandler>(
                    std::make_unique<metrics::CountingHandler>(
                        std::move(router), s.request_metrics.add_slot("public")),
                    std::make_unique<metrics::CountingHandler>(
                        std::move(postbacks), s.request_metrics.add_slot("public")));
            },
    };
}

// The editors' console, when this build embeds it (-DREFGATE_CONSOLE=ON); /console/ is 404
// otherwise. Its requests are labelled `other` in the metrics, as the route classes are fixed.
void add_console_routes(http::Router& router) {
    auto assets = console::embedded_assets();
    if (assets.empty()) return;
    auto handler = std::make_shared<console::ConsoleHandler>(assets);
    router.exact(std::string(console::ConsoleHandler::kRoot), handler,
                 route_tag(metrics::RouteClass::other));
    router.prefix(std::string(console::ConsoleHandler::kPrefix), handler,
                  route_tag(metrics::RouteClass::other));
}

http::ListenerOptions admin_listener(Shared& s, const AdminApi& admin,
                                     std::shared_ptr<metrics::MetricsHandler> metrics) {
    return {
        .name = "admin",
        .endpoint = s.config.admin_listen,
        .limits = s.config.admin_http,
        .share_port = s.config.reuse_port,
        .handler_factory =
            [&s, api = admin.handler, metrics] {
                auto router = std::make_unique<http::Router>();
                router->prefix("/api/v1/", api, route_tag(metrics::RouteClass::admin_api));
                add_health_routes(*router, s, ops::ReadinessDetail::full);
                router->exact("/metrics", metrics, route_tag(metrics::RouteClass::metrics));
                add_console_routes(*router);
                return std::make_unique<metrics::CountingHandler>(
                    std::move(router), s.request_metrics.add_slot("admin"));
            },
        // Every admin call waits at most admin_db_wait for the blocking pool, and again for a
        // database connection; past either it answers 503 (refgate_admin_unavailable_total).
        .blocking_wait = s.config.admin_db_wait,
        // A trusted proxy carries every client behind it: held to the listener's cap only (a
        // share would let one slow client behind it shut out all the others).
        .proxies = config::parse_networks(s.config.clicks.trusted_proxies)
                       .value_or(std::vector<domain::IpNetwork>{}),
    };
}

}  // namespace

AdminApi make_admin_api(Shared& s) {
    // One pool of connections for the API, the console's sessions and /metrics' token checks.
    const config::Config& c = s.config;
    auto stores = admin::make_pg_admin_stores(
        {.database_url = c.database_url,
         .url_policy = s.url_policy,
         .connection_wait = c.admin_db_wait,
         .public_base_url = c.disclosure.public_base_url,
         .default_locale = c.disclosure.default_locale},
        {.idle = c.console_session_idle, .max = c.console_session_max, .clock = &s.clock});
    admin::AdminStore& tokens = *stores.store;
    AdminApi api;
    api.handler = std::make_shared<admin::AdminHandler>(
        std::move(stores.store),
        admin::AdminOptions{.cors_origins = c.admin_cors_origins,
                            .unavailable = &s.admin_unavailable,
                            .console = std::move(stores.console),
                            .console_web = {.admin_origin = c.admin_public_url},
                            .public_base_url = c.disclosure.public_base_url,
                            .sign_ins = &s.console_sign_ins,
                            .link_health = make_link_health_api(s),
                            // Validated at start-up (config), as for clicks.
                            .trusted_proxies = config::parse_networks(c.clicks.trusted_proxies)
                                                   .value_or(std::vector<domain::IpNetwork>{}),
                            .commissions = s.commissions,
                            .webhooks = s.webhooks,
                            .auth_cache_lifetime = c.auth_cache},
        // Dashboards read a lot: from a replica when one is configured (reads only, any host).
        admin::make_pg_stats_store(
            {.database_url = c.stats_database_url.empty() ? c.database_url : c.stats_database_url,
             .redis = s.redis,
             .connection_wait = c.admin_db_wait}));
    if (!s.config.metrics_token_required) return api;
    // The handler owns the store: the check keeps the handler alive.
    api.metrics_auth = [&tokens, owner = api.handler](std::string_view authorization) {
        try {
            return admin::bearer_role(tokens, authorization) ? metrics::Access::allowed
                                                             : metrics::Access::unauthorized;
        } catch (const std::exception& e) {
            runtime::log::warn("metrics_token_check_failed", {{"error", e.what()}});
            return metrics::Access::unavailable;
        }
    };
    return api;
}

HttpService::HttpService(Shared& shared, Counting& counting)
    : shared_(shared),
      exporter_({.requests = &shared.request_metrics,
                 .clicks = &shared.click_stats,
                 .health = &shared.health,
                 .snapshots = &shared.snapshots,
                 .admin_unavailable = &shared.admin_unavailable,
                 .console_sign_ins = &shared.console_sign_ins,
                 .version = REFGATE_VERSION,
                 .commit = REFGATE_GIT_COMMIT,
                 .clock = &shared.clock,
                 .link_health = &shared.link_health,
                 .commissions = &shared.commission_stats,
                 .webhooks = &shared.webhook_stats}),
      admin_(make_admin_api(shared)),
      metrics_(std::make_shared<metrics::MetricsHandler>(exporter_, admin_.metrics_auth)),
      server_(shared.config.threads,
              {public_listener(shared, counting), admin_listener(shared, admin_, metrics_)},
              shared.config.io_uring) {
    exporter_.set_listeners({{"public", &server_.stats(0)}, {"admin", &server_.stats(1)}},
                            &server_);
}

bool HttpService::start() {
    try {
        server_.bind();
    } catch (const std::exception& e) {
        runtime::log::error("listen_failed", {{"error", e.what()}});
        return false;
    }
    server_.start();
    const config::Config& c = shared_.config;
    runtime::log::info("listening", {{"listener", "public"},
                                     {"host", c.listen.host},
                                     {"port", server_.port(0)},
                                     {"threads", c.threads}});
    runtime::log::info(
        "listening",
        {{"listener", "admin"}, {"host", c.admin_listen.host}, {"port", server_.port(1)}});
    return true;
}

}  // namespace refgate::app
