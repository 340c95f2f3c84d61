#pragma once

// Figures for /metrics that the data plane and the workers keep themselves: relaxed atomics in
// fixed arrays, no allocation and no lock when a figure changes. The exporter sums them at scrape
// time (refgate/metrics). Labels are fixed small sets: a route class, never a raw path.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "refgate/http/status.hpp"
#include "refgate/runtime/figures.hpp"

namespace refgate::metrics {

// The route label of a request: a fixed set, tagged on the routes where a listener's router is
// built (metrics::route_tag in counting_handler.hpp).
enum class RouteClass : std::uint8_t { redirect, disclosure, health, admin_api, metrics, other };
inline constexpr std::size_t kRouteClasses = 6;
std::string_view to_string(RouteClass route);

// The status codes refgate answers (http::kHttpStatuses), each with a slot; anything else lands in
// the "other" slot.
inline constexpr auto kTrackedStatuses = [] {
    std::array<int, http::kHttpStatuses.size()> codes{};
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = http::kHttpStatuses[i].code;
    return codes;
}();
inline constexpr std::size_t kStatusSlots = kTrackedStatuses.size() + 1;
std::size_t status_slot(int status) noexcept;

// One per (listener, I/O thread), on cache lines of its own: the thread that answers is the
// only frequent writer, and the only writer at all (Writers::one) for a listener whose handlers
// never block; one whose handlers block also writes from the handler pool (Writers::several).
struct alignas(64) RequestCounters {
    std::array<std::array<std::atomic<std::uint64_t>, kStatusSlots>, kRouteClasses> requests{};
    std::array<runtime::LatencyHistogram, kRouteClasses> latency{};

    void record(RouteClass route, int status, std::chrono::nanoseconds elapsed,
                runtime::Writers writers = runtime::Writers::several) noexcept {
        auto r = static_cast<std::size_t>(route);
        runtime::add_to_figure(requests[r][status_slot(status)], 1, writers);
        latency[r].observe(elapsed, writers);
    }
};

// Owns every thread's counters; slots are handed out while the server starts.
class RequestMetrics {
  public:
    RequestCounters& add_slot(std::string_view listener);
    // Calls f(std::string_view listener, const RequestCounters&) for every slot.
    template <typename F>
    void for_each(F&& f) const {
        std::lock_guard lock(mutex_);
        for (const auto& slot : slots_) f(std::string_view(slot.listener), *slot.counters);
    }

  private:
    struct Slot {
        std::string listener;
        std::unique_ptr<RequestCounters> counters;
    };
    mutable std::mutex mutex_;
    std::vector<Slot> slots_;
};

}  // namespace refgate::metrics
