// The console's session over HTTP: the session cookie found in Cookie fields, the cross-site
// checks (Sec-Fetch-Site, Origin) and the CSRF check of an unsafe request. Input: a line of
// flags ('p': POST rather than GET, 'S': refuse same-site), the admin origin (may be empty), the
// session's CSRF token, then header fields "Name: value", one a line.
// Invariants: a cookie found is a trimmed piece of a Cookie field without ';', and a plain
// `name=value` first in the first Cookie field is found; cross-site and same-site (when refused)
// requests and a foreign Origin are refused, a same-origin request without those passes; the
// CSRF check refuses a missing or wrong token and otherwise answers as the cross-site check, and
// never quotes the session's token.

#include <string>
#include <vector>

#include "../../src/admin/http/console_http.hpp"
#include "fuzz_check.hpp"

namespace {

using refgate::http::HeaderField;
using refgate::http::iequals;

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool plain_token(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

void check_cookie(const refgate::http::Request& request, const refgate::admin::ConsoleWeb& web,
                  const std::vector<HeaderField>& fields) {
    const std::string_view found = refgate::admin::session_cookie(request, web);
    if (!found.empty()) {
        FUZZ_CHECK(found.find(';') == std::string_view::npos);
        FUZZ_CHECK(trimmed(found) == found);
        bool inside = false;
        for (const auto& f : fields) {
            inside = inside || (iequals(f.name, "cookie") && f.value.find(found) != f.value.npos);
        }
        FUZZ_CHECK(inside);
    }
    for (const auto& f : fields) {
        if (!iequals(f.name, "cookie")) continue;
        const std::string prefix = std::string(web.cookie_name()) + "=";
        std::string_view first = f.value.substr(0, f.value.find(';'));
        if (first.starts_with(prefix) && plain_token(first.substr(prefix.size())))
            FUZZ_CHECK(found == first.substr(prefix.size()));
        break;  // only the first Cookie field's first pair is certain
    }
}

void check_cross_site(const refgate::http::Request& request, const refgate::admin::ConsoleWeb& web,
                      bool refuse_same_site) {
    const std::string why = refgate::admin::cross_site(request, web, refuse_same_site);
    const std::string_view site = request.header("Sec-Fetch-Site");
    if (iequals(site, "cross-site") || (refuse_same_site && iequals(site, "same-site")))
        FUZZ_CHECK(!why.empty());
    const bool has_origin = request.has_header("Origin");
    if (has_origin && !web.admin_origin.empty() &&
        !iequals(request.header("Origin"), web.admin_origin))
        FUZZ_CHECK(!why.empty());
    const bool site_ok = site.empty() || iequals(site, "same-origin") || iequals(site, "none");
    if (site_ok && (!has_origin || (!web.admin_origin.empty() &&
                                    iequals(request.header("Origin"), web.admin_origin))))
        FUZZ_CHECK(why.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto lines = refgate::fuzz::split_lines(refgate::fuzz::as_text(data, size), 4);
    const std::string flags(lines[0]);
    refgate::admin::ConsoleWeb web{std::string(lines[1])};
    refgate::admin::ConsoleSession session;
    session.csrf_token = std::string(lines[2]);

    std::vector<std::string> texts = refgate::fuzz::split_list(lines[3], '\n');
    std::vector<HeaderField> fields;
    for (const auto& line : texts) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        fields.push_back({std::string_view(line).substr(0, colon),
                          trimmed(std::string_view(line).substr(colon + 1))});
    }
    refgate::http::Request request;
    request.method = flags.find('p') != std::string::npos ? refgate::http::Method::post
                                                          : refgate::http::Method::get;
    request.target = "/api/v1/links";
    request.fields = &fields;

    check_cookie(request, web, fields);
    const bool refuse_same_site = flags.find('S') != std::string::npos;
    check_cross_site(request, web, refuse_same_site);

    const std::string why = refgate::admin::csrf_failure(request, web, session);
    const std::string_view token = request.header("X-CSRF-Token");
    if (token.empty() || token != session.csrf_token) {
        FUZZ_CHECK(!why.empty());
    } else {
        FUZZ_CHECK(why == refgate::admin::cross_site(request, web, true));
    }
    // Unless the token is text the messages hold anyway (their own words, the Sec-Fetch-Site).
    const std::string words =
        "send X-CSRF-Token with the session's csrf_token|the request came "
        "from another site (Sec-Fetch-Site: )|the request's Origin is not "
        "the console's|" +
        std::string(request.header("Sec-Fetch-Site"));
    if (!session.csrf_token.empty() && words.find(session.csrf_token) == std::string::npos)
        FUZZ_CHECK(why.find(session.csrf_token) == std::string::npos);
    return 0;
}
