// The console's session as one more authenticator of the admin API (the HTTP side, cookie and
// CSRF checks, is in console_http.cpp, which the fuzz targets build without a database).

#include "console_http.hpp"

namespace refgate::admin {

Authentication SessionAuthenticator::authenticate(const http::Request& request) {
    std::string_view id = session_cookie(request, web_);
    if (id.empty()) return {};
    auto session = console_.session(id);
    if (!session)
        return {.kind = Authentication::Kind::refused,
                .detail = "the session has ended or expired; sign in again"};
    if (unsafe_method(request.method)) {
        if (std::string why = csrf_failure(request, web_, *session); !why.empty())
            return {.kind = Authentication::Kind::forged, .detail = std::move(why)};
    }
    return {
        .kind = Authentication::Kind::accepted,
        .actor = {
            .name = "user:" + session->user, .role = session->role, .session = session->id_hash}};
}

}  // namespace refgate::admin
