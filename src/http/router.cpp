#include "refgate/http/router.hpp"

namespace refgate::http {
void Router::exact(std::string path, std::shared_ptr<Handler> handler, RouteTag tag) {
    any_blocking_ = any_blocking_ || handler->may_block();
    routes_.push_back({std::move(path), false, std::move(handler), tag});
}

void Router::prefix(std::string prefix, std::shared_ptr<Handler> handler, RouteTag tag) {
    any_blocking_ = any_blocking_ || handler->may_block();
    routes_.push_back({std::move(prefix), true, std::move(handler), tag});
}

const Router::Route* Router::resolve(std::string_view path, const RequestNotes& notes) const {
    if (notes.router == this) return static_cast<const Route*>(notes.route);
    return search(path);
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
    if (const Route* route = resolve(request.path(), request.notes)) {
        route->handler->handle(request, response);
        return route->tag;
    }
    response.simple_page(404, "Not Found");
    return kUntagged;
}

void Router::prepare(std::string_view path, Parsed stage, RequestNotes& notes) {
    const Route* route = resolve(path, notes);
    notes.route = route;
    notes.router = this;
    if (route != nullptr) route->handler->prepare(path, stage, notes);
}

RouteTag Router::tag_of(std::string_view path) const {
    const Route* route = search(path);
    return route != nullptr ? route->tag : kUntagged;
}

bool Router::blocking(const Request& request) const {
    if (!any_blocking_) return false;
    const Route* route = resolve(request.path(), request.notes);
    return route != nullptr && route->handler->blocking(request);
}

RouteTag Router::route_unavailable(const Request& request, Response& response) {
    if (const Route* route = resolve(request.path(), request.notes)) {
        route->handler->unavailable(request, response);
        return route->tag;
    }
    Handler::unavailable(request, response);
    return kUntagged;
}

}  // namespace refgate::http
