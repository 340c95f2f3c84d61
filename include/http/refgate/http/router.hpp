#pragma once

#include <memory>
#include <string>
#include <vector>

#include "refgate/http/server.hpp"

namespace refgate::http {

// Dispatches on the request path: exact paths first, then the longest matching prefix; 404
// otherwise. One instance per I/O thread, like every handler.
class Router final : public Handler {
  public:
    void exact(std::string path, std::shared_ptr<Handler> handler);
    void prefix(std::string prefix, std::shared_ptr<Handler> handler);
    void handle(const Request& request, Response& response) override;
    // Asks the handler the request resolves to, so that quick routes of a listener (health,
    // metrics) stay on the I/O thread beside blocking ones (the admin API).
    bool blocking(const Request& request) const override;
    bool may_block() const override { return any_blocking_; }
    void unavailable(const Request& request, Response& response) override;

  private:
    struct Route {
        std::string path;
        bool is_prefix;
        std::shared_ptr<Handler> handler;
    };
    // The handler for `path`, or null (404).
    Handler* resolve(std::string_view path) const;

    std::vector<Route> routes_;
    bool any_blocking_ = false;  // some route may block: only then is a request resolved twice
};

}  // namespace refgate::http
