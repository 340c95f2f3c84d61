#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "refgate/http/server.hpp"

namespace refgate::http {

// A small number the router's owner gives a route where it registers it (the metrics label
// routes by it); the router itself gives it no meaning. kUntagged: a route registered without
// one, or a request no route takes.
using RouteTag = std::uint8_t;
inline constexpr RouteTag kUntagged = 0xff;

// Dispatches on the request path: exact paths first, then the longest matching prefix; 404
// otherwise. One instance per I/O thread, like every handler.
class Router final : public Handler {
  public:
    void exact(std::string path, std::shared_ptr<Handler> handler, RouteTag tag = kUntagged);
    void prefix(std::string prefix, std::shared_ptr<Handler> handler, RouteTag tag = kUntagged);
    void handle(const Request& request, Response& response) override { route(request, response); }
    // handle() that tells which route answered: its tag (kUntagged for a 404).
    RouteTag route(const Request& request, Response& response);
    // Asks the handler the request resolves to, so that quick routes of a listener (health,
    // metrics) stay on the I/O thread beside blocking ones (the admin API).
    bool blocking(const Request& request) const override;
    bool may_block() const override { return any_blocking_; }
    // Resolves the path once per request: the route goes in `notes` for handle().
    void prepare(std::string_view path, Parsed stage, RequestNotes& notes) override;
    void unavailable(const Request& request, Response& response) override {
        route_unavailable(request, response);
    }
    RouteTag route_unavailable(const Request& request, Response& response);
    // The tag of the route `path` resolves to (kUntagged when none).
    RouteTag tag_of(std::string_view path) const;

  private:
    struct Route {
        std::string path;
        bool is_prefix;
        std::shared_ptr<Handler> handler;
        RouteTag tag;
    };
    // The route for the request of `path`, or null (404): the one prepare() noted, else
    // searched for.
    const Route* resolve(std::string_view path, const RequestNotes& notes) const;
    const Route* search(std::string_view path) const;

    std::vector<Route> routes_;
    bool any_blocking_ = false;  // some route may block: only then is a request asked blocking()
};

}  // namespace refgate::http
