#include "refgate/http/router.hpp"

namespace refgate::http {
void Router::exact(std::string path, std::shared_ptr<Handler> handler) {
    any_blocking_ = any_blocking_ || handler->may_block();
    routes_.push_back({std::move(path), false, std::move(handler)});
}

void Router::prefix(std::string prefix, std::shared_ptr<Handler> handler) {
    any_blocking_ = any_blocking_ || handler->may_block();
    routes_.push_back({std::move(prefix), true, std::move(handler)});
}

Handler* Router::resolve(std::string_view path) const {
    const Route* best = nullptr;
    for (const auto& route : routes_) {
        if (!route.is_prefix && path == route.path) return route.handler.get();
        if (route.is_prefix && path.starts_with(route.path) &&
            (best == nullptr || route.path.size() > best->path.size())) {
            best = &route;
        }
    }
    return best != nullptr ? best->handler.get() : nullptr;
}

void Router::handle(const Request& request, Response& response) {
    if (Handler* handler = resolve(request.path())) {
        handler->handle(request, response);
        return;
    }
    response.simple_page(404, "Not Found");
}

bool Router::blocking(const Request& request) const {
    if (!any_blocking_) return false;
    const Handler* handler = resolve(request.path());
    return handler != nullptr && handler->blocking(request);
}

void Router::unavailable(const Request& request, Response& response) {
    if (Handler* handler = resolve(request.path())) {
        handler->unavailable(request, response);
        return;
    }
    Handler::unavailable(request, response);
}

}  // namespace refgate::http
