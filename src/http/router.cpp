#include "refgate/http/router.hpp"

namespace refgate::http {
void Router::exact(std::string path, std::shared_ptr<Handler> handler, RouteTag tag) {
    resolved_.forget();
    any_blocking_ = any_blocking_ || handler->may_block();
    routes_.push_back({std::move(path), false, std::move(handler), tag});
}

void Router::prefix(std::string prefix, std::shared_ptr<Handler> handler, RouteTag tag) {
    resolved_.forget();
    any_blocking_ = any_blocking_ || handler->may_block();
    routes_.push_back({std::move(prefix), true, std::move(handler), tag});
}

const Router::Route* Router::resolve(std::string_view path) const {
    // A router with blocking routes is used from the blocking pool too: it remembers nothing.
    if (any_blocking_) return search(path);
    if (const Route* const* known = resolved_.find(path)) return *known;
    const Route* route = search(path);
    resolved_.remember(path, route);
    return route;
}

const Router::Route* Router::search(std::string_view path) const {
    const Route* best = nullptr;
    for (const auto& route : routes_) {
        if (!route.is_prefix && path == route.path) return &route;
        if (route.is_prefix && path.starts_with(route.path) &&
            (best == nullptr || route.path.size() > best->path.size())) {
            best = &route;
        }
    }
    return best;
}

RouteTag Router::route(const Request& request, Response& response) {
    if (const Route* route = resolve(request.path())) {
        route->handler->handle(request, response);
        return route->tag;
    }
    response.simple_page(404, "Not Found");
    return kUntagged;
}

void Router::prepare(std::string_view path, Parsed stage) {
    if (const Route* route = resolve(path)) route->handler->prepare(path, stage);
}

RouteTag Router::tag_of(std::string_view path) const {
    const Route* route = resolve(path);
    return route != nullptr ? route->tag : kUntagged;
}

bool Router::blocking(const Request& request) const {
    if (!any_blocking_) return false;
    const Route* route = resolve(request.path());
    return route != nullptr && route->handler->blocking(request);
}

RouteTag Router::route_unavailable(const Request& request, Response& response) {
    if (const Route* route = resolve(request.path())) {
        route->handler->unavailable(request, response);
        return route->tag;
    }
    Handler::unavailable(request, response);
    return kUntagged;
}

}  // namespace refgate::http
