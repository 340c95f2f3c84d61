#include "refgate/admin/admin_handler.hpp"

#include "api.hpp"
#include "console_http.hpp"
#include "cors.hpp"
#include "refgate/admin/auth_cache.hpp"
#include "refgate/admin/console_crypto.hpp"
#include "refgate/admin/console_service.hpp"
#include "refgate/domain/public_url.hpp"
#include "refgate/runtime/log.hpp"
#include "refgate/runtime/log_limiter.hpp"

namespace refgate::admin {
namespace {

using http::Method;

std::string_view without_trailing_slash(std::string_view path) {
    if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    return path;
}

// Matches a path against a pattern: a "{locale}" segment matches one non-empty segment into
// `locale`, any other "{...}" segment (slug, key, name) one into `name`.
bool matches(std::string_view pattern, std::string_view path, std::string& name,
             std::string& locale) {
    while (!pattern.empty() || !path.empty()) {
        auto ps = pattern.find('/', 1);
        auto qs = path.find('/', 1);
        std::string_view p = pattern.substr(0, ps);
        std::string_view q = path.substr(0, qs);
        if (p == "/{locale}") {
            if (q.size() < 2) return false;
            locale = std::string(q.substr(1));
        } else if (p.starts_with("/{") && p.ends_with("}")) {
            if (q.size() < 2) return false;
            name = std::string(q.substr(1));
        } else if (p != q) {
            return false;
        }
        pattern = ps == std::string_view::npos ? std::string_view{} : pattern.substr(ps);
        path = qs == std::string_view::npos ? std::string_view{} : path.substr(qs);
    }
    return true;
}

// What every resource's endpoint shares: the chain, CORS, and how failures are answered.
struct Shared {
    AdminOptions options;
    Chain chain;
    Chain open_chain;  // for /api/v1/session: no authentication
    runtime::LogLimiter failure_log{std::chrono::seconds{10}};
    AuthCache* auth_cache = nullptr;  // the credentials the authenticators keep

    void unavailable(http::Response& response, std::string_view detail) {
        Answer{response}.problem(503, "unavailable", detail);
        response.add_header("Retry-After", "1");
    }

    // 503 for a database failure; counted, and logged at a bounded rate.
    void database_unavailable(http::Response& response, const char* error) {
        std::uint64_t count = 0;
        if (options.unavailable != nullptr)
            count = options.unavailable->fetch_add(1, std::memory_order_relaxed) + 1;
        if (failure_log.allow())
            runtime::log::warn("admin_store_failed",
                               {{"error", error}, {"unavailable_total", count}});
        unavailable(response, "the database is unreachable; try again");
    }
};

// A change to credentials made through this instance (a revoked token, a user changed or
// disabled, a sign-out, a new password) is forgotten by the cache once the resource has served
// it, whether it succeeded or threw: the next call with those credentials asks the database.
class ForgetChangedCredentials {
  public:
    ForgetChangedCredentials(AuthCache* cache, const ApiRequest& request, const ConsoleWeb& web)
        : cache_(cache), request_(request), web_(web) {}
    ~ForgetChangedCredentials() {
        if (cache_ == nullptr || request_.route == nullptr) return;
        switch (request_.route->operation) {
            case Operation::revoke_token:
                cache_->forget_actor(request_.name);  // a token's actor is its name
                break;
            case Operation::update_user:
                cache_->forget_actor("user:" + request_.name);
                break;
            case Operation::sign_out:
                if (std::string_view id = session_cookie(request_.http, web_); plausible_secret(id))
                    cache_->forget(AuthCache::session_key(secret_hash_hex(id)));
                break;
            case Operation::change_password:  // ends the user's other sessions, unknown here
                cache_->clear();
                break;
            default:
                break;
        }
    }
    ForgetChangedCredentials(const ForgetChangedCredentials&) = delete;
    ForgetChangedCredentials& operator=(const ForgetChangedCredentials&) = delete;

  private:
    AuthCache* cache_;
    const ApiRequest& request_;
    const ConsoleWeb& web_;
};

// One resource on the router: preflights, then the chain, then the resource.
class Endpoint final : public http::Handler {
  public:
    Endpoint(Shared& shared, Resource* resource, std::span<const Route> routes, const Chain& chain)
        : shared_(shared), resource_(resource), routes_(routes), chain_(chain) {}

    void handle(const http::Request& request, http::Response& response) override {
        std::string_view origin = allowed_origin(request, shared_.options.cors_origins);
        bool vary = !shared_.options.cors_origins.empty();
        ApiRequest api{.http = request};
        api.client = domain::client_address(request.peer.bytes, request.header("X-Forwarded-For"),
                                            shared_.options.trusted_proxies);
        match(api);
        // A preflight carries no credentials: it is answered before authentication.
        if (request.method == Method::options && !api.matches.empty()) {
            answer_preflight(allowed(api), origin, vary, response);
            return;
        }
        serve(api, response);
        add_cors_headers(origin, vary, response);
        response.add_header("X-Content-Type-Options", "nosniff");
    }
    bool may_block() const override { return true; }
    void unavailable(const http::Request&, http::Response& response) override {
        shared_.unavailable(response, "the service is busy; try again");
        response.add_header("X-Content-Type-Options", "nosniff");
    }

