#include "refgate/clicks/rollup_sums.hpp"

#include <chrono>

namespace refgate::clicks {
namespace {

void add(ClassSums& to, const ClassSums& from) {
    for (std::size_t c = 0; c < to.size(); ++c) to[c] += from[c];
}

template <typename Key>
void add(std::map<Key, ClassSums>& to, const Key& key, const ClassSums& from) {
    add(to[key], from);
}

template <typename A, typename B>
std::vector<std::tuple<A, B, ClassSums>> listed(const std::map<std::pair<A, B>, ClassSums>& sums) {
    std::vector<std::tuple<A, B, ClassSums>> out;
    out.reserve(sums.size());
    for (const auto& [key, classes] : sums) out.emplace_back(key.first, key.second, classes);
    return out;
}

}  // namespace

std::int32_t month_start(std::int32_t day) {
    using namespace std::chrono;
    year_month_day ymd{sys_days{days{day}}};
    return static_cast<std::int32_t>(
        sys_days{ymd.year() / ymd.month() / 1}.time_since_epoch().count());
}

std::int32_t next_month_start(std::int32_t month) {
    using namespace std::chrono;
    year_month_day ymd{sys_days{days{month}}};
    year_month next = ymd.year() / ymd.month() + months{1};
    return static_cast<std::int32_t>(sys_days{next / 1}.time_since_epoch().count());
}

RollupSums rollup_sums(const std::vector<ChannelCountRow>& rows, const RollupScope& scope,
                       const std::unordered_map<std::int64_t, std::int64_t>& partner_of) {
    RollupSums out;
    std::map<std::pair<std::int64_t, std::int32_t>, ClassSums> months, partners;
    std::map<std::pair<std::int32_t, std::string>, ClassSums> channels;
    const std::int32_t closing_ends = next_month_start(scope.months_through);
    for (const auto& row : rows) {
        if (scope.rolled_up_through && row.link_id > *scope.rolled_up_through) continue;
        // The rows come sorted by (link, day): a link day's channels follow each other. The open
        // day has no link days (the answers read it from the base table) until it is closed.
        if (row.day < scope.days_through ||
            (row.day == scope.days_through && row.link_id <= scope.days_closed_through)) {
            if (out.link_days.empty() || std::get<0>(out.link_days.back()) != row.link_id ||
                std::get<1>(out.link_days.back()) != row.day)
                out.link_days.emplace_back(row.link_id, row.day, ClassSums{});
            add(std::get<2>(out.link_days.back()), row.classes);
        }
        if (row.day < scope.months_through ||
            (row.day < closing_ends && row.link_id <= scope.months_closed_through))
            add(months, {row.link_id, month_start(row.day)}, row.classes);
        auto partner = partner_of.find(row.link_id);
        if (partner == partner_of.end()) continue;
        add(partners, {partner->second, row.day}, row.classes);
        if (!scope.base_from || row.day >= *scope.base_from)
            add(channels, {row.day, row.channel}, row.classes);
    }
    out.link_months = listed(months);
    out.partner_days = listed(partners);
    out.channel_days = listed(channels);
    return out;
}

}  // namespace refgate::clicks
