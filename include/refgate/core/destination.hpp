#pragma once

// Validation of the URLs an editor saves. Run when a destination is saved, never at click time:
// a stored destination is canonical and within its partner's allowed domains, so a redirect can
// never go anywhere an editor did not approve.

#include <string>
#include <string_view>
#include <vector>

namespace refgate {

enum class UrlRule {
    ok,
    too_long,
    control_characters,
    not_a_url,
    not_https,
    userinfo,
    no_host,
    host_not_allowed,
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

bool host_within(std::string_view host, const std::vector<std::string>& allowed_domains);

}  // namespace refgate
