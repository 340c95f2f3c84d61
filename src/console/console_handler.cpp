#include "refgate/console/console_handler.hpp"

#include "refgate/http/negotiation.hpp"

namespace refgate::console {
namespace {

// The contract's headers on every console answer. 'self' only: the build writes no inline script
// or style, and the app talks to /api/v1 on the same origin.
void security_headers(http::Response& response) {
    response.add_header("Content-Security-Policy",
                        "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; "
                        "base-uri 'none'; form-action 'self'");
    response.add_header("X-Content-Type-Options", "nosniff");
    response.add_header("Referrer-Policy", "no-referrer");
    response.add_header("X-Frame-Options", "DENY");
}

void plain(http::Response& response, int status, std::string_view text) {
    response.set_status(status);
    security_headers(response);
    response.add_header("Content-Type", "text/plain; charset=utf-8");
    response.add_header("Cache-Control", "no-cache");
    response.body().assign(text);
    response.body().push_back('\n');
}

}  // namespace

const Asset* ConsoleHandler::find(std::string_view path) const {
    if (path.empty()) path = "index.html";
    for (const Asset& asset : assets_)
        if (asset.path == path) return &asset;
    return nullptr;
}

void ConsoleHandler::handle(const http::Request& request, http::Response& response) {
    if (request.method != http::Method::get && request.method != http::Method::head) {
        plain(response, 405, "method not allowed");
        response.add_header("Allow", "GET, HEAD");
        return;
    }
    std::string_view path = request.path();
    if (path == kRoot) {
        // Relative URLs in index.html resolve against /console/, so the slash is not optional.
        response.set_status(308);
        security_headers(response);
        response.add_header("Location", kPrefix);
        response.add_header("Cache-Control", "no-cache");
        return;
    }
    const Asset* asset = path.starts_with(kPrefix) ? find(path.substr(kPrefix.size())) : nullptr;
    if (!asset) {
        plain(response, 404, "not found");
        return;
    }
    bool not_modified = http::if_none_match_matches(request.header("If-None-Match"), asset->etag);
    response.set_status(not_modified ? 304 : 200);
    security_headers(response);
    response.add_header("ETag", asset->etag);
    response.add_header("Cache-Control",
                        asset->immutable ? "public, max-age=31536000, immutable" : "no-cache");
    if (not_modified) return;
    response.add_header("Content-Type", asset->content_type);
    response.body().assign(asset->body);
}

}  // namespace refgate::console
