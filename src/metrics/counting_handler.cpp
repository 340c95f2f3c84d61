#include "refgate/metrics/counting_handler.hpp"

#include <chrono>

namespace refgate::http {

void CountingHandler::handle(const Request& request, Response& response) {
    auto started = std::chrono::steady_clock::now();
    inner_->handle(request, response);
    counters_.record(route_class(request.path()), response.status(),
                     std::chrono::steady_clock::now() - started);
}

void CountingHandler::unavailable(const Request& request, Response& response) {
    inner_->unavailable(request, response);
    counters_.record(route_class(request.path()), response.status(), std::chrono::nanoseconds{0});
}

}  // namespace refgate::http
