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
    // Blocking when any route's handler blocks: the whole listener then answers on the pool.
    bool blocking() const override { return blocking_; }

  private:
    struct Route {
        std::string path;
        bool is_prefix;
        std::shared_ptr<Handler> handler;
    };
    std::vector<Route> routes_;
    bool blocking_ = false;
};

}  // namespace refgate::http
