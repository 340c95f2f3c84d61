#include "refgate/admin/placements.hpp"

#include <algorithm>
#include <array>

#include "api.hpp"
#include "refgate/domain/query.hpp"

namespace refgate::admin {

std::optional<std::vector<std::pair<std::string, std::uint64_t>>> channel_clicks(
    StatsStore& stats, const std::string& slug, const domain::DayRange& range) {
    auto link = stats.link(slug, range);
    if (!link) return std::nullopt;
    return channel_clicks(*link);
}

std::vector<std::pair<std::string, std::uint64_t>> channel_clicks(const domain::LinkStats& link) {
    std::map<std::string, std::uint64_t> sums;
    for (const auto& day : link.days) {
        for (const auto& [channel, n] : day.human_by_channel) sums[channel] += n;
    }
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (auto& [channel, n] : sums) {
        if (n != 0) out.emplace_back(channel, n);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
}

Result<codec::LinkPlacements> link_placements(AdminStore& store, StatsStore& stats,
                                              const std::string& slug,
                                              const domain::DayRange& range) {
    auto channels = channel_clicks(stats, slug, range);
    if (!channels) return {OutcomeKind::not_found, {}, 0, "no link '" + slug + "'", {}};
    return store.link_placements(slug, *channels);
}

std::optional<std::vector<domain::PlacementClicks>> stats_placements(
    AdminStore& store, const domain::LinkStats& stats) {
    // The link by its domain too (issue 46: its slug may be taken on other domains).
    std::string name = stats.domain.empty() ? stats.link : stats.domain + "/" + stats.link;
    auto found = store.link_placements(name, channel_clicks(stats));
    if (found.kind != OutcomeKind::ok || !found.view.carried) return std::nullopt;
    std::vector<domain::PlacementClicks> out;
    for (auto& p : found.view.items)
        out.push_back({std::move(p.channel), std::move(p.token), p.human_clicks});
    return out;
}

Result<codec::PlacementFound> find_placement(AdminStore& store, StatsStore& stats,
                                             const std::string& token,
                                             const domain::DayRange& range) {
    return store.find_placement(token, [&](const std::string& link) {
        std::vector<std::string> names;
        if (auto channels = channel_clicks(stats, link, range)) {
            for (auto& [channel, n] : *channels) names.push_back(std::move(channel));
        }
        return names;
    });
}

namespace {

constexpr std::array kPlacementRoutes{
    Route{http::Method::get, "GET", "/api/v1/placements/{token}", Role::viewer,
          Operation::get_placement},
};

// The range of days whose clicks count: ?from= and ?to= as the stats API reads them (the 30
// days ending today by default); nullopt after answering 422.
std::optional<domain::DayRange> range_of(const ApiRequest& r, const domain::Clock& clock,
                                         Answer& answer) {
    auto query = r.http.query();
    std::vector<domain::RangeProblem> problems;
    auto range = domain::parse_range(domain::query_value(query, "from"),
                                     domain::query_value(query, "to"), utc_today(clock), problems);
    if (!problems.empty() || !range) {
        std::vector<codec::FieldError> errors;
        for (auto& p : problems) errors.push_back({p.field, p.message});
        answer.invalid_query(errors);
        return std::nullopt;
    }
    return range;
}

class Placements final : public Resource {
  public:
    Placements(AdminStore& store, StatsStore* stats, const domain::Clock& clock)
        : store_(store), stats_(stats), clock_(clock) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        serve_placements(store_, stats_, clock_, r, answer);
    }

  private:
    AdminStore& store_;
    StatsStore* stats_;
    const domain::Clock& clock_;
};

}  // namespace

void serve_placements(AdminStore& store, StatsStore* stats, const domain::Clock& clock,
                      const ApiRequest& r, Answer& answer) {
    if (stats == nullptr) throw StoreError("no stats store");
    auto range = range_of(r, clock, answer);
    if (!range) return;
    if (r.route->operation == Operation::get_placement)
        return answer.outcome(find_placement(store, *stats, r.name, *range));
    // ?domain=HOST: the link on that domain (issue 46), as GET /links/{slug} finds it.
    answer.outcome(link_placements(store, *stats, link_name(r), *range));
}

std::span<const Route> placement_routes() { return kPlacementRoutes; }

std::unique_ptr<Resource> placements_resource(AdminStore& store, StatsStore* stats,
                                              const domain::Clock& clock) {
    return std::make_unique<Placements>(store, stats, clock);
}

}  // namespace refgate::admin
