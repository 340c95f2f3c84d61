#pragma once

// The admin API's pieces behind the router: the typed request the middleware chain builds, the
// chain's steps, and the per-resource handlers that answer a typed request.

#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "answer.hpp"
#include "refgate/admin/admin_handler.hpp"
#include "refgate/admin/failure_limiter.hpp"
#include "refgate/domain/ip_network.hpp"

namespace refgate::admin {

// A request once the chain is through: who asks, for which route, with which names, body and
// preconditions.
struct ApiRequest {
    const http::Request& http;
    std::vector<const Route*> matches;  // the routes whose pattern matches the path
    const Route* route = nullptr;       // the one for the request's method; set by authorization
    domain::IpBytes client{};  // the socket peer, or the address a trusted proxy forwarded for
    Actor actor;
    std::string name;             // the {slug}, {name} or {key} segment
    std::string locale;           // the {locale} segment, normalised
    nlohmann::ordered_json body;  // POST, PATCH and PUT: a JSON object
    Precondition if_match;        // PATCH and DELETE
    PutPrecondition put;          // PUT
    std::string default_host;     // the default domain's host (links without `domain`)
    // A link's routes: the {slug}, or "host/slug" with ?domain=HOST (issue 46: the link on that
    // domain, not the default domain's); empty where no link is named.
    std::string link;
};

// The link a request names: `link` once check_names() set it, else the {slug}.
inline const std::string& link_name(const ApiRequest& request) {
    return request.link.empty() ? request.name : request.link;
}

// Whether a restricted request may see `link` (its partner and domain) or the partner `slug`.
bool link_visible(const ApiRequest& request, const domain::Link& link);
bool partner_visible(const ApiRequest& request, std::string_view slug);

// One step of the chain: fills in the request, or answers and stops it (false).
// Throws StoreError when the database cannot say.
class Middleware {
  public:
    virtual ~Middleware() = default;
    virtual bool apply(ApiRequest& request, Answer& answer) = 0;
};

using Chain = std::vector<std::unique_ptr<Middleware>>;

// Authentication: tries each authenticator; 401 when none accepts. Failures are limited per
// client and in total (429 with Retry-After); a credential that is valid is accepted whatever
// failures its client had, so no one is locked out by someone else's. Comes before anything else
// is revealed.
std::unique_ptr<Middleware> authenticate(std::vector<std::shared_ptr<Authenticator>> authenticators,
                                         FailureLimiter& limiter);
// The route for the method (405 with Allow otherwise), the role it needs and the scopes (403).
std::unique_ptr<Middleware> authorize();
// A partner- or domain-restricted token (issue 46): objects outside answer 404, writes that
// would put a link outside 403, routes over everything 403. `default_host`: the default domain's.
std::unique_ptr<Middleware> restrict_reach(AdminStore& store, std::string default_host);
// Names in the path by their own rules (404 otherwise); the locale normalised.
std::unique_ptr<Middleware> check_names();
// Query parameters are UTF-8 without control characters (400 naming the parameter), so that no
// bad byte reaches the database.
std::unique_ptr<Middleware> check_query();
// Bodies of POST, PATCH and PUT: JSON objects of the right media type (415, 400, 422).
std::unique_ptr<Middleware> read_body();
// If-Match on PATCH and DELETE (428, 412); If-Match and If-None-Match: * on PUT.
std::unique_ptr<Middleware> read_preconditions();

// Answers the typed requests of one resource's routes.
class Resource {
  public:
    virtual ~Resource() = default;
    // Throws StoreError when the database fails.
    virtual void serve(const ApiRequest& request, Answer& answer) = 0;
    // Where the resource lives and its routes are its ResourceEntry's; stats_api.cpp still
    // declares them too until it is converted after the roll-ups (nothing reads these).
    virtual std::string_view prefix() const { return {}; }
    virtual std::span<const Route> routes() const { return {}; }
};

// What the resources are built from.
struct ResourceContext {
    AdminStore& store;
    StatsStore* stats;  // null: the stats routes answer 503
    const domain::Clock& clock;
    const AdminOptions& options;  // the console (null: its resources are not served), link health
};

// One resource of the API: the collection's path every route of it starts with
// ("/api/v1/partners"), its routes, and how it is built. resource_registry() is the one list:
// the handler serves what it holds and routes() lists it.
struct ResourceEntry {
    std::string_view prefix;
    std::span<const Route> (*routes)();
    // Null when the resource is not served in this configuration (the console's without one).
    std::unique_ptr<Resource> (*make)(const ResourceContext& context);
    bool open = false;  // served without authentication: signing in needs no credentials
};

std::span<const ResourceEntry> resource_registry();

std::span<const Route> partner_routes();
std::span<const Route> link_routes();
std::span<const Route> audit_routes();
std::span<const Route> token_routes();
std::span<const Route> disclosure_routes();
std::span<const Route> stats_routes();
std::span<const Route> user_routes();
std::span<const Route> session_routes();
std::span<const Route> import_routes();
std::span<const Route> export_routes();
std::span<const Route> country_group_routes();
std::span<const Route> placement_routes();
std::span<const Route> webhook_routes();
std::span<const Route> domain_routes();

// `commissions` may be null: its routes answer 503 then.
std::unique_ptr<Resource> partners_resource(AdminStore& store, CommissionStore* commissions);
// POST /api/v1/partners/{slug}/commissions and .../postback-secret (src/admin/commissions.cpp).
void serve_commissions(CommissionStore& store, const ApiRequest& request, Answer& answer);
std::unique_ptr<Resource> links_resource(AdminStore& store, LinkHealthService* health,
                                         StatsStore* stats, const domain::Clock& clock);
std::unique_ptr<Resource> audit_resource(AdminStore& store);
std::unique_ptr<Resource> tokens_resource(AdminStore& store);
std::unique_ptr<Resource> disclosures_resource(AdminStore& store);
std::unique_ptr<Resource> import_resource(AdminStore& store);
std::unique_ptr<Resource> export_resource(AdminStore& store);
std::unique_ptr<Resource> country_groups_resource(AdminStore& store);
std::unique_ptr<Resource> domains_resource(AdminStore& store);
// GET /api/v1/placements/{token}; GET /api/v1/links/{slug}/placements is the links' route and
// served by serve_placements() too (src/admin/placements.cpp). `stats` may be null (503).
std::unique_ptr<Resource> placements_resource(AdminStore& store, StatsStore* stats,
                                              const domain::Clock& clock);
void serve_placements(AdminStore& store, StatsStore* stats, const domain::Clock& clock,
                      const ApiRequest& request, Answer& answer);
// GET /api/v1/links/{slug}/qr.svg and qr.png: the link's public URL as a QR code.
void serve_qr(AdminStore& store, const ApiRequest& request, Answer& answer);
// /api/v1/webhooks (src/admin/webhooks.cpp); `store` may be null: 503.
std::unique_ptr<Resource> webhooks_resource(WebhookStore* store);
// `stats` may be null (503); `clock` says which day is today.
// The stats routes; `commissions` answers /api/v1/stats/earnings (none: 503).
std::unique_ptr<Resource> stats_resource(AdminStore& store, StatsStore* stats,
                                         const domain::Clock& clock, CommissionStore* commissions);
std::unique_ptr<Resource> users_resource(ConsoleService& console);
// /api/v1/session: served without the authentication step (signing in needs no credentials).
std::unique_ptr<Resource> session_resource(ConsoleService& console, const AdminOptions& options);

// "application/json; charset=utf-8" -> "application/json".
std::string_view media_type(std::string_view content_type);

// An integer query parameter from 1 to max; `fallback` when absent, nullopt when invalid.
std::optional<std::size_t> limit_parameter(std::string_view query, std::size_t fallback,
                                           std::size_t max);

}  // namespace refgate::admin
