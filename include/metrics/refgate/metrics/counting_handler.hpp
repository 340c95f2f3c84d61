#pragma once

#include <memory>

#include "refgate/http/server.hpp"
#include "refgate/metrics/metrics.hpp"

namespace refgate::http {

// Wraps a listener's handler (its router): counts every answer by route class and status, and
// times it, into the calling thread's own counters. Two clock reads and two relaxed increments
// per request; no allocation.
class CountingHandler final : public Handler {
  public:
    CountingHandler(std::unique_ptr<Handler> inner, RequestCounters& counters)
        : inner_(std::move(inner)), counters_(counters) {}
    void handle(const Request& request, Response& response) override;
    bool blocking(const Request& request) const override { return inner_->blocking(request); }
    bool may_block() const override { return inner_->may_block(); }
    void unavailable(const Request& request, Response& response) override;

  private:
    std::unique_ptr<Handler> inner_;
    RequestCounters& counters_;
};

}  // namespace refgate::http
