#include "refgate/metrics/counting_handler.hpp"

#include <chrono>

namespace refgate::http {

void CountingHandler::handle(const Request& request, Response& response) {
    auto started = std::chrono::steady_clock::now();
    RouteTag tag = kUntagged;
    try {
        tag = router_->route(request, response);
    } catch (...) {
        // The server answers 500 (and counts the failure per listener); counted here as such.
        counters_.record(route_class(router_->tag_of(request.path())), 500,
                         std::chrono::steady_clock::now() - started);
        throw;
    }
    counters_.record(route_class(tag), response.status(),
                     std::chrono::steady_clock::now() - started);
}

void CountingHandler::unavailable(const Request& request, Response& response) {
    RouteTag tag = router_->route_unavailable(request, response);
    counters_.record(route_class(tag), response.status(), std::chrono::nanoseconds{0});
}

}  // namespace refgate::http
