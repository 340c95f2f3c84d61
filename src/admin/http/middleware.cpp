// The admin API's middleware chain: each step establishes one fact about a request or answers it.

#include <algorithm>
#include <charconv>

#include "api.hpp"
#include "refgate/admin/console_service.hpp"
#include "refgate/admin/tokens.hpp"
#include "refgate/codec/domains_json.hpp"
#include "refgate/domain/destination.hpp"
#include "refgate/domain/disclosure.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/placement.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/domain/utf8.hpp"

namespace refgate::admin {
namespace {

using http::Method;

void too_many_failures(Answer& answer, int wait, std::string_view detail) {
    answer.problem(429, "too-many-failures",
                   "too many failed authentications " + std::string(detail));
    answer.response().add_header("Retry-After", std::to_string(wait));
}

class Authenticate final : public Middleware {
  public:
    Authenticate(std::vector<std::shared_ptr<Authenticator>> authenticators,
                 FailureLimiter& limiter)
        : authenticators_(std::move(authenticators)), limiter_(limiter) {}

    bool apply(ApiRequest& request, Answer& answer) override {
        // A valid credential is accepted whatever failures came from its client: a token has 256
        // random bits and a session id as many, so the limit slows guessing only, and nobody can
        // lock another out by failing from the same address.
        bool refused = false;
        std::string detail = "the token is unknown or revoked";
        for (const auto& authenticator : authenticators_) {
            Authentication result = ask(*authenticator, request.http);
            if (result.kind == Authentication::Kind::accepted) {
                request.actor = std::move(result.actor);
                return true;
            }
            if (result.kind == Authentication::Kind::forged) {
                answer.titled_problem(403, "csrf", "CSRF check failed", result.detail);
                return false;
            }
            if (result.kind == Authentication::Kind::refused && !refused) {
                refused = true;
                if (!result.detail.empty()) detail = std::move(result.detail);
            }
        }
        std::string_view client(reinterpret_cast<const char*>(request.client.data()),
                                request.client.size());
        if (int wait = limiter_.retry_after(client); wait > 0) {
            too_many_failures(answer, wait, "from this address; try again later");
            return false;
        }
        // Over the ceiling of failures from all addresses, a failure is answered 429.
        if (int wait = limiter_.record_failure(client); wait > 0) {
            too_many_failures(answer, wait, "from all addresses; try again shortly");
            return false;
        }
        answer.problem(401, "unauthorized",
                       refused ? detail : "send Authorization: Bearer <token>");
        answer.response().add_header("WWW-Authenticate",
                                     refused ? "Bearer realm=\"refgate\", error=\"invalid_token\""
                                             : "Bearer realm=\"refgate\"");
        return false;
    }

  private:
    // Any failure to decide is the database's (503), never a pass.
    static Authentication ask(Authenticator& authenticator, const http::Request& request) {
        try {
            return authenticator.authenticate(request);
        } catch (const StoreError&) {
            throw;
        } catch (const std::exception& e) {
            throw StoreError(e.what());
        }
    }

