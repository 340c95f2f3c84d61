#include "cors.hpp"

#include <string>

namespace refgate::admin {
namespace {

// Browsers cap the preflight cache (Chromium at 2 h); ten minutes keeps a changed origin list
// effective soon.
constexpr std::string_view kPreflightMaxAge = "600";
constexpr std::string_view kAllowedHeaders = "Authorization, Content-Type, If-Match, If-None-Match";
constexpr std::string_view kExposedHeaders = "ETag, Location";

}  // namespace

std::string_view allowed_origin(const http::Request& request,
                                std::span<const std::string> allowed) {
    if (allowed.empty()) return {};
    std::string_view origin = request.header("Origin");
    if (origin.empty()) return {};
    for (const auto& candidate : allowed) {
        if (http::iequals(origin, candidate)) return origin;
    }
    return {};
}

void answer_preflight(std::string_view methods, std::string_view origin, bool vary,
                      http::Response& response) {
    std::string allow(methods);
    allow.append(", OPTIONS");
    response.set_status(204);
    response.add_header("Allow", allow);
    if (vary) response.add_header("Vary", "Origin");
    if (origin.empty()) return;
    response.add_header("Access-Control-Allow-Origin", origin);
    response.add_header("Access-Control-Allow-Methods", allow);
    response.add_header("Access-Control-Allow-Headers", kAllowedHeaders);
    response.add_header("Access-Control-Max-Age", kPreflightMaxAge);
}

void add_cors_headers(std::string_view origin, bool vary, http::Response& response) {
    if (vary) response.add_header("Vary", "Origin");
    if (origin.empty()) return;
    response.add_header("Access-Control-Allow-Origin", origin);
    response.add_header("Access-Control-Expose-Headers", kExposedHeaders);
}

}  // namespace refgate::admin
