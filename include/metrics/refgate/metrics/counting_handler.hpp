#pragma once

#include <memory>

#include "refgate/http/router.hpp"
#include "refgate/metrics/metrics.hpp"
#include "refgate/metrics/tick_clock.hpp"

namespace refgate::metrics {

// The tag a route registers with, so that its answers are counted under `route`.
constexpr http::RouteTag route_tag(RouteClass route) { return static_cast<http::RouteTag>(route); }
// The route class of a tag; untagged routes and requests no route took are `other`.
constexpr RouteClass route_class(http::RouteTag tag) {
    return tag < kRouteClasses ? static_cast<RouteClass>(tag) : RouteClass::other;
}

// Wraps a listener's router: counts every answer by the answering route's class and status, and
// times it, into the calling thread's own counters. Two reads of the time-stamp counter and
// three additions per request (plain ones where the router never blocks: then only the I/O
// thread writes); no allocation. A handler's exception is counted as a 500 and passed on (the
// server answers it).
class CountingHandler final : public http::Handler {
  public:
    CountingHandler(std::unique_ptr<http::Router> router, RequestCounters& counters);
    void handle(const http::Request& request, http::Response& response) override;
    bool blocking(const http::Request& request) const override {
        return router_->blocking(request);
    }
    bool may_block() const override { return router_->may_block(); }
    void prepare(std::string_view path, http::Handler::Parsed stage,
                 http::RequestNotes& notes) override {
        router_->prepare(path, stage, notes);
    }
    void unavailable(const http::Request& request, http::Response& response) override;

  private:
    std::unique_ptr<http::Router> router_;
    RequestCounters& counters_;
    runtime::Writers writers_;
    TickClock clock_;
};

}  // namespace refgate::metrics
