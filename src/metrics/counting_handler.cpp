#include "refgate/metrics/counting_handler.hpp"

namespace refgate::metrics {

CountingHandler::CountingHandler(std::unique_ptr<http::Router> router, RequestCounters& counters)
    : router_(std::move(router)),
      counters_(counters),
      writers_(router_->may_block() ? runtime::Writers::several : runtime::Writers::one) {}

void CountingHandler::handle(const http::Request& request, http::Response& response) {
    std::uint64_t started = clock_.now();
    http::RouteTag tag = http::kUntagged;
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

void CountingHandler::unavailable(const http::Request& request, http::Response& response) {
    http::RouteTag tag = router_->route_unavailable(request, response);
    counters_.record(route_class(tag), response.status(), std::chrono::nanoseconds{0}, writers_);
}

}  // namespace refgate::metrics
