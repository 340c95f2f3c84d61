// The reader's request target as the redirect path reads it: the channel tag, utm detection,
// query values and the path of an absolute-form target. Invariants: a channel is "direct", or
// "other" for a src that looks like an identifier (with at least one of its marks: '@', "%40",
// ten digits in a row, a 16-character piece that mixes letters and digits, a 24-character piece,
// a UUID), or a valid tag taken verbatim from a src parameter; query_has_utm agrees with a plain
// scan;
// query_value finds the first parameter of that name; percent_decode never grows the text; the
// path of an absolute-form target is a suffix of it that starts a path or query.

#include <algorithm>
#include <vector>

#include "fuzz_check.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/domain/request_host.hpp"
#include "refgate/http/request.hpp"

namespace {

// An independent restatement of looks_like_identifier()'s marks, written as plain scans.
bool identifier_mark(std::string_view v) {
    if (v.find('@') != std::string_view::npos || v.find("%40") != std::string_view::npos)
        return true;
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    auto hex = [&](char c) { return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
    for (std::size_t i = 0; i + 10 <= v.size(); ++i) {
        if (std::all_of(v.begin() + i, v.begin() + i + 10, digit)) return true;
    }
    std::vector<std::string_view> pieces;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= v.size(); ++i) {
        if (i == v.size() || v[i] == '.' || v[i] == '_' || v[i] == '-') {
            pieces.push_back(v.substr(start, i - start));
            start = i + 1;
        }
    }
    for (auto p : pieces) {
        bool letters = std::any_of(p.begin(), p.end(), letter);
        bool digits = std::any_of(p.begin(), p.end(), digit);
        if (p.size() >= 24 || (p.size() >= 16 && letters && digits)) return true;
    }
    // A UUID: five hex pieces of 8-4-4-4-12 in a row, joined by '-'.
    for (std::size_t i = 0, at = 0; i + 5 <= pieces.size(); at += pieces[i].size() + 1, ++i) {
        constexpr std::size_t kLengths[] = {8, 4, 4, 4, 12};
        bool uuid = true;
        std::size_t pos = at;
        for (std::size_t k = 0; k < 5 && uuid; ++k) {
            auto p = pieces[i + k];
            uuid = p.size() == kLengths[k] && std::all_of(p.begin(), p.end(), hex) &&
                   (k == 4 || v[pos + p.size()] == '-');
            pos += p.size() + 1;
        }
        if (uuid) return true;
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text = refgate::fuzz::as_text(data, size);
    auto params = refgate::fuzz::split_list(text, '&');
    if (!text.empty() && text.back() == '&') params.emplace_back();

    auto channel = refgate::domain::channel_of(text);
    std::optional<std::string_view> first_src;
    bool utm = false;
    for (const auto& p : params) {
        if (!first_src && p.starts_with("src=")) first_src = std::string_view(p).substr(4);
        utm = utm || p.starts_with("utm_");
    }
    auto tag = refgate::domain::read_channel(text);
    FUZZ_CHECK(tag.channel == channel);
    if (first_src && refgate::domain::looks_like_identifier(*first_src)) {
        FUZZ_CHECK(channel == "other" && tag.identifier);
        FUZZ_CHECK(identifier_mark(*first_src));
    } else if (first_src && refgate::domain::valid_channel(*first_src)) {
        FUZZ_CHECK(channel == *first_src);
        FUZZ_CHECK(!identifier_mark(*first_src));
    } else {
        FUZZ_CHECK(channel == "direct");
    }
    FUZZ_CHECK(refgate::domain::query_has_utm(text) == utm);

    // query_value decodes names: the first parameter whose decoded name is "src".
    std::optional<std::string> expected;
    for (const auto& p : params) {
        auto eq = p.find('=');
        if (refgate::domain::percent_decode(std::string_view(p).substr(0, eq)) != "src") continue;
        expected = eq == std::string::npos ? "" : refgate::domain::percent_decode(p.substr(eq + 1));
        break;
    }
    FUZZ_CHECK(refgate::domain::query_value(text, "src") == expected);
    FUZZ_CHECK(refgate::domain::percent_decode(text).size() <= text.size());

    if (auto path = refgate::http::absolute_form_path(text)) {
        FUZZ_CHECK(text.ends_with(*path));
        FUZZ_CHECK(path->empty() || path->front() == '/' || path->front() == '?' ||
                   path->front() == '#');
        auto authority = text.substr(text.find("://") + 3);
        authority = authority.substr(0, authority.size() - path->size());
        FUZZ_CHECK(!authority.empty());
        FUZZ_CHECK(authority.find_first_of("/?#") == std::string_view::npos);
        // Issue 46: the authority the redirect reads its host from is that very authority.
        FUZZ_CHECK(refgate::domain::absolute_form_authority(text) == authority);
    }
    // A request's host (issue 46): a piece of what was sent, its port and the root's dot gone;
    // letters, digits, '-' and '.' only, or an IPv6 literal in brackets; at most 253 bytes; and
    // the same host again when read back with a port.
    std::string_view host = refgate::domain::authority_host(text);
    if (!host.empty()) {
        FUZZ_CHECK(host.size() <= refgate::domain::kMaxRequestHost);
        FUZZ_CHECK(text.starts_with(host));
        FUZZ_CHECK(text.find('@') == std::string_view::npos);
        if (host.front() == '[') {
            FUZZ_CHECK(host.back() == ']');
            FUZZ_CHECK(host.find_first_not_of("0123456789abcdefABCDEF:.", 1) == host.size() - 1);
        } else {
            FUZZ_CHECK(host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-.") == std::string_view::npos);
        }
        std::string again = std::string(host) + ":8080";
        FUZZ_CHECK(refgate::domain::authority_host(again) == host || host.back() == '.');
        std::array<char, refgate::domain::kMaxRequestHost> lower{};
        auto lowered = refgate::domain::lower_host(host, lower);
        FUZZ_CHECK(lowered.size() == host.size());
        FUZZ_CHECK(lowered.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == std::string_view::npos);
    }
    return 0;
}
