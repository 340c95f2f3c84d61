#include "refgate/domain/link_check_plan.hpp"

#include <algorithm>

namespace refgate::domain {

std::vector<std::int64_t> due_links(std::vector<PlanLink> links, SysSeconds now,
                                    std::chrono::seconds interval) {
    std::sort(links.begin(), links.end(),
              [](const PlanLink& a, const PlanLink& b) { return a.id < b.id; });
    std::vector<std::int64_t> due;
    const auto n = static_cast<std::int64_t>(links.size());
    const std::int64_t period = std::max<std::int64_t>(interval.count(), 1);
    const std::int64_t t = now.time_since_epoch().count();
    for (std::int64_t i = 0; i < n; ++i) {
        const PlanLink& link = links[static_cast<std::size_t>(i)];
        if (link.confirm_at && *link.confirm_at <= now) {
            due.push_back(link.id);
            continue;
        }
        if (!link.last_checked) {
            due.push_back(link.id);
            continue;
        }
        const std::int64_t phase = i * period / n;
        const std::int64_t since = ((t - phase) % period + period) % period;
        const SysSeconds latest{std::chrono::seconds{t - since}};
        if (*link.last_checked < latest) due.push_back(link.id);
    }
    return due;
}

std::chrono::milliseconds HostRateLimiter::reserve(const std::string& host) {
    const auto now = clock_.now();
    if (next_.size() > 4096) std::erase_if(next_, [&](const auto& e) { return e.second <= now; });
    auto [it, added] = next_.try_emplace(host, now);
    const auto at = std::max(it->second, now);
    it->second = at + gap_;
    return std::chrono::duration_cast<std::chrono::milliseconds>(at - now);
}

}  // namespace refgate::domain