  private:
    void match(ApiRequest& api) const {
        if (resource_ == nullptr) return;
        std::string_view path = without_trailing_slash(api.http.path());
        for (const auto& r : routes_) {
            std::string name;
            std::string locale;
            if (!matches(r.pattern, path, name, locale)) continue;
            api.matches.push_back(&r);
            api.name = std::move(name);
            api.locale = std::move(locale);
        }
    }

    static std::string allowed(const ApiRequest& api) {
        std::string methods;
        for (const Route* r : api.matches)
            methods += (methods.empty() ? "" : ", ") + std::string(r->method_name);
        return methods;
    }

    void serve(ApiRequest& api, http::Response& response) {
        Answer answer{response};
        if (api.matches.empty()) return answer.problem(404, "not-found", "no such resource");
        try {
            for (const auto& step : chain_) {
                if (!step->apply(api, answer)) return;
            }
            ForgetChangedCredentials forget(shared_.auth_cache, api, shared_.options.console_web);
            resource_->serve(api, answer);
        } catch (const StoreError& e) {
            response.reset();
            shared_.database_unavailable(response, e.what());
        } catch (const RejectedInput&) {
            response.reset();
            answer.problem(400, "bad-input", "the request holds a value the database refuses");
        } catch (const std::exception& e) {
            runtime::log::error("admin_request_failed", {{"error", e.what()}});
            response.reset();
            answer.problem(500, "internal", "the request failed; see the service log");
        }
    }

    Shared& shared_;
    Resource* resource_;  // null: no resource lives here (404)
    std::span<const Route> routes_;
    const Chain& chain_;
};

}  // namespace

struct AdminHandler::Parts {
    // A resource the registry built, with its entry.
    struct Served {
        const ResourceEntry* entry;
        std::unique_ptr<Resource> resource;
    };

    std::unique_ptr<AdminStore> store;
    std::unique_ptr<StatsStore> stats;
    FailureLimiter limiter;
    domain::SystemClock system_clock;
    AuthCache auth_cache;
    Shared shared;
    std::vector<Served> resources;

    Parts(std::unique_ptr<AdminStore> s, AdminOptions options, std::unique_ptr<StatsStore> st)
        : store(std::move(s)),
          stats(std::move(st)),
          limiter({options.max_failures_per_minute, options.max_tracked_addresses,
                   options.max_failures_per_second},
                  options.clock),
          auth_cache({.lifetime = options.auth_cache_lifetime,
                      .clock = options.wall_clock,
                      .monotonic = options.clock}),
          shared{.options = std::move(options), .auth_cache = &auth_cache} {
        auto authenticators = shared.options.authenticators;
        if (authenticators.empty())
            authenticators.push_back(std::make_shared<BearerAuthenticator>(*store, &auth_cache));
        ConsoleService* console = shared.options.console.get();
        if (console != nullptr)
            authenticators.push_back(std::make_shared<SessionAuthenticator>(
                *console, shared.options.console_web, &auth_cache));
        shared.chain.push_back(authenticate(std::move(authenticators), limiter));
        shared.chain.push_back(authorize());
        shared.chain.push_back(check_query());
        shared.chain.push_back(check_names());
        shared.chain.push_back(read_body());
        shared.chain.push_back(
            restrict_reach(*store, domain::public_base_host(shared.options.public_base_url)));
        shared.chain.push_back(read_preconditions());
        shared.open_chain.push_back(authorize());
        shared.open_chain.push_back(check_query());
        shared.open_chain.push_back(read_body());
        const domain::Clock& clock =
            shared.options.wall_clock ? *shared.options.wall_clock : system_clock;
        ResourceContext context{*store, stats.get(), clock, shared.options};
        for (const ResourceEntry& entry : resource_registry()) {
            if (auto resource = entry.make(context))
                resources.push_back({&entry, std::move(resource)});
        }
    }
};

AdminHandler::AdminHandler(std::unique_ptr<AdminStore> store, AdminOptions options,
                           std::unique_ptr<StatsStore> stats)
    : parts_(std::make_unique<Parts>(std::move(store), std::move(options), std::move(stats))) {
    // Each resource under its collection's path; anything else under /api/v1/ is 404.
    Shared& shared = parts_->shared;
    for (const auto& [entry, resource] : parts_->resources) {
        router_.prefix(std::string(entry->prefix),
                       std::make_shared<Endpoint>(shared, resource.get(), entry->routes(),
                                                  entry->open ? shared.open_chain : shared.chain));
    }
    router_.prefix("/api/v1/", std::make_shared<Endpoint>(shared, nullptr, std::span<const Route>{},
                                                          shared.chain));
}

AdminHandler::~AdminHandler() = default;

void AdminHandler::handle(const http::Request& request, http::Response& response) {
    router_.handle(request, response);
}

bool AdminHandler::blocking(const http::Request& request) const {
    return router_.blocking(request);
}

void AdminHandler::unavailable(const http::Request& request, http::Response& response) {
    router_.unavailable(request, response);
}

std::span<const Route> routes() {
    static const std::vector<Route> all = [] {
        std::vector<Route> list;
        for (const ResourceEntry& entry : resource_registry()) {
            auto table = entry.routes();
            list.insert(list.end(), table.begin(), table.end());
        }
        return list;
    }();
    return all;
}

}  // namespace refgate::admin
