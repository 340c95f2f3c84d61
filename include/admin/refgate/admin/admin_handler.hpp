#pragma once

// The editors' JSON API under /api/v1 on the admin listener: one handler per resource on an
// http::Router, each behind the same chain (authenticate, limit failures, authorize, read the
// body and preconditions) that hands it a typed request. RFC 9457 problem answers, ETag and
// If-Match. One instance serves every thread.

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/admin/admin_store.hpp"
#include "refgate/admin/authenticator.hpp"
#include "refgate/admin/console_service.hpp"
#include "refgate/admin/link_health_service.hpp"
#include "refgate/admin/stats_store.hpp"
#include "refgate/domain/clock.hpp"
#include "refgate/domain/ip_network.hpp"
#include "refgate/http/router.hpp"
#include "refgate/http/server.hpp"

namespace refgate::admin {

class CommissionStore;  // refgate/admin/commissions.hpp
class WebhookStore;     // refgate/admin/webhooks.hpp

enum class Operation {
    list_partners,
    create_partner,
    get_partner,
    update_partner,
    delete_partner,
    partner_codes,
    list_links,
    create_link,
    get_link,
    update_link,
    delete_link,
    audit,
    list_tokens,
    create_token,
    revoke_token,
    list_disclosures,
    get_disclosure,
    put_disclosure,
    stats_link,
    stats_partner,
    stats_top,
    list_users,
    create_user,
    get_user,
    update_user,
    sign_in,
    read_session,
    sign_out,
    change_password,
    preview_link,
    share_link,
    qr_svg,
    qr_png,
    disclosure_versions,
    preview_disclosure,
    import_document,
    export_document,
    stats_overview,
    link_health,
    check_link_health,
    list_country_groups,
    get_country_group,
    put_country_group,
    delete_country_group,
    link_placements,
    get_placement,
    import_commissions,
    rotate_postback_secret,
    stats_earnings,
    stats_earnings_attention,
    list_webhooks,
    create_webhook,
    get_webhook,
    update_webhook,
    delete_webhook,
    rotate_webhook_secret,
    webhook_deliveries,
    retry_webhook_delivery,
    stats_live,
    list_domains,
    get_domain,
    put_domain,
    delete_domain,
};

struct Route {
    http::Method method;
    std::string_view method_name;  // "GET", as OpenAPI spells it in lower case
    std::string_view pattern;      // "/api/v1/partners/{slug}"; a {...} segment is a name
    Role min_role;
    Operation operation;
};

// Every route the handler serves; tests check each against api/openapi.json.
std::span<const Route> routes();

// Issue 46: what a partner- or domain-restricted token reaches through a route.
enum class Extent {
    free,         // nothing partner's or link's: no restriction applies
    partner,      // the {slug} names a partner: outside the token's partners, 404
    link,         // the {slug} names a link: outside, 404; a PATCH moving it outside, 403
    partners,     // a list of partners: filtered
    links,        // a list of links: filtered
    new_partner,  // the body makes a partner: outside the token's partners, 403
    new_link,     // the body is a link: on a partner or domain outside, 403
    whole,        // everything at once (audit, import, totals): 403 for a restricted token
};

// What a route needs beyond its role: all of `scopes`, and its extent.
struct RouteAccess {
    Scopes scopes = scope::none;
    Extent extent = Extent::free;
};

// The one table, beside the resource registry (registry.cpp): every operation's scope and extent.
RouteAccess route_access(Operation operation);

struct AdminOptions {
    std::size_t max_failures_per_minute = 20;   // per client address, then 429
    std::size_t max_tracked_addresses = 10000;  // failure counters kept in memory at most
    // Origins whose browsers may call the API (CORS); empty: same-origin only.
    std::vector<std::string> cors_origins;
    // Counts the calls answered 503 because the database was unreachable or busy past its bound.
    std::atomic<std::uint64_t>* unavailable = nullptr;
    std::size_t max_failures_per_second = 50;       // from all addresses together, then 429
    const domain::MonotonicClock* clock = nullptr;  // for those limits; none: the steady clock
    // Tried in order, the first that accepts wins; none: bearer tokens looked up in the store.
    std::vector<std::shared_ptr<Authenticator>> authenticators;
    const domain::Clock* wall_clock =
        nullptr;  // "today" for the stats' default range; none: system
    // The console's users and sessions: /api/v1/session, /api/v1/users and the session cookie
    // as one more authenticator (after the bearer token). None: those routes are 404.
    std::shared_ptr<ConsoleService> console;
    ConsoleWeb console_web;
    std::string public_base_url;  // shown to the console in the session; empty: null
    // Sign-in results: ok, refused (name or password wrong), limited (429); may be null.
    std::array<std::atomic<std::uint64_t>, 3>* sign_ins = nullptr;
    // The link-health routes; none: they answer 404.
    std::shared_ptr<LinkHealthService> link_health;
    // Proxies whose X-Forwarded-For names the client (REFGATE_TRUSTED_PROXIES): failures are
    // limited per client, not per proxy.
    std::vector<domain::IpNetwork> trusted_proxies;
    // Commissions (issue 43): a partner's commissions import and postback secret; none: those
    // routes answer 503.
    std::shared_ptr<CommissionStore> commissions;
    // Webhooks (issue 44): /api/v1/webhooks; none: those routes answer 503.
    std::shared_ptr<WebhookStore> webhooks;
    // How long a checked token or session is kept in memory (REFGATE_AUTH_CACHE_SECONDS); 0:
    // every call asks the database. Used by the authenticators the handler makes itself.
    std::chrono::seconds auth_cache_lifetime{0};
};

class AdminHandler final : public http::Handler {
  public:
    AdminHandler(std::unique_ptr<AdminStore> store, AdminOptions options = {},
                 std::unique_ptr<StatsStore> stats = nullptr);
    ~AdminHandler() override;
    void handle(const http::Request& request, http::Response& response) override;
    bool blocking(const http::Request& request) const override;
    bool may_block() const override { return true; }
    // The blocking pool was busy past its bound: the same problem answer as a database failure.
    void unavailable(const http::Request& request, http::Response& response) override;

  private:
    struct Parts;
    std::unique_ptr<Parts> parts_;  // the store, the chain and the resources the routes share
    http::Router router_;
};

}  // namespace refgate::admin
