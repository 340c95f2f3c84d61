#pragma once

// Cross-origin access to the admin API for the configured origins (the editors' console served
// from another origin): preflights answered without authentication, and the headers that let a
// browser read an answer. Any other origin gets no Access-Control-* header, so browsers refuse.

#include <span>
#include <string>
#include <string_view>

#include "refgate/http/request.hpp"
#include "refgate/http/response.hpp"

namespace refgate::admin {

// The request's Origin when it is one of `allowed` (compared without ASCII case); empty when the
// request has none or another.
std::string_view allowed_origin(const http::Request& request, std::span<const std::string> allowed);

// Answers OPTIONS for a resource whose methods are `methods` ("GET, POST"): 204 with Allow, and
// with an allowed `origin` the preflight's Access-Control-* headers. `vary`: answers depend on
// Origin (some origins are configured).
void answer_preflight(std::string_view methods, std::string_view origin, bool vary,
                      http::Response& response);

// Adds what a browser needs to read an answer from an allowed `origin` (none when empty).
void add_cors_headers(std::string_view origin, bool vary, http::Response& response);

}  // namespace refgate::admin
