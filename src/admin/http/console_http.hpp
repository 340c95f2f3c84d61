#pragma once

// How the console's session travels over HTTP: the cookie, and the checks that a request came
// from the console's own pages (Origin, Sec-Fetch-Site, X-CSRF-Token).

#include <string>
#include <string_view>

#include "refgate/admin/authenticator.hpp"
#include "refgate/admin/console_service.hpp"
#include "refgate/http/request.hpp"

namespace refgate::admin {

// POST, PUT, PATCH and DELETE.
bool unsafe_method(http::Method method);
// The value of the session cookie in the request's Cookie fields; empty when there is none.
std::string_view session_cookie(const http::Request& request, const ConsoleWeb& web);
// Set-Cookie values that start and end a session.
std::string session_cookie_header(const ConsoleWeb& web, std::string_view id);
std::string cleared_cookie_header(const ConsoleWeb& web);
// Why the request may come from another site; empty when it comes from the console's origin.
// Sec-Fetch-Site: cross-site is refused, and same-site too when `refuse_same_site`.
std::string cross_site(const http::Request& request, const ConsoleWeb& web, bool refuse_same_site);
// Why an unsafe request made with `session` fails the CSRF checks; empty when it passes.
std::string csrf_failure(const http::Request& request, const ConsoleWeb& web,
                         const ConsoleSession& session);

}  // namespace refgate::admin
