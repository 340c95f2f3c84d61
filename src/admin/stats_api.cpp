#include "stats_api.hpp"

#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

#include "api.hpp"
#include "refgate/admin/commissions.hpp"
#include "refgate/admin/placements.hpp"
#include "refgate/codec/domains_json.hpp"
#include "refgate/codec/earnings.hpp"
#include "refgate/codec/stats_formats.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/domain/time.hpp"
#include "refgate/http/negotiation.hpp"

namespace refgate::admin {
namespace {

// The figures of one link or partner as JSON or CSV, or 404 when it does not exist.
template <typename Stats>
StatsAnswer answer_found(StatsAnswer answer, const std::optional<Stats>& stats,
                         std::string_view what, const std::string& slug) {
    if (!stats) {
        answer.status = 404;
        answer.detail = "no " + std::string(what) + " '" + slug + "'";
    } else if (answer.is_csv) {
        answer.csv = codec::to_csv(*stats);
    } else {
        answer.json = codec::to_json(*stats);
    }
    return answer;
}

}  // namespace

LiveStats StatsStore::live() { throw StoreError("no live figures in this stats store"); }

StatsAnswer answer_stats(StatsStore& store, Operation operation, const std::string& slug,
                         const StatsQuery& query, std::int32_t today, AdminStore* tokens) {
    StatsAnswer answer;
    std::vector<domain::RangeProblem> problems;
    auto range = domain::parse_range(query.from, query.to, today, problems);
    for (auto& p : problems) answer.errors.push_back({p.field, p.message});
    std::size_t limit = kDefaultTopLimit;
    if (operation == Operation::stats_top && query.limit) {
        const std::string& text = *query.limit;
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
        if (ec != std::errc{} || ptr != text.data() + text.size() || limit < 1 ||
            limit > kMaxTopLimit) {
            answer.errors.push_back(
                {"limit", "must be an integer from 1 to " + std::to_string(kMaxTopLimit)});
        }
    }
    bool by_partner = query.by == "partner";
    if (operation == Operation::stats_top && query.by && !by_partner && *query.by != "link")
        answer.errors.push_back({"by", "must be link or partner"});
    if (!answer.errors.empty() || !range) {
        answer.status = 422;
        return answer;
    }
    answer.is_csv = query.csv;
    switch (operation) {
        case Operation::stats_link: {
            auto link = store.link(slug, *range);
            // The CSV has a row per day: a link's placements are in its JSON only.
            if (link && tokens != nullptr && !query.csv)
                link->placements = stats_placements(*tokens, *link);
            return answer_found(std::move(answer), link, "link", slug);
        }
        case Operation::stats_partner:
            return answer_found(
                std::move(answer),
                store.partner(slug, *range, query.domain ? &*query.domain : nullptr), "partner",
                slug);
        case Operation::stats_overview: {
            auto overview = store.overview(*range);
            if (query.csv) {
                answer.csv = codec::to_csv(overview);
            } else {
                answer.json = codec::overview_to_json(overview);
            }
            return answer;
        }
        default: {
            const StatsDomain* domain = query.domain ? &*query.domain : nullptr;
            if (by_partner) {
                auto partners = store.top_partners(*range, limit, domain);
                if (query.csv) {
                    answer.csv = codec::top_partners_to_csv(partners);
                } else {
                    answer.json = codec::top_partners_to_json(*range, partners);
                }
                return answer;
            }
            auto entries = store.top(*range, limit, domain);
            if (query.csv) {
                answer.csv = codec::top_to_csv(entries);
            } else {
                answer.json = codec::top_to_json(*range, entries);
            }
            return answer;
        }
    }
}

namespace {

constexpr std::array kStatsRoutes{
    Route{http::Method::get, "GET", "/api/v1/stats/links/{slug}", Role::viewer,
          Operation::stats_link},
    Route{http::Method::get, "GET", "/api/v1/stats/partners/{slug}", Role::viewer,
          Operation::stats_partner},
    Route{http::Method::get, "GET", "/api/v1/stats/top", Role::viewer, Operation::stats_top},
    Route{http::Method::get, "GET", "/api/v1/stats/overview", Role::viewer,
          Operation::stats_overview},
    Route{http::Method::get, "GET", "/api/v1/stats/earnings", Role::viewer,
          Operation::stats_earnings},
    Route{http::Method::get, "GET", "/api/v1/stats/earnings/attention", Role::viewer,
          Operation::stats_earnings_attention},
    Route{http::Method::get, "GET", "/api/v1/stats/live", Role::viewer, Operation::stats_live},
};

// The most clicked links a live answer lists.
constexpr std::size_t kMaxLiveLinks = 100;

// GET /api/v1/stats/live: human clicks per link over the last minutes and today's clicks per
// class beside yesterday's over the same hours, from Redis only (the store caches them).
nlohmann::ordered_json live_json(const LiveStats& live) {
    nlohmann::ordered_json out;
    out["as_of"] = domain::format_rfc3339(domain::SysSeconds{std::chrono::seconds{live.as_of}});
    out["window_seconds"] = live.window_seconds;
    auto links = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < live.links.size() && i < kMaxLiveLinks; ++i)
        links.push_back(
            {{"link", live.links[i].link}, {"human_clicks", live.links[i].human_clicks}});
    out["links"] = std::move(links);
    auto classes = [](const std::array<std::uint64_t, 4>& counts) {
        nlohmann::ordered_json o = nlohmann::ordered_json::object();
        for (const auto& c : domain::kClickClasses)
            o[std::string(c.name)] = counts[static_cast<std::size_t>(c.click_class)];
        return o;
    };
    out["today"] = classes(live.today);
    out["yesterday_same_hours"] = classes(live.yesterday_same_hours);
    return out;
}

// GET /api/v1/stats/earnings?from=&to=&group=&link=&partner=: the range as the other stats
// answers take it, the group link (default), placement, partner or day, narrowed to one link
// and/or one partner when asked; JSON, or CSV when asked.
void serve_earnings(CommissionStore& store, const ApiRequest& r, Answer& answer,
                    std::int32_t today) {
    auto query = r.http.query();
    std::vector<domain::RangeProblem> problems;
    auto range = domain::parse_range(domain::query_value(query, "from"),
                                     domain::query_value(query, "to"), today, problems);
    std::vector<codec::FieldError> errors;
    for (auto& p : problems) errors.push_back({p.field, p.message});
    auto group = codec::parse_earnings_group(domain::query_value(query, "group").value_or("link"));
    if (!group) errors.push_back({"group", "must be link, placement, partner or day"});
    codec::EarningsFilter filter{.link = domain::query_value(query, "link"),
                                 .partner = domain::query_value(query, "partner")};
    if (!errors.empty() || !range) return answer.invalid_query(errors);
    auto report = store.earnings(*range, *group, filter);
    if (!report) return answer.problem(404, "not-found", "no such link or partner");
    if (http::wants_csv(r.http.header("Accept"))) return answer.csv(codec::earnings_csv(*report));
    answer.json(200, view_json(*report));
}

// GET /api/v1/stats/earnings/attention?days=N: the links whose EPC fell to zero while their
// clicks went on over the N (1 to 90, default 7) full UTC days before today.
void serve_epc_zero(CommissionStore& store, const ApiRequest& r, Answer& answer,
                    std::int32_t today) {
    auto query = r.http.query();
    int days = codec::kDefaultEpcZeroDays;
    if (auto text = domain::query_value(query, "days")) {
        auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), days);
        if (ec != std::errc{} || ptr != text->data() + text->size() || days < 1 ||
            days > codec::kMaxEpcZeroDays) {
            return answer.invalid_query({{"days", "must be an integer from 1 to " +
                                                      std::to_string(codec::kMaxEpcZeroDays)}});
        }
    }
    codec::EpcZeroReport report{.range = {.from = today - days, .to = today - 1}, .days = days};
    report.items = store.epc_zero_links(report.range);
    answer.json(200, view_json(report));
}