    std::vector<std::shared_ptr<Authenticator>> authenticators_;
    FailureLimiter& limiter_;
};

class Authorize final : public Middleware {
  public:
    bool apply(ApiRequest& request, Answer& answer) override {
        std::string allow;
        for (const Route* r : request.matches) {
            allow += (allow.empty() ? "" : ", ") + std::string(r->method_name);
            if (r->method == request.http.method) request.route = r;
        }
        if (request.route == nullptr) {
            answer.problem(405, "method-not-allowed",
                           std::string(request.http.method_name) + " is not allowed here");
            answer.response().add_header("Allow", allow);
            return false;
        }
        Role need = request.route->min_role;
        if (request.actor.role < need) {
            answer.problem(403, "forbidden",
                           "this needs the " + std::string(to_string(need)) +
                               " role; the token has " +
                               std::string(to_string(request.actor.role)));
            return false;
        }
        // Issue 46: the route's scopes, within what the role allows, whatever the token says.
        Scopes need_scopes = route_access(request.route->operation).scopes;
        Scopes held = request.actor.scopes & role_scopes(request.actor.role);
        if ((held & need_scopes) != need_scopes) {
            std::string names;
            for (auto name : scope_names(need_scopes & ~held))
                names += (names.empty() ? "" : ", ") + std::string(name);
            answer.problem(403, "forbidden",
                           "this needs the scope " + names + ", which the token was not given");
            return false;
        }
        // A route over every partner and link at once is not for a token held to some.
        if (route_access(request.route->operation).extent == Extent::whole &&
            request.actor.reach.restricted()) {
            answer.problem(403, "forbidden",
                           "this route reaches every partner and link; the token is restricted "
                           "to some");
            return false;
        }
        return true;
    }
};

// A link's domain as the token's `domains` see it: its host, empty on the default domain.
std::string_view link_domain(const domain::Link& link) { return link.domain; }

class RestrictReach final : public Middleware {
  public:
    RestrictReach(AdminStore& store, std::string default_host)
        : store_(store), default_host_(std::move(default_host)) {}

    bool apply(ApiRequest& request, Answer& answer) override {
        request.default_host = default_host_;
        const Reach& reach = request.actor.reach;
        if (!reach.restricted()) return true;
        // Links without `domain` are on the stored default domain; the public base URL's host
        // stands for it only while no domain is defined.
        if (!reach.domains.empty()) {
            for (const auto& d : store_.list_domains().view.items) {
                if (d.domain.is_default) request.default_host = d.domain.host;
            }
        }
        switch (route_access(request.route->operation).extent) {
            case Extent::free:
            case Extent::partners:
            case Extent::links:
            case Extent::whole:  // refused by authorize()
                return true;
            case Extent::partner:
                if (partner_visible(request, request.name)) return true;
                // The same answer as a partner that does not exist: its existence does not leak.
                answer.problem(404, "not-found", "no partner '" + request.name + "'");
                return false;
            case Extent::new_partner:
                if (partner_visible(request, body_text(request, "slug"))) return true;
                answer.problem(403, "forbidden", "the token may not make partners beyond its own");
                return false;
            case Extent::new_link:
                return moves_inside(request, answer, {}, {});
            case Extent::link:
                break;
        }
        auto found = store_.get_link(link_name(request));
        if (found.kind != OutcomeKind::ok) return true;  // the resource answers
        const domain::Link& link = found.view.link;
        if (!link_visible(request, link)) {
            answer.problem(404, "not-found", "no link '" + link_name(request) + "'");
            return false;
        }
        if (request.route->operation != Operation::update_link) return true;
        return moves_inside(request, answer, link.partner, link_domain(link));
    }

  private:
    static std::string body_text(const ApiRequest& request, const char* key) {
        if (!request.body.is_object()) return {};
        auto it = request.body.find(key);
        return it != request.body.end() && it->is_string() ? it->get<std::string>() : "";
    }

    // A new link or a patch: the partner and domain it ends up with must be the token's. A field
    // the body leaves out keeps `partner` and `domain` (a new link's: none, the default domain).
    static bool moves_inside(const ApiRequest& request, Answer& answer, std::string partner,
                             std::string_view domain) {
        std::string body_partner = body_text(request, "partner");
        if (!body_partner.empty()) partner = body_partner;
        std::string body_domain = body_text(request, "domain");
        if (request.body.is_object() && request.body.contains("domain")) domain = body_domain;
        if (!partner.empty() && !partner_visible(request, partner)) {
            answer.problem(403, "forbidden",
                           "the token may not put a link on partner '" + partner + "'");
            return false;
        }
        if (!link_domain_allowed(request.actor.reach, domain, request.default_host)) {
            answer.problem(403, "forbidden", "the token may not put a link on that domain");
            return false;
        }
        return true;
    }

    AdminStore& store_;
    std::string default_host_;
};

class CheckNames final : public Middleware {
  public:
    // The routes of one link that ?domain=HOST places on a domain (issue 46).
    static bool names_link(Operation op) {
        return op == Operation::get_link || op == Operation::update_link ||
               op == Operation::delete_link || op == Operation::share_link ||
               op == Operation::qr_svg || op == Operation::qr_png || op == Operation::stats_link ||
               op == Operation::link_placements;
    }

