// The redis+sentinel:// URL parser. Invariants: it never throws; an accepted URL has 1-16
// sentinels with valid hosts and ports, a master name without blanks or controls and a database
// 0-1024; written out again (credentials and name percent-encoded) it parses to the same URL;
// a refusal never quotes the password.

#include "fuzz_check.hpp"
#include "refgate/redis/sentinel_url.hpp"

namespace {

std::string encoded(std::string_view text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        out += '%';
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
    return out;
}

std::string written_out(const refgate::redis::SentinelUrl& url) {
    std::string text = refgate::redis::kSentinelScheme;
    if (!url.user.empty() || !url.password.empty())
        text += encoded(url.user) + ":" + encoded(url.password) + "@";
    for (std::size_t i = 0; i < url.sentinels.size(); ++i) {
        const auto& s = url.sentinels[i];
        if (i > 0) text += ',';
        text += s.host.find(':') == std::string::npos ? s.host : "[" + s.host + "]";
        text += ":" + std::to_string(s.port);
    }
    return text + "/" + encoded(url.master_name) + "/" + std::to_string(url.db);
}

bool same(const refgate::redis::SentinelUrl& a, const refgate::redis::SentinelUrl& b) {
    if (a.sentinels.size() != b.sentinels.size()) return false;
    for (std::size_t i = 0; i < a.sentinels.size(); ++i) {
        if (a.sentinels[i].host != b.sentinels[i].host) return false;
        if (a.sentinels[i].port != b.sentinels[i].port) return false;
    }
    return a.master_name == b.master_name && a.db == b.db && a.user == b.user &&
           a.password == b.password;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(refgate::fuzz::as_text(data, size));
    const std::string input =
        text.starts_with("redis+") ? text : refgate::redis::kSentinelScheme + text;
    const auto result = refgate::redis::parse_sentinel_url(input);

    if (std::holds_alternative<std::string>(result)) {
        // The same URL with a marker for its password (between the authority's first ':' and
        // last '@'): no refusal may quote it.
        const std::size_t start = input.find("//") + 2;
        const std::size_t end = input.find('/', start);
        const std::string_view authority = std::string_view(input).substr(start, end - start);
        const std::size_t at = authority.rfind('@');
        const std::size_t colon = authority.find(':');
        if (at == std::string_view::npos || colon == std::string_view::npos || colon > at ||
            input.find("Zq7Marker") != std::string::npos)
            return 0;
        const std::string marked =
            input.substr(0, start + colon + 1) + "Zq7Marker" + input.substr(start + at);
        const auto refused = refgate::redis::parse_sentinel_url(marked);
        if (const auto* error = std::get_if<std::string>(&refused))
            FUZZ_CHECK(error->find("Zq7Marker") == std::string::npos);
        return 0;
    }

    const auto& url = std::get<refgate::redis::SentinelUrl>(result);
    FUZZ_CHECK(!url.sentinels.empty() && url.sentinels.size() <= 16);
    for (const auto& s : url.sentinels) {
        FUZZ_CHECK(!s.host.empty());
        FUZZ_CHECK(s.host.find_first_of(",/@[]% ") == std::string::npos);
        FUZZ_CHECK(s.port >= 1 && s.port <= 65535);
    }
    FUZZ_CHECK(!url.master_name.empty());
    for (unsigned char c : url.master_name) FUZZ_CHECK(c > 0x20 && c != 0x7f);
    FUZZ_CHECK(url.db >= 0 && url.db <= 1024);

    const auto again = refgate::redis::parse_sentinel_url(written_out(url));
    FUZZ_CHECK(std::holds_alternative<refgate::redis::SentinelUrl>(again));
    FUZZ_CHECK(same(std::get<refgate::redis::SentinelUrl>(again), url));
    return 0;
}
