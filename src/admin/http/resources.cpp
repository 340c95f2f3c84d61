// The admin API's resource handlers: each turns a typed request into a service call and the
// service's decision into an answer.

#include <array>
#include <charconv>
#include <utility>

#include "api.hpp"
#include "refgate/admin/link_health_service.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/link_health.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/domain/time.hpp"

namespace refgate::admin {
namespace {

using http::Method;
using Json = nlohmann::ordered_json;

constexpr std::size_t kMaxPageSize = 200;
constexpr std::size_t kDefaultPageSize = 50;
constexpr std::size_t kDefaultAuditPage = 100;
constexpr std::size_t kMaxAuditPage = 500;
constexpr std::size_t kMaxSearchText = 200;
constexpr int kMaxExpiringDays = 3650;

// The URL of the resource a 201 created (RFC 9110 section 15.3.2), from its slug. Slugs and token
// names are checked before they are stored, so they need no percent-encoding.
template <typename View>
std::string created_at(std::string_view collection, const Result<View>& r,
                       const std::string& slug) {
    if (r.kind != OutcomeKind::created) return {};
    return std::string(collection) + slug;
}

// A whole number from min to max, or nullopt.
std::optional<int> whole_number(std::string_view text, int min, int max) {
    int n = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || ptr != text.data() + text.size() || n < min || n > max)
        return std::nullopt;
    return n;
}

// An RFC 3339 query parameter as microseconds since the epoch, when given.
void read_time(std::string_view query, const char* name, std::optional<std::int64_t>& out,
               std::vector<codec::FieldError>& errors) {
    auto text = domain::query_value(query, name);
    if (!text) return;
    if (auto at = domain::parse_rfc3339(*text)) {
        out = std::int64_t{at->time_since_epoch().count()} * 1'000'000;
    } else {
        errors.push_back({name, "must be an RFC 3339 time such as 2026-12-01T00:00:00Z"});
    }
}

constexpr std::array kPartnerRoutes{
    Route{Method::get, "GET", "/api/v1/partners", Role::viewer, Operation::list_partners},
    Route{Method::post, "POST", "/api/v1/partners", Role::editor, Operation::create_partner},
    Route{Method::get, "GET", "/api/v1/partners/{slug}", Role::viewer, Operation::get_partner},
    Route{Method::patch, "PATCH", "/api/v1/partners/{slug}", Role::editor,
          Operation::update_partner},
    Route{Method::del, "DELETE", "/api/v1/partners/{slug}", Role::editor,
          Operation::delete_partner},
    Route{Method::get, "GET", "/api/v1/partners/{slug}/codes", Role::viewer,
          Operation::partner_codes},
    Route{Method::post, "POST", "/api/v1/partners/{slug}/commissions", Role::editor,
          Operation::import_commissions},
    Route{Method::post, "POST", "/api/v1/partners/{slug}/postback-secret", Role::admin,
          Operation::rotate_postback_secret},
};

class Partners final : public Resource {
  public:
    Partners(AdminStore& store, CommissionStore* commissions)
        : store_(store), commissions_(commissions) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        switch (r.route->operation) {
            case Operation::list_partners: {
                auto q = domain::query_value(r.http.query(), "q").value_or("");
                if (q.size() > kMaxSearchText)
                    return answer.invalid_query({{"q", "must be at most 200 bytes"}});
                auto found = store_.list_partners(q);
                // A restricted token's list holds its partners only (issue 46).
                std::erase_if(found.view.items, [&](const codec::PartnerView& p) {
                    return !partner_visible(r, p.partner.slug);
                });
                return answer.outcome(found);
            }
            case Operation::create_partner: {
                auto o = store_.create_partner(r.actor, codec::parse_new_partner(r.body));
                return answer.outcome(o, created_at("/api/v1/partners/", o, o.view.partner.slug));
            }
            case Operation::get_partner:
                return answer.outcome(store_.get_partner(r.name));
            case Operation::update_partner:
                return answer.outcome(store_.update_partner(r.actor, r.name, r.if_match,
                                                            codec::parse_partner_patch(r.body)));
            case Operation::delete_partner:
                return answer.outcome(store_.delete_partner(r.actor, r.name, r.if_match));
            case Operation::import_commissions:
            case Operation::rotate_postback_secret:
                if (commissions_ == nullptr) throw StoreError("no commission store");
                return serve_commissions(*commissions_, r, answer);
            default:
                return answer.outcome(store_.partner_codes(r.name));
        }
    }