class Stats final : public Resource {
  public:
    Stats(AdminStore& store, StatsStore* stats, const domain::Clock& clock,
          CommissionStore* commissions)
        : store_(store), stats_(stats), clock_(clock), commissions_(commissions) {}
    std::string_view prefix() const override { return "/api/v1/stats"; }
    std::span<const Route> routes() const override { return kStatsRoutes; }

    void serve(const ApiRequest& r, Answer& answer) override {
        if (r.route->operation == Operation::stats_earnings) {
            if (commissions_ == nullptr) throw StoreError("no commission store");
            return serve_earnings(*commissions_, r, answer, utc_today(clock_));
        }
        if (r.route->operation == Operation::stats_earnings_attention) {
            if (commissions_ == nullptr) throw StoreError("no commission store");
            return serve_epc_zero(*commissions_, r, answer, utc_today(clock_));
        }
        if (stats_ == nullptr) throw StoreError("no stats store");
        if (r.route->operation == Operation::stats_live) return serve_live(answer);
        auto query = r.http.query();
        StatsQuery q{domain::query_value(query, "from"),  domain::query_value(query, "to"),
                     domain::query_value(query, "limit"), http::wants_csv(r.http.header("Accept")),
                     domain::query_value(query, "by"),    std::nullopt};
        // Issue 46: ?domain= on the top and partner answers names a domain that exists.
        auto domain = domain::query_value(query, "domain");
        if (domain && (r.route->operation == Operation::stats_top ||
                       r.route->operation == Operation::stats_partner)) {
            std::string host = codec::canonical_domain_host(*domain);
            std::optional<Result<codec::DomainView>> found;
            if (!host.empty()) found = store_.get_domain(host);
            if (!found || found->kind != OutcomeKind::ok)
                return answer.problem(404, "not-found", "no domain '" + *domain + "'");
            q.domain = StatsDomain{host, found->view.domain.is_default};
        }
        // A link's figures: the link as GET /links/{slug} finds it (?domain=HOST, issue 46).
        const std::string& name =
            r.route->operation == Operation::stats_link ? link_name(r) : r.name;
        auto stats = answer_stats(*stats_, r.route->operation, name, q, utc_today(clock_), &store_);
        if (stats.status == 422) return answer.invalid_query(stats.errors);
        if (stats.status == 404) return answer.problem(404, "not-found", stats.detail);
        if (stats.is_csv) return answer.csv(std::move(stats.csv));
        answer.json(200, stats.json);
    }

