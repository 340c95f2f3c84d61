#include "refgate/metrics/metrics.hpp"

namespace refgate::metrics {

std::string_view to_string(RouteClass route) {
    switch (route) {
        case RouteClass::redirect:
            return "redirect";
        case RouteClass::disclosure:
            return "disclosure";
        case RouteClass::health:
            return "health";
        case RouteClass::admin_api:
            return "admin_api";
        case RouteClass::metrics:
            return "metrics";
        case RouteClass::other:
            break;
    }
    return "other";
}

std::size_t status_slot(int status) noexcept {
    for (std::size_t i = 0; i < kTrackedStatuses.size(); ++i) {
        if (kTrackedStatuses[i] == status) return i;
    }
    return kTrackedStatuses.size();
}

RequestCounters& RequestMetrics::add_slot(std::string_view listener) {
    std::lock_guard lock(mutex_);
    slots_.push_back({std::string(listener), std::make_unique<RequestCounters>()});
    return *slots_.back().counters;
}

}  // namespace refgate::metrics
