// The configuration parsers. The first byte picks one; the rest is the text.
// parse_endpoint: an accepted endpoint prints as text that parses to the same endpoint.
// parse_public_base_url: an accepted URL is https with a host and no userinfo, query, fragment or
// trailing slash, and is accepted again as itself.
// redact_secrets: input lines are prefix, user, password, suffix, placed around
// "postgresql://user:password@db/refgate" and "password=..."; the password never survives, and
// redacting twice changes nothing more. (A password holding '*' could spell the ***.)

#include <boost/url/parse.hpp>

#include "fuzz_check.hpp"
#include "refgate/config/config.hpp"

namespace {

using refgate::fuzz::as_text;

void endpoint(const std::string& text) {
    auto e = refgate::config::parse_endpoint(text);
    if (!e) return;
    FUZZ_CHECK(!e->host.empty());
    auto again = refgate::config::parse_endpoint(e->to_string());
    FUZZ_CHECK(again && again->host == e->host && again->port == e->port);
}

void base_url(const std::string& text) {
    auto url = refgate::config::parse_public_base_url(text);
    if (!url) return;
    FUZZ_CHECK(!url->ends_with('/'));
    auto parsed = boost::urls::parse_absolute_uri(*url);
    FUZZ_CHECK(parsed.has_value());
    FUZZ_CHECK(parsed->scheme() == "https" || parsed->scheme() == "HTTPS" ||
               parsed->scheme_id() == boost::urls::scheme::https);
    FUZZ_CHECK(!parsed->host().empty() && !parsed->has_userinfo());
    FUZZ_CHECK(!parsed->has_query() && !parsed->has_fragment());
    FUZZ_CHECK(refgate::config::parse_public_base_url(*url) == url);
}

bool plain(std::string_view text, std::string_view forbidden) {
    for (unsigned char c : text) {
        if (c < 0x20 || forbidden.find(static_cast<char>(c)) != std::string_view::npos)
            return false;
    }
    return true;
}

void redact(std::string_view input) {
    auto parts = refgate::fuzz::split_lines(input, 4);
    const auto& prefix = parts[0];
    const auto& user = parts[1];
    const auto& password = parts[2];
    const auto& suffix = parts[3];
    if (password.size() < 4 || !plain(user, "/?#@: \t'") || !plain(password, "/?#@ \t&;'*") ||
        prefix.find("password=") != std::string_view::npos || !plain(prefix, "") ||
        !plain(suffix, ""))
        return;
    auto around = [&](std::string_view secret) {
        return std::string(prefix) + " postgresql://" + std::string(user) + ":" +
               std::string(secret) + "@db/refgate " + std::string(suffix);
    };
    auto keyword = [&](std::string_view secret) {
        return std::string(prefix) + " host=db password=" + std::string(secret) + " " +
               std::string(suffix);
    };
    // Only where the password appears nowhere else in the text (not even across a boundary).
    if (around("***").find(password) == std::string::npos) {
        auto out = refgate::config::redact_secrets(around(password));
        FUZZ_CHECK(out.find(password) == std::string::npos);
        FUZZ_CHECK(refgate::config::redact_secrets(out) == out);
    }
    if (keyword("***").find(password) == std::string::npos) {
        auto out = refgate::config::redact_secrets(keyword(password));
        FUZZ_CHECK(out.find(password) == std::string::npos);
        FUZZ_CHECK(refgate::config::redact_secrets(out) == out);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    std::string text(as_text(data + 1, size - 1));
    switch (data[0] % 3) {
        case 0:
            endpoint(text);
            break;
        case 1:
            base_url(text);
            break;
        default:
            redact(text);
            break;
    }
    return 0;
}