  private:
    AdminStore& store_;
    CommissionStore* commissions_;
};

constexpr std::array kLinkRoutes{
    Route{Method::get, "GET", "/api/v1/links", Role::viewer, Operation::list_links},
    Route{Method::post, "POST", "/api/v1/links", Role::editor, Operation::create_link},
    Route{Method::get, "GET", "/api/v1/links/{slug}", Role::viewer, Operation::get_link},
    Route{Method::patch, "PATCH", "/api/v1/links/{slug}", Role::editor, Operation::update_link},
    Route{Method::del, "DELETE", "/api/v1/links/{slug}", Role::editor, Operation::delete_link},
    Route{Method::get, "GET", "/api/v1/links/{slug}/share", Role::viewer, Operation::share_link},
    Route{Method::get, "GET", "/api/v1/links/{slug}/qr.svg", Role::viewer, Operation::qr_svg},
    Route{Method::get, "GET", "/api/v1/links/{slug}/qr.png", Role::viewer, Operation::qr_png},
    Route{Method::post, "POST", "/api/v1/links/preview", Role::viewer, Operation::preview_link},
    Route{Method::get, "GET", "/api/v1/links/{slug}/health", Role::viewer, Operation::link_health},
    Route{Method::post, "POST", "/api/v1/links/{slug}/health/check", Role::editor,
          Operation::check_link_health},
    Route{Method::get, "GET", "/api/v1/links/{slug}/placements", Role::viewer,
          Operation::link_placements},
};

