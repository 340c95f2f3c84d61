#include "refgate/http/router.hpp"

namespace refgate::http {

void Router::exact(std::string path, std::shared_ptr<Handler> handler) {
    blocking_ = blocking_ || handler->blocking();
    routes_.push_back({std::move(path), false, std::move(handler)});
}

void Router::prefix(std::string prefix, std::shared_ptr<Handler> handler) {
    blocking_ = blocking_ || handler->blocking();
    routes_.push_back({std::move(prefix), true, std::move(handler)});
}

void Router::handle(const Request& request, Response& response) {
    std::string_view path = request.path();
    const Route* best = nullptr;
    for (const auto& route : routes_) {
        if (!route.is_prefix && path == route.path) {
            route.handler->handle(request, response);
            return;
        }
        if (route.is_prefix && path.starts_with(route.path) &&
            (best == nullptr || route.path.size() > best->path.size())) {
            best = &route;
        }
    }
    if (best != nullptr) {
        best->handler->handle(request, response);
        return;
    }
    response.simple_page(404, "Not Found");
}

}  // namespace refgate::http
