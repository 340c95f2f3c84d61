#pragma once

// The editors' console: a single-page app built from src/console/web and embedded into the
// binary, served on the admin listener under /console/ with a strict Content-Security-Policy.

#include <span>
#include <string_view>

#include "refgate/http/server.hpp"

namespace refgate::console {

// One built file: its path under /console/ ("index.html", "assets/app-3F2A.js"), bytes and a
// strong ETag from a hash of them. Content-hashed assets are cached for good; index.html is not.
struct Asset {
    std::string_view path;
    std::string_view content_type;
    std::string_view etag;
    std::string_view body;
    bool immutable = false;
};

// The files embedded by this build: empty when it was configured with -DREFGATE_CONSOLE=OFF.
std::span<const Asset> embedded_assets();

// Answers GET and HEAD of /console (308 to /console/), /console/ (index.html) and
// /console/assets/<file>; 404 for anything else under /console/, 405 for other methods.
// Every answer carries the console's security headers. Never blocks; no allocation but the
// response's own buffers.
class ConsoleHandler final : public http::Handler {
  public:
    explicit ConsoleHandler(std::span<const Asset> assets) : assets_(assets) {}
    void handle(const http::Request& request, http::Response& response) override;

    static constexpr std::string_view kRoot = "/console";
    static constexpr std::string_view kPrefix = "/console/";

  private:
    const Asset* find(std::string_view path) const;

    std::span<const Asset> assets_;
};

}  // namespace refgate::console