class Links final : public Resource {
  public:
    Links(AdminStore& store, LinkHealthService* health, StatsStore* stats,
          const domain::Clock& clock)
        : store_(store), health_(health), stats_(stats), clock_(clock) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        switch (r.route->operation) {
            case Operation::list_links:
                return list(r, answer);
            case Operation::create_link: {
                auto o = store_.create_link(r.actor, codec::parse_new_link(r.body));
                return answer.outcome(o, created_at("/api/v1/links/", o, o.view.link.slug));
            }
            case Operation::get_link:
                return get(r, answer);
            case Operation::update_link:
                return answer.outcome(store_.update_link(r.actor, link_name(r), r.if_match,
                                                         codec::parse_link_patch(r.body)));
            case Operation::preview_link:
                return answer.outcome(store_.preview_link(codec::parse_link_preview(r.body)));
            case Operation::share_link:
                return share(r, answer);
            case Operation::qr_svg:
            case Operation::qr_png:
                return serve_qr(store_, r, answer);
            case Operation::link_health:
            case Operation::check_link_health:
                return serve_health(r, answer);
            case Operation::link_placements:
                return serve_placements(store_, stats_, clock_, r, answer);
            default:
                return answer.outcome(store_.delete_link(r.actor, link_name(r), r.if_match));
        }
    }

  private:
    // A capped link (issue 44) also shows the fleet's human clicks so far, counted as the cap
    // worker counts them, and whether they reached the cap (null when they cannot be read now).
    void get(const ApiRequest& r, Answer& answer) {
        auto result = store_.get_link(link_name(r));
        const domain::Link& link = result.view.link;
        if (result.kind != OutcomeKind::ok || !link.max_human_clicks || stats_ == nullptr)
            return answer.outcome(result);
        Outcome shown{
            .kind = result.kind, .body = view_json(result.view), .version = result.version};
        try {
            auto totals = stats_->human_totals({link.id});
            auto found = totals.find(link.id);
            std::uint64_t so_far = found == totals.end() ? 0 : found->second;
            shown.body["human_clicks_so_far"] = so_far;
            shown.body["capped"] = so_far >= static_cast<std::uint64_t>(*link.max_human_clicks);
        } catch (const StoreError&) {
            shown.body["human_clicks_so_far"] = nullptr;
            shown.body["capped"] = nullptr;
        }
        answer.outcome(shown);
    }

    void share(const ApiRequest& r, Answer& answer) {
        auto src = domain::query_value(r.http.query(), "src");
        if (src && !domain::counted_channel(*src))
            return answer.invalid_query({{"src", std::string(domain::kCountedChannelRule)}});
        answer.outcome(store_.share_link(link_name(r), src.value_or("")));
    }

    void serve_health(const ApiRequest& r, Answer& answer) {
        if (health_ == nullptr) return answer.problem(404, "not-found", "link health is off");
        auto found = r.route->operation == Operation::link_health ? health_->health(r.name)
                                                                  : health_->check(r.name);
        if (!found) return answer.problem(404, "not-found", "no active link named " + r.name);
        answer.json(200, nlohmann::ordered_json(*found));
    }

    void list(const ApiRequest& r, Answer& answer) {
        auto query = r.http.query();
        LinkFilter filter;
        filter.partner = domain::query_value(query, "partner").value_or("");
        filter.status = domain::query_value(query, "status").value_or("");
        filter.cursor = domain::query_value(query, "cursor").value_or("");
        filter.query = domain::query_value(query, "q").value_or("");
        filter.health = domain::query_value(query, "health").value_or("");
        std::vector<codec::FieldError> errors;
        if (!filter.health.empty() && !domain::parse_finding(filter.health))
            errors.push_back({"health", "must be a link health state such as code_dropped"});
        if (filter.query.size() > kMaxSearchText)
            errors.push_back({"q", "must be at most 200 bytes"});
        if (auto days = domain::query_value(query, "expiring_within_days")) {
            filter.expiring_within_days = whole_number(*days, 0, kMaxExpiringDays);
            if (!filter.expiring_within_days)
                errors.push_back({"expiring_within_days", "must be an integer from 0 to 3650"});
        }
        if (!filter.status.empty() && !domain::parse_link_status(filter.status))
            errors.push_back({"status", "must be active or disabled"});
        if (!filter.partner.empty() && !domain::valid_slug(filter.partner))
            errors.push_back({"partner", "is not a valid partner slug"});
        if (!filter.cursor.empty() && !domain::valid_slug(filter.cursor))
            errors.push_back({"cursor", "is not a cursor this API returned"});
        auto n = limit_parameter(query, kDefaultPageSize, kMaxPageSize);
        if (!n) errors.push_back({"limit", "must be an integer from 1 to 200"});
        if (!errors.empty()) return answer.invalid_query(errors);
        filter.limit = *n;
        if (!r.actor.reach.restricted()) return answer.outcome(store_.list_links(filter));
        answer.outcome(visible_links(r, filter));
    }

    // A restricted token's page (issue 46): only its partners' and domains' links, `limit` of
    // them, read page after page; the cursor is a link it sees, so no other slug leaks.
    Result<codec::Page<codec::LinkView>> visible_links(const ApiRequest& r, LinkFilter filter) {
        std::size_t limit = filter.limit;
        Result<codec::Page<codec::LinkView>> out;
        filter.limit = kMaxPageSize;
        for (;;) {
            auto found = store_.list_links(filter);
            if (found.kind != OutcomeKind::ok) return found;
            for (auto& link : found.view.items) {
                if (!link_visible(r, link.link)) continue;
                if (out.view.items.size() == limit) {
                    out.view.next_cursor = out.view.items.back().link.slug;
                    return out;
                }
                out.view.items.push_back(std::move(link));
            }
            if (!found.view.next_cursor) return out;
            filter.cursor = *found.view.next_cursor;
        }
    }

    AdminStore& store_;
    LinkHealthService* health_;
    StatsStore* stats_;
    const domain::Clock& clock_;
};

constexpr std::array kAuditRoutes{
    Route{Method::get, "GET", "/api/v1/audit", Role::admin, Operation::audit},
};

class Audit final : public Resource {
  public:
    explicit Audit(AdminStore& store) : store_(store) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        auto query = r.http.query();
        AuditFilter filter;
        filter.entity = domain::query_value(query, "entity").value_or("");
        filter.slug = domain::query_value(query, "slug").value_or("");
        filter.actor = domain::query_value(query, "actor").value_or("");
        std::vector<codec::FieldError> errors;
        read_time(query, "since", filter.since_us, errors);
        read_time(query, "until", filter.until_us, errors);
        auto n = limit_parameter(query, kDefaultAuditPage, kMaxAuditPage);
        if (!n) errors.push_back({"limit", "must be an integer from 1 to 500"});
        if (!errors.empty()) return answer.invalid_query(errors);
        filter.limit = *n;
        answer.outcome(store_.audit(filter));
    }

  private:
    AdminStore& store_;
};

