#include "refgate/metrics/counting_handler.hpp"

namespace refgate::http {

CountingHandler::CountingHandler(std::unique_ptr<Router> router, RequestCounters& counters)
    : router_(std::move(router)),
      counters_(counters),
      writers_(router_->may_block() ? Writers::several : Writers::one) {}

void CountingHandler::handle(const Request& request, Response& response) {
    std::uint64_t started = clock_.now();
    RouteTag tag = kUntagged;
    try {
        tag = router_->route(request, response);
    } catch (...) {
        // The server answers 500 (and counts the failure per listener); counted here as such.
        counters_.record(route_class(router_->tag_of(request.path())), 500, clock_.since(started),
                         writers_);
        throw;
    }
    counters_.record(route_class(tag), response.status(), clock_.since(started), writers_);
}

void CountingHandler::unavailable(const Request& request, Response& response) {
    RouteTag tag = router_->route_unavailable(request, response);
    counters_.record(route_class(tag), response.status(), std::chrono::nanoseconds{0}, writers_);
}

}  // namespace refgate::http
