#include "refgate/domain/destination.hpp"

#include <idn2.h>

#include <algorithm>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <cstdint>
#include <cstdlib>

#include "refgate/domain/ascii.hpp"
#include "refgate/domain/ip_network.hpp"

namespace refgate::domain {
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

constexpr std::size_t kMaxHostLength = 253;
constexpr std::size_t kMaxLabelLength = 63;

// An A-label is valid when it decodes (RFC 3492) to a label that IDNA2008 turns back into
// exactly this A-label: "xn--www-evil" decodes, but to nothing a browser would spell that way.
bool valid_a_label(std::string_view label) {
    std::string input(label);
    char* unicode = nullptr;
    if (idn2_to_unicode_8z8z(input.c_str(), &unicode, 0) != IDN2_OK) return false;
    char* ascii = nullptr;
    int rc = idn2_lookup_u8(reinterpret_cast<const std::uint8_t*>(unicode),
                            reinterpret_cast<std::uint8_t**>(&ascii), IDN2_NONTRANSITIONAL);
    idn2_free(unicode);
    if (rc != IDN2_OK) return false;
    bool same = input == ascii;
    idn2_free(ascii);
    return same;
}

bool valid_label(std::string_view label) {
    if (label.empty() || label.size() > kMaxLabelLength) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
        bool ldh = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
        if (!ldh) return false;
    }
    return !label.starts_with("xn--") || valid_a_label(label);
}

bool blank(std::string_view text) {
    for (char c : text) {
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
    }
    return true;
}

UrlCheck fail(UrlRule rule, std::string message) { return UrlCheck{rule, {}, std::move(message)}; }

}  // namespace

std::string_view rule_name(UrlRule rule) {
    switch (rule) {
        case UrlRule::ok:
            return "ok";
        case UrlRule::empty:
            return "empty";
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
        case UrlRule::invalid_host:
            return "invalid_host";
    }
    return "not_a_url";
}

namespace {

// WHATWG URL (browsers) and libcurl read a host whose last label is a number ("4", "1.2.0x3") as
// an IPv4 address and connect to its dotted quad ("0.0.0.4"): the number forms they accept.
bool ends_in_number(std::string_view host) {
    std::string_view last = host.substr(host.rfind('.') + 1);
    if (last.starts_with("0x") || last.starts_with("0X")) {
        last.remove_prefix(2);
        return std::all_of(last.begin(), last.end(),
                           [](char c) { return ascii::hex_value(c) >= 0; });
    }
    return !last.empty() && std::all_of(last.begin(), last.end(), ascii::is_digit);
}

// An IPv4 address as every reader writes it back: four decimal parts of 0-255 without leading
// zeros (what parse_ip, inet_pton, accepts; the ':' test leaves out its IPv6 forms).
bool canonical_ipv4(std::string_view host) {
    return host.find(':') == std::string_view::npos && parse_ip(host).has_value();
}

}  // namespace

bool valid_dns_name(std::string_view host) {
    if (host.empty() || host.size() > kMaxHostLength) return false;
    // A name that readers would take for another address ("4" is 0.0.0.4) is refused: the host
    // checked against the allowed domains must be the one a browser connects to.
    if (ends_in_number(host) && !canonical_ipv4(host)) return false;
    std::size_t start = 0;
    while (start <= host.size()) {
        std::size_t end = host.find('.', start);
        if (end == std::string_view::npos) end = host.size();
        if (!valid_label(host.substr(start, end - start))) return false;
        start = end + 1;
    }
    return true;
}

std::string canonical_domain(std::string_view domain) {
    if (domain.empty() || domain.size() > kMaxHostLength || has_control(domain)) return {};
    std::string host = to_ascii_host(domain);
    if (!valid_dns_name(host)) return {};
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
    if (blank(url)) return fail(UrlRule::empty, "must not be empty");
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
    if (host.front() != '[' && !valid_dns_name(ascii_host))
        return fail(UrlRule::invalid_host, "has a host that is not a valid domain name");

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

}  // namespace refgate::domain