    bool apply(ApiRequest& request, Answer& answer) override {
        Operation op = request.route->operation;
        const std::string& name = request.name;
        bool valid = op == Operation::revoke_token ? valid_token_name(name)
                     : op == Operation::get_user || op == Operation::update_user
                         ? valid_user_name(name)
                     : op == Operation::get_placement ? domain::valid_placement_token(name)
                     : op == Operation::get_domain || op == Operation::put_domain ||
                             op == Operation::delete_domain
                         ? domain::canonical_domain(name) == name
                         : domain::valid_slug(name);
        if (!name.empty() && !valid) {
            answer.problem(404, "not-found", "no such resource");
            return false;
        }
        if (names_link(op)) {
            request.link = name;
            if (auto domain = domain::query_value(request.http.query(), "domain")) {
                std::string host = codec::canonical_domain_host(*domain);
                if (host.empty()) {
                    answer.problem(404, "not-found", "no domain '" + *domain + "'");
                    return false;
                }
                request.link = host + "/" + name;
            }
        }
        if (!request.locale.empty()) {
            auto normalized = domain::normalize_locale(request.locale);
            if (!normalized) {
                answer.problem(404, "not-found",
                               "no such resource (the locale is not a language tag)");
                return false;
            }
            request.locale = std::move(*normalized);
        }
        return true;
    }
};

// Every parameter's name and value, decoded, must be UTF-8 without control characters: PostgreSQL
// refuses anything else in text, and that is the client's mistake, not the database's outage.
class CheckQuery final : public Middleware {
  public:
    bool apply(ApiRequest& request, Answer& answer) override {
        std::string_view query = request.http.query();
        while (!query.empty()) {
            std::string_view pair = query.substr(0, query.find('&'));
            query.remove_prefix(std::min(query.size(), pair.size() + 1));
            std::string_view raw_name = pair.substr(0, pair.find('='));
            std::string name = domain::percent_decode(raw_name);
            std::string value = raw_name.size() < pair.size()
                                    ? domain::percent_decode(pair.substr(raw_name.size() + 1))
                                    : "";
            bool name_ok = acceptable(name);
            if (name_ok && acceptable(value)) continue;
            answer.problem(400, "bad-query",
                           name_ok ? "the query parameter '" + name +
                                         "' must be UTF-8 text without control characters"
                                   : "a query parameter's name must be UTF-8 text without "
                                     "control characters");
            return false;
        }
        return true;
    }

  private:
    static bool acceptable(std::string_view text) {
        for (unsigned char c : text) {
            if (c < 0x20 || c == 0x7f) return false;
        }
        return domain::valid_utf8(text);
    }
};

class ReadBody final : public Middleware {
  public:
    bool apply(ApiRequest& request, Answer& answer) override {
        Method method = request.http.method;
        if (method != Method::post && method != Method::patch && method != Method::put) return true;
        // The import takes CSV as well as JSON, and reads it itself.
        if (request.route->operation == Operation::import_document) return true;
        // So do the commissions' import (CSV, or a JSON array), and the secret takes nothing.
        if (request.route->operation == Operation::import_commissions ||
            request.route->operation == Operation::rotate_postback_secret)
            return true;
        // A webhook's new secret and "send again" take nothing either.
        if (request.route->operation == Operation::rotate_webhook_secret ||
            request.route->operation == Operation::retry_webhook_delivery)
            return true;
        // An action without parameters: an empty body is fine.
        if (request.route->operation == Operation::check_link_health && request.http.body.empty())
            return true;
        auto type = media_type(request.http.header("Content-Type"));
        bool json =
            http::iequals(type, "application/json") ||
            (method == Method::patch && http::iequals(type, "application/merge-patch+json"));
        if (!json) {
            answer.problem(415, "unsupported-media-type",
                           method == Method::patch
                               ? "send application/json or application/merge-patch+json"
                               : "send application/json");
            return false;
        }
        request.body = nlohmann::ordered_json::parse(request.http.body, nullptr, false);
        if (request.body.is_discarded()) {
            answer.problem(400, "bad-json", "the request body is not valid JSON");
            return false;
        }
        if (!request.body.is_object()) {
            answer.problem(422, "validation", "the request body must be a JSON object",
                           {{"", "must be a JSON object"}});
            return false;
        }
        return true;
    }
};

// "42" -> 42; "*" -> any; nullopt when it names no version we issue.
std::optional<Precondition> parse_if_match(std::string_view value) {
    if (value == "*") return Precondition{.any = true};
    if (value.size() < 3 || value.front() != '"' || value.back() != '"') return std::nullopt;
    std::int64_t version = 0;
    auto digits = value.substr(1, value.size() - 2);
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), version);
    if (ec != std::errc{} || ptr != digits.data() + digits.size() || version <= 0)
        return std::nullopt;
    return Precondition{.version = version};
}

