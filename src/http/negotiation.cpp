#include "refgate/http/negotiation.hpp"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "refgate/domain/ascii.hpp"
#include "refgate/domain/disclosure.hpp"

namespace refgate::http {
namespace {

// Ranges read from one Accept or Accept-Language header; the rest are ignored.
constexpr std::size_t kMaxRanges = 32;

using domain::ascii::to_lower;
using domain::ascii::trim_blanks;

// An RFC 9110 qvalue: "0", "0.5", "1", "1.000". nullopt when malformed.
std::optional<int> parse_qvalue(std::string_view text) {
    if (text.empty() || text.size() > 5 || (text[0] != '0' && text[0] != '1')) return std::nullopt;
    int thousandths = (text[0] - '0') * 1000;
    if (text.size() > 1) {
        if (text[1] != '.') return std::nullopt;
        int scale = 100;
        for (std::size_t i = 2; i < text.size(); ++i) {
            if (text[i] < '0' || text[i] > '9') return std::nullopt;
            thousandths += (text[i] - '0') * scale;
            scale /= 10;
        }
    }
    if (thousandths > 1000) return std::nullopt;
    return thousandths;
}

struct Range {
    std::string_view value;  // without parameters
    int q = 1000;            // thousandths
    std::size_t position = 0;
};

// Splits "a;q=0.5, b" into ranges; entries with a malformed q are skipped.
std::vector<Range> parse_ranges(std::string_view header) {
    std::vector<Range> ranges;
    std::size_t position = 0;
    while (!header.empty() && ranges.size() < kMaxRanges) {
        auto comma = header.find(',');
        std::string_view item = header.substr(0, comma);
        header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
        auto semi = item.find(';');
        Range range{trim_blanks(item.substr(0, semi)), 1000, position++};
        bool ok = !range.value.empty();
        while (ok && semi != std::string_view::npos) {
            item = item.substr(semi + 1);
            semi = item.find(';');
            std::string_view param = trim_blanks(item.substr(0, semi));
            if (param.size() >= 2 && to_lower(param[0]) == 'q' && param[1] == '=') {
                auto q = parse_qvalue(trim_blanks(param.substr(2)));
                if (q) {
                    range.q = *q;
                } else {
                    ok = false;
                }
            }
        }
        if (ok) ranges.push_back(range);
    }
    return ranges;
}

bool iequal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (to_lower(a[i]) != to_lower(b[i])) return false;
    }
    return true;
}

std::uint64_t fnv1a(std::string_view body) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : body) h = (h ^ c) * 1099511628211ull;
    return h;
}

}  // namespace

std::optional<std::size_t> negotiate_media_type(std::string_view accept,
                                                std::span<const std::string_view> offered) {
    if (offered.empty()) return std::nullopt;
    if (trim_blanks(accept).empty()) return 0;
    auto ranges = parse_ranges(accept);
    // Per type: the q of the most specific matching range. Ties between types go to the more
    // specific match, then to the range listed first, then to the order offered.
    std::optional<std::size_t> best;
    std::tuple<int, int, long> best_score{0, 0, 0};
    for (std::size_t index = 0; index < offered.size(); ++index) {
        std::string_view type = offered[index];
        std::string_view major = type.substr(0, type.find('/'));
        int specificity = 0;
        int q = 0;
        long position = 0;
        for (const auto& r : ranges) {
            int s = 0;
            if (iequal(r.value, type)) {
                s = 3;
            } else if (r.value.size() == major.size() + 2 && r.value.ends_with("/*") &&
                       iequal(r.value.substr(0, major.size()), major)) {
                s = 2;
            } else if (r.value == "*/*") {
                s = 1;
            }
            if (s > specificity) {
                specificity = s;
                q = r.q;
                position = -static_cast<long>(r.position);
            }
        }
        std::tuple<int, int, long> score{q, specificity, position};
        if (q > 0 && (!best || score > best_score)) {
            best = index;
            best_score = score;
        }
    }
    return best;
}

std::vector<std::string> accepted_languages(std::string_view accept_language) {
    auto ranges = parse_ranges(accept_language);
    std::stable_sort(ranges.begin(), ranges.end(),
                     [](const Range& a, const Range& b) { return a.q > b.q; });
    std::vector<std::string> out;
    for (const auto& r : ranges) {
        if (r.q == 0 || r.value == "*") continue;
        if (auto locale = domain::normalize_locale(r.value)) out.push_back(std::move(*locale));
    }
    return out;
}

bool wants_csv(std::string_view accept) {
    auto csv = accept.find("text/csv");
    if (csv == std::string_view::npos) return false;
    auto json = accept.find("application/json");
    return json == std::string_view::npos || csv < json;
}

std::string strong_etag(std::int64_t version, std::string_view body) {
    char digits[17];
    auto end = std::to_chars(digits, digits + sizeof digits, fnv1a(body), 16).ptr;
    std::string tag = "\"";
    tag.append(std::to_string(version));
    tag.push_back('-');
    tag.append(16 - static_cast<std::size_t>(end - digits), '0');
    tag.append(digits, end);
    tag.push_back('"');
    return tag;
}

bool if_none_match_matches(std::string_view header, std::string_view etag) {
    std::string_view bare = etag.starts_with("W/") ? etag.substr(2) : etag;
    while (!header.empty()) {
        auto comma = header.find(',');
        std::string_view tag = trim_blanks(header.substr(0, comma));
        header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
        if (tag == "*") return true;
        if (tag.starts_with("W/")) tag.remove_prefix(2);
        if (!tag.empty() && tag == bare) return true;
    }
    return false;
}

}  // namespace refgate::http
