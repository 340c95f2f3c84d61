// The reader's request target as the redirect path reads it: the channel tag, utm detection,
// query values and the path of an absolute-form target. Invariants: a channel is "direct" or a
// valid tag taken verbatim from a src parameter; query_has_utm agrees with a plain scan;
// query_value finds the first parameter of that name; percent_decode never grows the text; the
// path of an absolute-form target is a suffix of it that starts a path or query.

#include "fuzz_check.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/http/request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text = refgate::fuzz::as_text(data, size);
    auto params = refgate::fuzz::split_list(text, '&');
    if (!text.empty() && text.back() == '&') params.emplace_back();

    auto channel = refgate::channel_of(text);
    std::optional<std::string_view> first_src;
    bool utm = false;
    for (const auto& p : params) {
        if (!first_src && p.starts_with("src=")) first_src = std::string_view(p).substr(4);
        utm = utm || p.starts_with("utm_");
    }
    if (first_src && refgate::valid_channel(*first_src)) {
        FUZZ_CHECK(channel == *first_src);
    } else {
        FUZZ_CHECK(channel == "direct");
    }
    FUZZ_CHECK(refgate::query_has_utm(text) == utm);

    // query_value decodes names: the first parameter whose decoded name is "src".
    std::optional<std::string> expected;
    for (const auto& p : params) {
        auto eq = p.find('=');
        if (refgate::percent_decode(std::string_view(p).substr(0, eq)) != "src") continue;
        expected = eq == std::string::npos ? "" : refgate::percent_decode(p.substr(eq + 1));
        break;
    }
    FUZZ_CHECK(refgate::query_value(text, "src") == expected);
    FUZZ_CHECK(refgate::percent_decode(text).size() <= text.size());

    if (auto path = refgate::http::absolute_form_path(text)) {
        FUZZ_CHECK(text.ends_with(*path));
        FUZZ_CHECK(path->empty() || path->front() == '/' || path->front() == '?' ||
                   path->front() == '#');
        auto authority = text.substr(text.find("://") + 3);
        authority = authority.substr(0, authority.size() - path->size());
        FUZZ_CHECK(!authority.empty());
        FUZZ_CHECK(authority.find_first_of("/?#") == std::string_view::npos);
    }
    return 0;
}
