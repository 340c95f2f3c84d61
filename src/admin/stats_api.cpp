#include "stats_api.hpp"

#include <charconv>

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
        answer.csv = to_csv(*stats);
    } else {
        answer.json = to_json(*stats);
    }
    return answer;
}

}  // namespace

StatsAnswer answer_stats(StatsStore& store, Operation operation, const std::string& slug,
                         const StatsQuery& query, std::int32_t today) {
    StatsAnswer answer;
    std::vector<RangeProblem> problems;
    auto range = parse_range(query.from, query.to, today, problems);
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
    if (!answer.errors.empty() || !range) {
        answer.status = 422;
        return answer;
    }
    answer.is_csv = query.csv;
    switch (operation) {
        case Operation::stats_link:
            return answer_found(std::move(answer), store.link(slug, *range), "link", slug);
        case Operation::stats_partner:
            return answer_found(std::move(answer), store.partner(slug, *range), "partner", slug);
        default: {
            auto entries = store.top(*range, limit);
            if (query.csv) {
                answer.csv = top_to_csv(entries);
            } else {
                answer.json = top_to_json(*range, entries);
            }
            return answer;
        }
    }
}

}  // namespace refgate::admin