class ReadPreconditions final : public Middleware {
  public:
    bool apply(ApiRequest& request, Answer& answer) override {
        const http::Request& http = request.http;
        if (http.method == Method::patch || http.method == Method::del) {
            if (!http.has_header("If-Match")) {
                answer.problem(428, "precondition-required",
                               "send If-Match with the ETag of the object you read");
                return false;
            }
            auto parsed = parse_if_match(http.header("If-Match"));
            if (!parsed) return stale(answer, "If-Match does not match the ETag");
            request.if_match = *parsed;
        }
        if (http.method != Method::put) return true;
        if (http.has_header("If-Match")) {
            auto parsed = parse_if_match(http.header("If-Match"));
            if (!parsed) return stale(answer, "If-Match does not match the ETag");
            request.put.if_match = *parsed;
        }
        if (http.has_header("If-None-Match")) {
            if (http.header("If-None-Match") != "*")
                return stale(answer, "only If-None-Match: * is supported here");
            request.put.if_none_match_any = true;
        }
        return true;
    }

  private:
    static bool stale(Answer& answer, std::string_view detail) {
        answer.problem(412, "stale", detail);
        return false;
    }
};

}  // namespace

std::unique_ptr<Middleware> authenticate(std::vector<std::shared_ptr<Authenticator>> authenticators,
                                         FailureLimiter& limiter) {
    return std::make_unique<Authenticate>(std::move(authenticators), limiter);
}
std::unique_ptr<Middleware> authorize() { return std::make_unique<Authorize>(); }
std::unique_ptr<Middleware> restrict_reach(AdminStore& store, std::string default_host) {
    return std::make_unique<RestrictReach>(store, std::move(default_host));
}

bool link_visible(const ApiRequest& request, const domain::Link& link) {
    const Reach& reach = request.actor.reach;
    return reach.partner_allowed(link.partner) &&
           link_domain_allowed(reach, link_domain(link), request.default_host);
}

bool partner_visible(const ApiRequest& request, std::string_view slug) {
    return request.actor.reach.partner_allowed(slug);
}
std::unique_ptr<Middleware> check_names() { return std::make_unique<CheckNames>(); }
std::unique_ptr<Middleware> check_query() { return std::make_unique<CheckQuery>(); }
std::unique_ptr<Middleware> read_body() { return std::make_unique<ReadBody>(); }
std::unique_ptr<Middleware> read_preconditions() { return std::make_unique<ReadPreconditions>(); }

std::string_view media_type(std::string_view content_type) {
    auto type = content_type.substr(0, content_type.find(';'));
    while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
    return type;
}

std::optional<std::size_t> limit_parameter(std::string_view query, std::size_t fallback,
                                           std::size_t max) {
    auto text = domain::query_value(query, "limit");
    if (!text) return fallback;
    std::size_t n = 0;
    auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (ec != std::errc{} || ptr != text->data() + text->size() || n < 1 || n > max)
        return std::nullopt;
    return n;
}

}  // namespace refgate::admin