constexpr std::array kTokenRoutes{
    Route{Method::get, "GET", "/api/v1/tokens", Role::admin, Operation::list_tokens},
    Route{Method::post, "POST", "/api/v1/tokens", Role::admin, Operation::create_token},
    Route{Method::del, "DELETE", "/api/v1/tokens/{name}", Role::admin, Operation::revoke_token},
};

class Tokens final : public Resource {
  public:
    explicit Tokens(AdminStore& store) : store_(store) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        switch (r.route->operation) {
            case Operation::list_tokens:
                return answer.outcome(store_.list_tokens());
            case Operation::create_token: {
                auto o = store_.create_token(r.actor, parse_new_token(r.body));
                return answer.outcome(o, created_at("/api/v1/tokens/", o, o.view.token.name));
            }
            default:
                return answer.outcome(store_.revoke_token(r.actor, r.name, r.if_match));
        }
    }

  private:
    AdminStore& store_;
};

constexpr std::array kDisclosureRoutes{
    Route{Method::get, "GET", "/api/v1/disclosures", Role::viewer, Operation::list_disclosures},
    Route{Method::get, "GET", "/api/v1/disclosures/{key}/{locale}", Role::viewer,
          Operation::get_disclosure},
    Route{Method::put, "PUT", "/api/v1/disclosures/{key}/{locale}", Role::editor,
          Operation::put_disclosure},
    Route{Method::get, "GET", "/api/v1/disclosures/{key}/{locale}/versions", Role::viewer,
          Operation::disclosure_versions},
    Route{Method::post, "POST", "/api/v1/disclosures/preview", Role::viewer,
          Operation::preview_disclosure},
};

class Disclosures final : public Resource {
  public:
    explicit Disclosures(AdminStore& store) : store_(store) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        switch (r.route->operation) {
            case Operation::list_disclosures:
                return answer.outcome(store_.list_disclosures());
            case Operation::get_disclosure:
                return answer.outcome(store_.get_disclosure(r.name, r.locale));
            case Operation::disclosure_versions:
                return answer.outcome(store_.disclosure_versions(r.name, r.locale));
            case Operation::preview_disclosure:
                return answer.outcome(
                    store_.preview_disclosure(codec::parse_disclosure_preview(r.body)));
            default: {
                // The key and the normalised locale were checked: no percent-encoding needed.
                auto o =
                    store_.put_disclosure(r.actor, r.name, r.locale, r.put,
                                          codec::parse_disclosure_put(r.name, r.locale, r.body));
                answer.outcome(o, o.kind == OutcomeKind::created
                                      ? "/api/v1/disclosures/" + r.name + "/" + r.locale
                                      : std::string());
            }
        }
    }

  private:
    AdminStore& store_;
};

}  // namespace

std::span<const Route> partner_routes() { return kPartnerRoutes; }
std::span<const Route> link_routes() { return kLinkRoutes; }
std::span<const Route> audit_routes() { return kAuditRoutes; }
std::span<const Route> token_routes() { return kTokenRoutes; }
std::span<const Route> disclosure_routes() { return kDisclosureRoutes; }

std::unique_ptr<Resource> partners_resource(AdminStore& store, CommissionStore* commissions) {
    return std::make_unique<Partners>(store, commissions);
}
std::unique_ptr<Resource> links_resource(AdminStore& store, LinkHealthService* health,
                                         StatsStore* stats, const domain::Clock& clock) {
    return std::make_unique<Links>(store, health, stats, clock);
}
std::unique_ptr<Resource> audit_resource(AdminStore& store) {
    return std::make_unique<Audit>(store);
}
std::unique_ptr<Resource> tokens_resource(AdminStore& store) {
    return std::make_unique<Tokens>(store);
}
std::unique_ptr<Resource> disclosures_resource(AdminStore& store) {
    return std::make_unique<Disclosures>(store);
}

}  // namespace refgate::admin
