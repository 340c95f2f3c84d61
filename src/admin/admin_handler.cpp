#include "refgate/admin/admin_handler.hpp"

#include <array>
#include <charconv>
#include <string>

#include "cors.hpp"
#include "refgate/admin/bearer.hpp"
#include "refgate/admin/tokens.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/disclosure.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/runtime/log.hpp"
#include "stats_api.hpp"

namespace refgate::admin {
namespace {

using http::Method;
using Json = nlohmann::ordered_json;

constexpr std::size_t kMaxPageSize = 200;
constexpr std::size_t kDefaultPageSize = 50;
constexpr std::size_t kMaxAuditPage = 500;

constexpr std::array kRoutes{
    Route{Method::get, "GET", "/api/v1/partners", Role::viewer, Operation::list_partners},
    Route{Method::post, "POST", "/api/v1/partners", Role::editor, Operation::create_partner},
    Route{Method::get, "GET", "/api/v1/partners/{slug}", Role::viewer, Operation::get_partner},
    Route{Method::patch, "PATCH", "/api/v1/partners/{slug}", Role::editor,
          Operation::update_partner},
    Route{Method::del, "DELETE", "/api/v1/partners/{slug}", Role::editor,
          Operation::delete_partner},
    Route{Method::get, "GET", "/api/v1/partners/{slug}/codes", Role::viewer,
          Operation::partner_codes},
    Route{Method::get, "GET", "/api/v1/links", Role::viewer, Operation::list_links},
    Route{Method::post, "POST", "/api/v1/links", Role::editor, Operation::create_link},
    Route{Method::get, "GET", "/api/v1/links/{slug}", Role::viewer, Operation::get_link},
    Route{Method::patch, "PATCH", "/api/v1/links/{slug}", Role::editor, Operation::update_link},
    Route{Method::del, "DELETE", "/api/v1/links/{slug}", Role::editor, Operation::delete_link},
    Route{Method::get, "GET", "/api/v1/audit", Role::admin, Operation::audit},
    Route{Method::get, "GET", "/api/v1/tokens", Role::admin, Operation::list_tokens},
    Route{Method::post, "POST", "/api/v1/tokens", Role::admin, Operation::create_token},
    Route{Method::del, "DELETE", "/api/v1/tokens/{name}", Role::admin, Operation::revoke_token},
    Route{Method::get, "GET", "/api/v1/disclosures", Role::viewer, Operation::list_disclosures},
    Route{Method::get, "GET", "/api/v1/disclosures/{key}/{locale}", Role::viewer,
          Operation::get_disclosure},
    Route{Method::put, "PUT", "/api/v1/disclosures/{key}/{locale}", Role::editor,
          Operation::put_disclosure},
    Route{Method::get, "GET", "/api/v1/stats/links/{slug}", Role::viewer, Operation::stats_link},
    Route{Method::get, "GET", "/api/v1/stats/partners/{slug}", Role::viewer,
          Operation::stats_partner},
    Route{Method::get, "GET", "/api/v1/stats/top", Role::viewer, Operation::stats_top},
};

// Matches a path against a pattern: a "{locale}" segment matches one non-empty segment into
// `locale`, any other "{...}" segment (slug, key, name) one into `slug`.
bool matches(std::string_view pattern, std::string_view path, std::string& slug,
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
            slug = std::string(q.substr(1));
        } else if (p != q) {
            return false;
        }
        pattern = ps == std::string_view::npos ? std::string_view{} : pattern.substr(ps);
        path = qs == std::string_view::npos ? std::string_view{} : path.substr(qs);
    }
    return true;
}

// The methods of every route at `path` ("GET, POST"); empty when no route has that path.
std::string path_methods(std::string_view path) {
    std::string methods;
    for (const auto& r : kRoutes) {
        std::string s;
        std::string l;
        if (!matches(r.pattern, path, s, l)) continue;
        methods += (methods.empty() ? "" : ", ") + std::string(r.method_name);
    }
    return methods;
}

