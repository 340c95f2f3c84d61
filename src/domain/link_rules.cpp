#include "refgate/domain/link_rules.hpp"

namespace refgate::domain {
namespace {

bool is_lower_host_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

// RFC 3986 unreserved, sub-delims, ':', '@', '/' and '?': what a path, query or fragment may hold
// unencoded. No '%' (an escape would need checking), no '#', nothing outside ASCII.
bool is_plain_uri_char(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    switch (c) {
        case '-':
        case '.':
        case '_':
        case '~':
        case '!':
        case '$':
        case '&':
        case '\'':
        case '(':
        case ')':
        case '*':
        case '+':
        case ',':
        case ';':
        case '=':
        case ':':
        case '@':
        case '/':
        case '?':
            return true;
        default:
            return false;
    }
}

// Checks one URL field; adds an issue, or sets `canonical` when the canonical form differs.
void check_url(std::string_view field, const std::string& url, const Partner& partner,
               const UrlPolicy& policy, LinkValidation& result,
               std::optional<std::string>& canonical) {
    if (plainly_canonical(url, partner.allowed_domains, policy)) return;
    UrlCheck check = check_destination(url, partner.allowed_domains, policy);
    if (!check.ok()) {
        result.issues.push_back(
            {std::string(field), std::string(rule_name(check.rule)), std::move(check.message)});
    } else if (check.canonical != url) {
        canonical = std::move(check.canonical);
    }
}

}  // namespace

bool LinkValidation::servable() const {
    for (const auto& issue : issues) {
        if (issue.field != "fallback" && issue.field != "auto_fallback") return false;
    }
    return true;
}

// Checking a destination with check_destination() (libidn2, Boost.URL, several strings) took
// most of a snapshot's build. This fast path takes the common, plain case only: a lower-case
// https (or allowed http) URL whose host is a plain LDH name within the allowed domains, with no
// port, no user info, no escapes and nothing a canonical form would encode.
bool plainly_canonical(std::string_view url, const std::vector<std::string>& allowed_domains,
                       const UrlPolicy& policy) {
    if (url.size() > policy.max_length) return false;
    std::size_t host_start = 0;
    if (url.starts_with("https://")) {
        host_start = 8;
    } else if (policy.allow_http && url.starts_with("http://")) {
        host_start = 7;
    } else {
        return false;
    }
    std::size_t host_end = host_start;
    while (host_end < url.size() && is_lower_host_char(url[host_end])) ++host_end;
    if (host_end == host_start) return false;
    if (host_end < url.size() && url[host_end] != '/' && url[host_end] != '?' &&
        url[host_end] != '#') {
        return false;  // a port, user info or anything else: the full check
    }
    std::string_view host = url.substr(host_start, host_end - host_start);
    // Punycode labels need libidn2: the full check.
    if (host.starts_with("xn--") || host.find(".xn--") != std::string_view::npos) return false;
    if (!valid_dns_name(host)) return false;
    bool in_fragment = false;
    for (std::size_t i = host_end; i < url.size(); ++i) {
        char c = url[i];
        if (c == '#' && !in_fragment) {
            in_fragment = true;
        } else if (!is_plain_uri_char(c)) {
            return false;
        }
    }
    return host_within(host, allowed_domains);
}

LinkValidation validate_link(const Link& link, const Partner& partner, const UrlPolicy& policy) {
    LinkValidation result;
    if (!valid_slug(link.slug))
        result.issues.push_back({"slug", "invalid_slug", "must match [a-z0-9][a-z0-9-]{0,63}"});
    if (!valid_param_name(partner.ref_param)) {
        result.issues.push_back({"partner", "invalid_ref_param",
                                 "'" + partner.slug + "' has an invalid referral parameter"});
    }
    check_url("destination", link.destination, partner, policy, result, result.destination);
    if (link.fallback)
        check_url("fallback", *link.fallback, partner, policy, result, result.fallback);
    if (link.auto_fallback && !link.fallback)
        result.issues.push_back({"auto_fallback", "needs_fallback", "needs a fallback"});
    if (link.max_human_clicks && *link.max_human_clicks < 1)
        result.issues.push_back(
            {"max_human_clicks", "invalid_cap", "must be a positive integer or null"});
    return result;
}

}  // namespace refgate::domain
