#pragma once

// Validation of the URLs an editor saves. Run when a destination is saved, never at click time:
// a stored destination is canonical and within its partner's allowed domains, so a redirect can
// never go anywhere an editor did not approve.

#include <string>
#include <string_view>
#include <vector>

namespace refgate::domain {

enum class UrlRule {
    ok,
    empty,
    too_long,
    control_characters,
    not_a_url,
    not_https,
    userinfo,
    no_host,
    host_not_allowed,
    invalid_host,  // not a name a browser can look up: see valid_dns_name()
};

struct UrlPolicy {
    bool allow_http = false;
    std::size_t max_length = 2048;
};

struct UrlCheck {
    UrlRule rule = UrlRule::ok;
    std::string canonical;  // when ok: lower-case scheme and host, IDN host as punycode,
                            // non-ASCII bytes percent-encoded
    std::string message;    // when not ok: a sentence for the editor

    bool ok() const { return rule == UrlRule::ok; }
};

// Checks a destination (or fallback) URL against the partner's allowed domains: the host must be
// one of them or a subdomain of one.
UrlCheck check_destination(std::string_view url, const std::vector<std::string>& allowed_domains,
                           const UrlPolicy& policy);

// The machine-readable name of a rule, e.g. "host_not_allowed".
std::string_view rule_name(UrlRule rule);

// Normalises an allowed domain ("Bücher.example" -> "xn--bcher-kva.example"); empty when invalid.
std::string canonical_domain(std::string_view domain);

// A lower-case ASCII host name that DNS and browsers accept as it is: LDH labels of 1 to 63
// bytes (no leading or trailing hyphen), none empty, at most 253 bytes in all, and every xn--
// label valid punycode of an IDNA2008 label (it converts back to itself).
bool valid_dns_name(std::string_view host);

bool host_within(std::string_view host, const std::vector<std::string>& allowed_domains);

}  // namespace refgate::domain