std::string_view without_trailing_slash(std::string_view path) {
    if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    return path;
}

// A weak validator for answers that are not one versioned object.
// "\"<version>\"". Built by appending: g++ 12 -O3 warns (-Wrestrict) on "lit" + std::string&&.
std::string version_etag(std::int64_t version) {
    std::string tag = "\"";
    tag.append(std::to_string(version));
    tag.push_back('"');
    return tag;
}

std::string body_etag(const std::string& body) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : body) h = (h ^ c) * 1099511628211ull;
    char digits[17];
    auto end = std::to_chars(digits, digits + sizeof digits, h, 16).ptr;
    return "W/\"" + std::string(digits, end) + "\"";
}

struct Answer {
    http::Response& response;

    void json(int status, const Json& body, std::int64_t version = 0) {
        response.set_status(status);
        response.add_header("Content-Type", "application/json");
        response.add_header("Cache-Control", "no-store");
        response.body() = body.dump();
        response.add_header("ETag",
                            version > 0 ? version_etag(version) : body_etag(response.body()));
    }

    // RFC 9457 problem details.
    void problem(int status, std::string_view type, std::string_view detail,
                 const std::vector<FieldError>& errors = {}) {
        Json body{{"type", "urn:refgate:problem:" + std::string(type)},
                  {"title", std::string(http::reason_phrase(status))},
                  {"status", status},
                  {"detail", std::string(detail)}};
        if (status == 422) {
            Json list = Json::array();
            for (const auto& e : errors) {
                Json item{{"field", e.field}, {"message", e.message}};
                // A destination rule is named at the end of its message: "... [not_https]".
                auto open = e.message.rfind(" [");
                if (open != std::string::npos && e.message.ends_with("]"))
                    item["rule"] = e.message.substr(open + 2, e.message.size() - open - 3);
                list.push_back(std::move(item));
            }
            body["errors"] = std::move(list);
        }
        response.set_status(status);
        response.add_header("Content-Type", "application/problem+json");
        response.add_header("Cache-Control", "no-store");
        response.body() = body.dump();
        response.add_header("ETag", body_etag(response.body()));
    }
};

std::string_view media_type(std::string_view content_type) {
    auto semi = content_type.find(';');
    auto type = content_type.substr(0, semi);
    while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
    return type;
}

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

// The URL of the resource a 201 created (RFC 9110 section 15.3.2). Slugs, token names, keys and
// normalised locales are checked before they get here, so they need no percent-encoding.
std::string created_location(Operation operation, const Json& body, const std::string& key,
                             const std::string& locale) {
    auto member = [&](std::string_view collection, const char* field) {
        auto it = body.find(field);
        if (it == body.end() || !it->is_string()) return std::string();
        return std::string(collection) + it->get<std::string>();
    };
    switch (operation) {
        case Operation::create_partner:
            return member("/api/v1/partners/", "slug");
        case Operation::create_link:
            return member("/api/v1/links/", "slug");
        case Operation::create_token:
            return member("/api/v1/tokens/", "name");
        case Operation::put_disclosure:
            return "/api/v1/disclosures/" + key + "/" + locale;
        default:
            return {};
    }
}

void answer_outcome(Answer& answer, const Outcome& o, std::string_view location = {}) {
    switch (o.kind) {
        case OutcomeKind::ok:
            answer.json(200, o.body, o.version);
            return;
        case OutcomeKind::created:
            answer.json(201, o.body, o.version);
            if (!location.empty()) answer.response.add_header("Location", location);
            return;
        case OutcomeKind::deleted:
            answer.response.set_status(204);
            answer.response.add_header("ETag", version_etag(o.version));
            return;
        case OutcomeKind::not_found:
            answer.problem(404, "not-found", o.detail);
            return;
        case OutcomeKind::conflict:
            answer.problem(409, "conflict", o.detail);
            return;
        case OutcomeKind::stale:
            answer.problem(412, "stale", o.detail + " (If-Match does not match the ETag)");
            return;
        case OutcomeKind::invalid:
            answer.problem(422, "validation", "the request body breaks the rules in 'errors'",
                           o.errors);
            return;
        case OutcomeKind::precondition_required:
            answer.problem(428, "precondition-required", o.detail);
            return;
    }
}

