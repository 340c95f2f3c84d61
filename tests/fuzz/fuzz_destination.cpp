// The destination validator. Input: a flags byte (bit 0: http allowed), then a line of allowed
// domains separated by ',', then the URL. Invariant: an accepted destination is a URL that
// Boost.URL parses, with the allowed scheme, no userinfo, a host that is a valid DNS name within
// the allowed domains, no control or non-ASCII bytes, and it is accepted again as itself; and a
// second parser, libcurl's URL API, reads the same scheme, host and port, and no user or password.

#include <curl/curl.h>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <string>

#include "fuzz_check.hpp"
#include "refgate/domain/destination.hpp"

namespace {

using refgate::fuzz::as_text;

// A part of the URL as libcurl reads it; empty when it has none.
std::string curl_part(CURLU* url, CURLUPart part) {
    char* text = nullptr;
    if (curl_url_get(url, part, &text, 0) != CURLUE_OK) return {};
    std::string out(text);
    curl_free(text);
    return out;
}

void check_with_curl(const std::string& url, const boost::urls::url_view& view) {
    CURLU* parsed = curl_url();
    FUZZ_CHECK(curl_url_set(parsed, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK);
    FUZZ_CHECK(curl_part(parsed, CURLUPART_SCHEME) == view.scheme());
    FUZZ_CHECK(curl_part(parsed, CURLUPART_HOST) == view.host());
    // The same port number ("0880" and "880" are one port).
    const std::string port = curl_part(parsed, CURLUPART_PORT);
    FUZZ_CHECK((port.empty() ? 0 : std::stoi(port)) == view.port_number());
    FUZZ_CHECK(curl_part(parsed, CURLUPART_USER).empty());
    FUZZ_CHECK(curl_part(parsed, CURLUPART_PASSWORD).empty());
    curl_url_cleanup(parsed);
}

void check_accepted(const refgate::domain::UrlCheck& check, const std::vector<std::string>& domains,
                    const refgate::domain::UrlPolicy& policy) {
    const std::string& url = check.canonical;
    for (unsigned char c : url) FUZZ_CHECK(c > 0x20 && c < 0x7f);
    auto parsed = boost::urls::parse_uri(url);
    FUZZ_CHECK(parsed.has_value());
    const boost::urls::url_view& view = *parsed;
    FUZZ_CHECK(view.scheme() == "https" || (policy.allow_http && view.scheme() == "http"));
    FUZZ_CHECK(!view.has_userinfo());
    FUZZ_CHECK(view.has_authority());
    std::string host(view.encoded_host());
    FUZZ_CHECK(host == view.host());  // nothing percent-encoded in the host
    FUZZ_CHECK(refgate::domain::valid_dns_name(host));
    FUZZ_CHECK(refgate::domain::host_within(host, domains));
    // What a browser connects to: the text between "//" and the first of / ? # or \ (WHATWG
    // treats a backslash as a slash in http and https URLs).
    auto start = url.find("://") + 3;
    auto authority = std::string_view(url).substr(start, url.find_first_of("/?#\\", start) - start);
    FUZZ_CHECK(authority == view.encoded_host_and_port());
    check_with_curl(url, view);

    auto again = refgate::domain::check_destination(url, domains, policy);
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again.canonical == url);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    refgate::domain::UrlPolicy policy{.allow_http = (data[0] & 1) != 0};
    auto parts = refgate::fuzz::split_lines(as_text(data + 1, size - 1), 2);
    std::vector<std::string> domains;
    for (const auto& d : refgate::fuzz::split_list(parts[0], ',')) {
        auto canonical = refgate::domain::canonical_domain(d);
        if (!canonical.empty()) {
            FUZZ_CHECK(refgate::domain::valid_dns_name(canonical));
            FUZZ_CHECK(refgate::domain::canonical_domain(canonical) == canonical);
            domains.push_back(canonical);
        }
    }
    auto check = refgate::domain::check_destination(parts[1], domains, policy);
    if (check.ok()) {
        check_accepted(check, domains, policy);
    } else {
        FUZZ_CHECK(check.canonical.empty());
        FUZZ_CHECK(!check.message.empty());
    }
    return 0;
}