  private:
    // The body is rendered once per kLiveBodyFor and sent as it is to every watcher meanwhile:
    // 50 editors polling cost one rendering (and one Redis read) a second, not 50.
    void serve_live(Answer& answer) {
        std::shared_ptr<const std::string> body;
        {
            std::lock_guard lock(live_mutex_);
            auto now = std::chrono::steady_clock::now();
            if (!live_body_ || now - live_at_ >= kLiveBodyFor) {
                live_body_ = std::make_shared<const std::string>(live_json(stats_->live()).dump());
                live_at_ = now;
            }
            body = live_body_;
        }
        auto& response = answer.response();
        response.set_status(200);
        response.add_header("Content-Type", "application/json");
        response.add_header("Cache-Control", "no-store");
        response.body() = *body;
    }

    static constexpr std::chrono::milliseconds kLiveBodyFor{1'000};

    AdminStore& store_;
    StatsStore* stats_;
    const domain::Clock& clock_;
    CommissionStore* commissions_;
    std::mutex live_mutex_;
    std::shared_ptr<const std::string> live_body_;
    std::chrono::steady_clock::time_point live_at_{};
};

}  // namespace

std::span<const Route> stats_routes() { return kStatsRoutes; }

std::unique_ptr<Resource> stats_resource(AdminStore& store, StatsStore* stats,
                                         const domain::Clock& clock, CommissionStore* commissions) {
    return std::make_unique<Stats>(store, stats, clock, commissions);
}

}  // namespace refgate::admin