void too_many_failures(Answer& answer, int wait, std::string_view detail) {
    answer.problem(429, "too-many-failures",
                   "too many failed authentications " + std::string(detail));
    answer.response.add_header("Retry-After", std::to_string(wait));
}

}  // namespace

std::span<const Route> routes() { return kRoutes; }

AdminHandler::AdminHandler(std::unique_ptr<AdminStore> store, AdminOptions options,
                           std::unique_ptr<StatsStore> stats)
    : store_(std::move(store)),
      stats_(std::move(stats)),
      options_(std::move(options)),
      limiter_({options_.max_failures_per_minute, options_.max_tracked_addresses,
                options_.max_failures_per_second},
               options_.clock) {}

void AdminHandler::unavailable(const http::Request&, http::Response& response) {
    Answer{response}.problem(503, "unavailable", "the service is busy; try again");
    response.add_header("Retry-After", "1");
}

void AdminHandler::database_unavailable(http::Response& response, const char* error) {
    std::uint64_t count = 0;
    if (options_.unavailable != nullptr)
        count = options_.unavailable->fetch_add(1, std::memory_order_relaxed) + 1;
    if (failure_log_.allow()) {
        log::warn("admin_store_failed", {{"error", error}, {"unavailable_total", count}});
    }
    Answer{response}.problem(503, "unavailable", "the database is unreachable; try again");
    response.add_header("Retry-After", "1");
}

void AdminHandler::handle(const http::Request& request, http::Response& response) {
    std::string_view origin = allowed_origin(request, options_.cors_origins);
    bool vary = !options_.cors_origins.empty();
    // A preflight carries no credentials: it is answered before authentication.
    if (request.method == Method::options) {
        auto methods = path_methods(without_trailing_slash(request.path()));
        if (!methods.empty()) {
            answer_preflight(methods, origin, vary, response);
            return;
        }
    }
    serve(request, response);
    add_cors_headers(origin, vary, response);
}

