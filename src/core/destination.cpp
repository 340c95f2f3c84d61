#include "refgate/core/destination.hpp"

#include <idn2.h>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <cstdlib>

namespace refgate {
namespace {

bool has_control(std::string_view text) {
    for (unsigned char c : text) {
        if (c < 0x20 || c == 0x7f) return true;
    }
    return false;
}

bool is_ascii(std::string_view text) {
    for (unsigned char c : text) {
        if (c >= 0x80) return false;
    }
    return true;
}

std::string ascii_lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

// IDNA2008 via libidn2 (Debian's libidn2-dev): the same mapping browsers apply to a typed host.
std::string to_ascii_host(std::string_view host) {
    if (is_ascii(host)) return ascii_lower(host);
    std::string input(host);
    char* output = nullptr;
    int rc = idn2_to_ascii_8z(input.c_str(), &output, IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
    if (rc != IDN2_OK) return {};
    std::string result(output);
    idn2_free(output);
    return result;
}

void percent_encode_non_ascii(std::string_view text, std::string& out) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    for (unsigned char c : text) {
        if (c >= 0x80 || c == ' ') {
            out.push_back('%');
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 0xf]);
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
}

UrlCheck fail(UrlRule rule, std::string message) { return UrlCheck{rule, {}, std::move(message)}; }

}  // namespace

std::string_view rule_name(UrlRule rule) {
    switch (rule) {
        case UrlRule::ok:
            return "ok";
        case UrlRule::too_long:
            return "too_long";
        case UrlRule::control_characters:
            return "control_characters";
        case UrlRule::not_a_url:
            return "not_a_url";
        case UrlRule::not_https:
            return "not_https";
        case UrlRule::userinfo:
            return "userinfo";
        case UrlRule::no_host:
            return "no_host";
        case UrlRule::host_not_allowed:
            return "host_not_allowed";
    }
    return "not_a_url";
}

std::string canonical_domain(std::string_view domain) {
    if (domain.empty() || domain.size() > 253 || has_control(domain)) return {};
    std::string host = to_ascii_host(domain);
    if (host.empty() || host.front() == '.' || host.back() == '.') return {};
    for (char c : host) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
        if (!ok) return {};
    }
    return host;
}

bool host_within(std::string_view host, const std::vector<std::string>& allowed_domains) {
    for (const auto& domain : allowed_domains) {
        if (host == domain) return true;
        if (host.size() > domain.size() && host.ends_with(domain) &&
            host[host.size() - domain.size() - 1] == '.') {
            return true;
        }
    }
    return false;
}

UrlCheck check_destination(std::string_view url, const std::vector<std::string>& allowed_domains,
                           const UrlPolicy& policy) {
    if (url.size() > policy.max_length) {
        return fail(UrlRule::too_long,
                    "is longer than " + std::to_string(policy.max_length) + " characters");
    }
    if (has_control(url)) return fail(UrlRule::control_characters, "contains control characters");

    // Split off the authority by hand first: the host may be an international name that the
    // RFC 3986 parser rejects until it is turned into punycode.
    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos)
        return fail(UrlRule::not_a_url, "is not an absolute URL");
    std::string scheme = ascii_lower(url.substr(0, scheme_end));
    if (scheme != "https" && !(scheme == "http" && policy.allow_http)) {
        return fail(UrlRule::not_https,
                    policy.allow_http ? "must use https or http" : "must use https");
    }
    std::size_t authority_start = scheme_end + 3;
    std::size_t authority_end = url.find_first_of("/?#", authority_start);
    if (authority_end == std::string_view::npos) authority_end = url.size();
    std::string_view authority = url.substr(authority_start, authority_end - authority_start);
    if (authority.find('@') != std::string_view::npos) {
        return fail(UrlRule::userinfo, "must not contain a user name or password");
    }
    std::string_view host = authority;
    std::string_view port;
    if (!host.empty() && host.front() == '[') {
        auto close = host.find(']');
        if (close == std::string_view::npos)
            return fail(UrlRule::not_a_url, "has a malformed host");
        port = host.substr(close + 1);
        host = host.substr(0, close + 1);
    } else if (auto colon = host.rfind(':'); colon != std::string_view::npos) {
        port = host.substr(colon);
        host = host.substr(0, colon);
    }
    if (host.empty()) return fail(UrlRule::no_host, "has no host");
    std::string ascii_host = host.front() == '[' ? ascii_lower(host) : to_ascii_host(host);
    if (ascii_host.empty())
        return fail(UrlRule::not_a_url, "has a host that is not a valid domain name");

    std::string canonical;
    canonical.reserve(url.size() + 16);
    canonical.append(scheme).append("://").append(ascii_host).append(port);
    percent_encode_non_ascii(url.substr(authority_end), canonical);

    auto parsed = boost::urls::parse_uri(canonical);
    if (!parsed) return fail(UrlRule::not_a_url, "is not a valid URL");
    const boost::urls::url_view& view = *parsed;
    if (view.has_userinfo())
        return fail(UrlRule::userinfo, "must not contain a user name or password");
    if (!view.has_authority() || view.encoded_host().empty())
        return fail(UrlRule::no_host, "has no host");
    if (view.has_port()) {
        auto digits = view.port();
        bool valid = !digits.empty() && digits.size() <= 5;
        unsigned long number = 0;
        for (char c : digits) number = number * 10 + static_cast<unsigned long>(c - '0');
        if (!valid || number == 0 || number > 65535)
            return fail(UrlRule::not_a_url, "has an invalid port");
    }
    // The host matched below must be the very host a browser will connect to.
    if (ascii_lower(view.encoded_host_and_port()) != ascii_host + std::string(port)) {
        return fail(UrlRule::not_a_url, "has a malformed host");
    }
    std::string host_for_match = ascii_host;
    if (host_for_match.front() == '[')
        host_for_match = host_for_match.substr(1, host_for_match.size() - 2);
    if (!host_within(host_for_match, allowed_domains)) {
        return fail(
            UrlRule::host_not_allowed,
            "has host " + host_for_match + ", which is not within the partner's allowed domains");
    }
    return UrlCheck{UrlRule::ok, std::move(canonical), {}};
}

}  // namespace refgate
