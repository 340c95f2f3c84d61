#include "console_http.hpp"

#include "refgate/admin/console_crypto.hpp"

namespace refgate::admin {
namespace {

using http::Method;

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

// The value of cookie `name` in one Cookie field ("a=1; b=2"); nullopt when absent.
std::optional<std::string_view> cookie_value(std::string_view field, std::string_view name) {
    while (!field.empty()) {
        auto end = field.find(';');
        std::string_view pair = trim(field.substr(0, end));
        field = end == std::string_view::npos ? std::string_view{} : field.substr(end + 1);
        auto eq = pair.find('=');
        if (eq != std::string_view::npos && trim(pair.substr(0, eq)) == name)
            return trim(pair.substr(eq + 1));
    }
    return std::nullopt;
}

bool same_origin(const http::Request& request, const ConsoleWeb& web, std::string_view origin) {
    if (!web.admin_origin.empty()) return http::iequals(origin, web.admin_origin);
    std::string_view host = request.header("Host");
    if (host.empty()) return false;
    for (std::string_view scheme : {"http://", "https://"}) {
        if (origin.size() == scheme.size() + host.size() &&
            http::iequals(origin.substr(0, scheme.size()), scheme) &&
            http::iequals(origin.substr(scheme.size()), host))
            return true;
    }
    return false;
}

}  // namespace

bool unsafe_method(Method method) {
    return method == Method::post || method == Method::put || method == Method::patch ||
           method == Method::del;
}

std::string_view session_cookie(const http::Request& request, const ConsoleWeb& web) {
    if (request.fields == nullptr) return {};
    for (const auto& field : *request.fields) {
        if (!http::iequals(field.name, "Cookie")) continue;
        if (auto value = cookie_value(field.value, web.cookie_name())) return *value;
    }
    return {};
}

std::string session_cookie_header(const ConsoleWeb& web, std::string_view id) {
    std::string cookie(web.cookie_name());
    cookie.append("=").append(id).append("; Path=/; HttpOnly; SameSite=Strict");
    if (web.secure()) cookie.append("; Secure");
    return cookie;
}

std::string cleared_cookie_header(const ConsoleWeb& web) {
    std::string cookie(web.cookie_name());
    cookie.append("=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict");
    if (web.secure()) cookie.append("; Secure");
    return cookie;
}

std::string cross_site(const http::Request& request, const ConsoleWeb& web, bool refuse_same_site) {
    std::string_view site = request.header("Sec-Fetch-Site");
    if (http::iequals(site, "cross-site") || (refuse_same_site && http::iequals(site, "same-site")))
        return "the request came from another site (Sec-Fetch-Site: " + std::string(site) + ")";
    if (request.has_header("Origin") && !same_origin(request, web, request.header("Origin")))
        return "the request's Origin is not the console's";
    return {};
}

std::string csrf_failure(const http::Request& request, const ConsoleWeb& web,
                         const ConsoleSession& session) {
    std::string_view token = request.header("X-CSRF-Token");
    if (token.empty() || !same_secret(token, session.csrf_token))
        return "send X-CSRF-Token with the session's csrf_token";
    return cross_site(request, web, true);
}

}  // namespace refgate::admin