void AdminHandler::serve(const http::Request& request, http::Response& response) {
    Answer answer{response};
    std::string_view path = without_trailing_slash(request.path());

    const Route* route = nullptr;
    bool path_known = false;
    std::string slug;
    std::string locale;
    std::string allow;
    for (const auto& r : kRoutes) {
        std::string s;
        std::string l;
        if (!matches(r.pattern, path, s, l)) continue;
        path_known = true;
        allow += (allow.empty() ? "" : ", ") + std::string(r.method_name);
        if (r.method == request.method) {
            route = &r;
            slug = std::move(s);
            locale = std::move(l);
        }
    }
    if (!path_known) {
        answer.problem(404, "not-found", "no such resource");
        return;
    }

    // Authentication comes before anything else is revealed, even the allowed methods.
    if (int wait = limiter_.retry_after(request.peer); wait > 0)
        return too_many_failures(answer, wait, "from this address; try again later");
    std::string_view authorization = request.header("Authorization");
    std::optional<Actor> actor;
    try {
        actor = bearer_actor(*store_, authorization);
    } catch (const std::exception& e) {
        database_unavailable(response, e.what());
        return;
    }
    if (!actor) {
        // Over the ceiling of failures from all addresses, a failure is answered 429.
        if (int wait = limiter_.record_failure(request.peer); wait > 0)
            return too_many_failures(answer, wait, "from all addresses; try again shortly");
        answer.problem(401, "unauthorized",
                       authorization.empty() ? "send Authorization: Bearer <token>"
                                             : "the token is unknown or revoked");
        response.add_header("WWW-Authenticate", authorization.empty() ? "Bearer realm=\"refgate\""
                                                                      : "Bearer realm=\"refgate\", "
                                                                        "error=\"invalid_token\"");
        return;
    }
    if (route == nullptr) {
        answer.problem(405, "method-not-allowed",
                       std::string(request.method_name) + " is not allowed here");
        response.add_header("Allow", allow);
        return;
    }
    if (actor->role < route->min_role) {
        answer.problem(403, "forbidden",
                       "this needs the " + std::string(to_string(route->min_role)) +
                           " role; the token has " + std::string(to_string(actor->role)));
        return;
    }
    bool names_token = route->operation == Operation::revoke_token;
    if (!slug.empty() && !(names_token ? valid_token_name(slug) : valid_slug(slug))) {
        answer.problem(404, "not-found", "no such resource");
        return;
    }
    if (!locale.empty()) {
        auto normalized = normalize_locale(locale);
        if (!normalized) {
            answer.problem(404, "not-found", "no such resource (the locale is not a language tag)");
            return;
        }
        locale = std::move(*normalized);
    }

    // Bodies: JSON objects only.
    Json body;
    if (request.method == Method::post || request.method == Method::patch ||
        request.method == Method::put) {
        auto type = media_type(request.header("Content-Type"));
        bool json = http::iequals(type, "application/json") ||
                    (request.method == Method::patch &&
                     http::iequals(type, "application/merge-patch+json"));
        if (!json) {
            answer.problem(415, "unsupported-media-type",
                           request.method == Method::patch
                               ? "send application/json or application/merge-patch+json"
                               : "send application/json");
            return;
        }
        body = Json::parse(request.body, nullptr, false);
        if (body.is_discarded()) {
            answer.problem(400, "bad-json", "the request body is not valid JSON");
            return;
        }
        if (!body.is_object()) {
            answer.problem(422, "validation", "the request body must be a JSON object",
                           {{"", "must be a JSON object"}});
            return;
        }
    }
    Precondition precondition;
    if (request.method == Method::patch || request.method == Method::del) {
        if (!request.has_header("If-Match")) {
            answer.problem(428, "precondition-required",
                           "send If-Match with the ETag of the object you read");
            return;
        }
        auto parsed = parse_if_match(request.header("If-Match"));
        if (!parsed) {
            answer.problem(412, "stale", "If-Match does not match the ETag");
            return;
        }
        precondition = *parsed;
    }
    PutPrecondition put_precondition;
    if (request.method == Method::put) {
        if (request.has_header("If-Match")) {
            auto parsed = parse_if_match(request.header("If-Match"));
            if (!parsed) {
                answer.problem(412, "stale", "If-Match does not match the ETag");
                return;
            }
            put_precondition.if_match = *parsed;
        }
        if (request.has_header("If-None-Match")) {
            if (request.header("If-None-Match") != "*") {
                answer.problem(412, "stale", "only If-None-Match: * is supported here");
                return;
            }
            put_precondition.if_none_match_any = true;
        }
    }

    auto limit = [&](std::size_t fallback, std::size_t max) -> std::optional<std::size_t> {
        auto text = query_value(request.query(), "limit");
        if (!text) return fallback;
        std::size_t n = 0;
        auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
        if (ec != std::errc{} || ptr != text->data() + text->size() || n < 1 || n > max)
            return std::nullopt;
        return n;
    };

    auto respond = [&](const Outcome& o) {
        answer_outcome(answer, o,
                       o.kind == OutcomeKind::created
                           ? created_location(route->operation, o.body, slug, locale)
                           : std::string());
    };
    try {
        switch (route->operation) {
            case Operation::list_partners:
                respond(store_->list_partners());
                return;
            case Operation::create_partner:
                respond(store_->create_partner(*actor, body));
                return;
            case Operation::get_partner:
                respond(store_->get_partner(slug));
                return;
            case Operation::update_partner:
                respond(store_->update_partner(*actor, slug, precondition, body));
                return;
            case Operation::delete_partner:
                respond(store_->delete_partner(*actor, slug, precondition));
                return;
            case Operation::partner_codes:
                respond(store_->partner_codes(slug));
                return;
            case Operation::list_links: {
                LinkFilter filter;
                filter.partner = query_value(request.query(), "partner").value_or("");
                filter.status = query_value(request.query(), "status").value_or("");
                filter.cursor = query_value(request.query(), "cursor").value_or("");
                std::vector<FieldError> errors;
                if (!filter.status.empty() && !parse_link_status(filter.status))
                    errors.push_back({"status", "must be active or disabled"});
                if (!filter.partner.empty() && !valid_slug(filter.partner))
                    errors.push_back({"partner", "is not a valid partner slug"});
                if (!filter.cursor.empty() && !valid_slug(filter.cursor))
                    errors.push_back({"cursor", "is not a cursor this API returned"});
                auto n = limit(kDefaultPageSize, kMaxPageSize);
                if (!n) errors.push_back({"limit", "must be an integer from 1 to 200"});
                if (!errors.empty()) {
                    answer.problem(422, "validation", "the query breaks the rules in 'errors'",
                                   errors);
                    return;
                }
                filter.limit = *n;
                respond(store_->list_links(filter));
                return;
            }
            case Operation::create_link:
                respond(store_->create_link(*actor, body));
                return;
            case Operation::get_link:
                respond(store_->get_link(slug));
                return;
            case Operation::update_link:
                respond(store_->update_link(*actor, slug, precondition, body));
                return;
            case Operation::delete_link:
                respond(store_->delete_link(*actor, slug, precondition));
                return;
            case Operation::audit: {
                AuditFilter filter;
                filter.entity = query_value(request.query(), "entity").value_or("");
                filter.slug = query_value(request.query(), "slug").value_or("");
                auto n = limit(100, kMaxAuditPage);
                if (!n) {
                    answer.problem(422, "validation", "the query breaks the rules in 'errors'",
                                   {{"limit", "must be an integer from 1 to 500"}});
                    return;
                }
                filter.limit = *n;
                respond(store_->audit(filter));
                return;
            }
            case Operation::list_tokens:
                respond(store_->list_tokens());
                return;
            case Operation::create_token:
                respond(store_->create_token(*actor, body));
                return;
            case Operation::revoke_token:
                respond(store_->revoke_token(*actor, slug, precondition));
                return;
            case Operation::list_disclosures:
                respond(store_->list_disclosures());
                return;
            case Operation::get_disclosure:
                respond(store_->get_disclosure(slug, locale));
                return;
            case Operation::put_disclosure:
                respond(store_->put_disclosure(*actor, slug, locale, put_precondition, body));
                return;
            case Operation::stats_link:
            case Operation::stats_partner:
            case Operation::stats_top: {
                if (!stats_) throw StoreError("no stats store");
                StatsQuery query{
                    query_value(request.query(), "from"), query_value(request.query(), "to"),
                    query_value(request.query(), "limit"), wants_csv(request.header("Accept"))};
                auto today = utc_day(std::chrono::duration_cast<std::chrono::seconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count());
                auto stats = answer_stats(*stats_, route->operation, slug, query, today);
                if (stats.status == 422) {
                    answer.problem(422, "validation", "the query breaks the rules in 'errors'",
                                   stats.errors);
                } else if (stats.status == 404) {
                    answer.problem(404, "not-found", stats.detail);
                } else if (stats.is_csv) {
                    response.set_status(200);
                    response.add_header("Content-Type", "text/csv; charset=utf-8; header=present");
                    response.add_header("Cache-Control", "no-store");
                    response.body() = std::move(stats.csv);
                } else {
                    answer.json(200, stats.json);
                }
                return;
            }
        }
    } catch (const StoreError& e) {
        response.reset();
        database_unavailable(response, e.what());
    } catch (const std::exception& e) {
        log::error("admin_request_failed", {{"error", e.what()}});
        response.reset();
        answer.problem(500, "internal", "the request failed; see the service log");
    }
}

}  // namespace refgate::admin
