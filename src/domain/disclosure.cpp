#include "refgate/domain/disclosure.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <stdexcept>
#include <tuple>

#include "refgate/domain/ascii.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/domain/time.hpp"

namespace refgate {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::size_t kMaxLocaleLength = 35;
constexpr std::size_t kMaxLocaleSubtags = 4;  // after the language
// Ranges read from one Accept or Accept-Language header; the rest are ignored.
constexpr std::size_t kMaxRanges = 32;

using ascii::is_alnum;
using ascii::is_alpha;
using ascii::to_lower;
using ascii::trim_blanks;

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

constexpr std::array kFormats{DisclosureFormat::text, DisclosureFormat::html,
                              DisclosureFormat::json};

std::uint64_t fnv1a(std::string_view body) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : body) h = (h ^ c) * 1099511628211ull;
    return h;
}

std::string fragment(const Disclosure& d) {
    std::string out =
        "<aside class=\"refgate-disclosure\" role=\"note\" data-rel=\"sponsored\" lang=\"";
    out.append(d.locale);  // normalised: letters, digits and '-' only
    out.append("\">");
    out.append(d.html);
    out.append("</aside>\n");
    return out;
}

}  // namespace

std::optional<std::string> normalize_locale(std::string_view tag) {
    if (tag.empty() || tag.size() > kMaxLocaleLength) return std::nullopt;
    std::string out;
    std::size_t subtags = 0;
    std::size_t start = 0;
    while (start <= tag.size()) {
        auto end = tag.find_first_of("-_", start);
        if (end == std::string_view::npos) end = tag.size();
        std::string_view part = tag.substr(start, end - start);
        if (subtags == 0) {
            if (part.size() < 2 || part.size() > 3 ||
                !std::all_of(part.begin(), part.end(), is_alpha))
                return std::nullopt;
        } else {
            if (part.empty() || part.size() > 8 ||
                !std::all_of(part.begin(), part.end(), is_alnum) || subtags > kMaxLocaleSubtags)
                return std::nullopt;
            out.push_back('-');
        }
        for (char c : part) out.push_back(to_lower(c));
        ++subtags;
        start = end + 1;
    }
    return out;
}

bool valid_disclosure_text(std::string_view text) {
    if (text.empty() || text.size() > kMaxDisclosureText) return false;
    for (unsigned char c : text) {
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
    }
    return true;
}

std::string disclosure_html(std::string_view text, const std::optional<std::string>& html) {
    return html ? sanitize_html(*html) : text_to_html(text);
}

Json disclosure_to_json(const Disclosure& d) {
    Json j{{"key", d.key}, {"locale", d.locale}, {"text", d.text}};
    if (d.html_given) j["html"] = d.html;
    return j;
}

Json disclosures_to_json(const std::vector<Disclosure>& versions) {
    Json array = Json::array();
    for (const auto& d : versions) {
        array.push_back({{"key", d.key},
                         {"locale", d.locale},
                         {"version", d.version},
                         {"text", d.text},
                         {"html", d.html},
                         {"html_given", d.html_given},
                         {"updated_at", d.updated_at}});
    }
    return array;
}

std::vector<Disclosure> disclosures_from_json(const Json& array) {
    if (!array.is_array()) throw std::runtime_error("disclosures must be a list");
    std::vector<Disclosure> versions;
    for (const auto& j : array) {
        Disclosure d;
        d.key = j.at("key").get<std::string>();
        auto locale = normalize_locale(j.at("locale").get<std::string>());
        if (!valid_slug(d.key) || !locale || *locale != j.at("locale").get<std::string>())
            throw std::runtime_error("disclosure " + d.key + ": bad key or locale");
        d.locale = *locale;
        d.version = j.at("version").get<std::int64_t>();
        d.text = j.at("text").get<std::string>();
        d.html = j.at("html").get<std::string>();
        d.html_given = j.value("html_given", false);
        d.updated_at = j.at("updated_at").get<std::string>();
        if (d.version < 1 || !parse_rfc3339(d.updated_at))
            throw std::runtime_error("disclosure " + d.key + ": bad version or updated_at");
        versions.push_back(std::move(d));
    }
    return versions;
}

std::string_view media_type_of(DisclosureFormat format) {
    switch (format) {
        case DisclosureFormat::text:
            return "text/plain";
        case DisclosureFormat::html:
            return "text/html";
        case DisclosureFormat::json:
            return "application/json";
    }
    return "text/plain";
}

std::optional<DisclosureFormat> negotiate_format(std::string_view accept) {
    if (trim_blanks(accept).empty()) return DisclosureFormat::text;
    auto ranges = parse_ranges(accept);
    // Per format: the q of the most specific matching range. Ties between formats go to the more
    // specific match, then to the range listed first, then to our order.
    std::optional<DisclosureFormat> best;
    std::tuple<int, int, long> best_score{0, 0, 0};
    for (DisclosureFormat format : kFormats) {
        std::string_view type = media_type_of(format);
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
            best = format;
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
        if (auto locale = normalize_locale(r.value)) out.push_back(std::move(*locale));
    }
    return out;
}

std::vector<std::string> locale_chain(std::string_view locale) {
    std::vector<std::string> chain;
    while (!locale.empty()) {
        chain.emplace_back(locale);
        auto dash = locale.rfind('-');
        locale = dash == std::string_view::npos ? std::string_view{} : locale.substr(0, dash);
    }
    return chain;
}

const std::string& DisclosureEntry::body(DisclosureFormat format) const {
    switch (format) {
        case DisclosureFormat::html:
            return html_body;
        case DisclosureFormat::json:
            return json_body;
        case DisclosureFormat::text:
            break;
    }
    return text_body;
}

const std::string& DisclosureEntry::etag(DisclosureFormat format) const {
    switch (format) {
        case DisclosureFormat::html:
            return html_etag;
        case DisclosureFormat::json:
            return json_etag;
        case DisclosureFormat::text:
            break;
    }
    return text_etag;
}

DisclosureSet::DisclosureSet(std::vector<Disclosure> versions) : versions_(std::move(versions)) {
    std::sort(versions_.begin(), versions_.end(), [](const Disclosure& a, const Disclosure& b) {
        return std::tie(a.key, a.locale, a.version) < std::tie(b.key, b.locale, b.version);
    });
    for (auto& d : versions_) d.html = sanitize_html(d.html);
    std::size_t i = 0;
    while (i < versions_.size()) {
        std::size_t end = i;
        while (end < versions_.size() && versions_[end].key == versions_[i].key &&
               versions_[end].locale == versions_[i].locale)
            ++end;
        const Disclosure& current = versions_[end - 1];
        DisclosureEntry entry;
        entry.current = &current;
        entry.text_body = current.text + "\n";
        entry.html_body = fragment(current);
        entry.json_body = Json{{"key", current.key},         {"locale", current.locale},
                               {"text", current.text},       {"html", current.html},
                               {"version", current.version}, {"updated_at", current.updated_at}}
                              .dump();
        Json items = Json::array();
        for (std::size_t k = i; k < end; ++k) {
            const Disclosure& d = versions_[k];
            items.push_back({{"version", d.version},
                             {"text", d.text},
                             {"html", d.html},
                             {"effective_at", d.updated_at},
                             {"until", k + 1 < end ? Json(versions_[k + 1].updated_at) : Json()}});
        }
        entry.history_body =
            Json{{"key", current.key}, {"locale", current.locale}, {"items", std::move(items)}}
                .dump();
        entry.text_etag = strong_etag(current.version, entry.text_body);
        entry.html_etag = strong_etag(current.version, entry.html_body);
        entry.json_etag = strong_etag(current.version, entry.json_body);
        entry.history_etag = strong_etag(current.version, entry.history_body);
        entries_[current.key].emplace(current.locale, std::move(entry));
        i = end;
    }
}

const DisclosureEntry* DisclosureSet::find(std::string_view key, std::string_view locale) const {
    auto k = entries_.find(key);
    if (k == entries_.end()) return nullptr;
    auto l = k->second.find(locale);
    return l == k->second.end() ? nullptr : &l->second;
}

const DisclosureEntry* DisclosureSet::resolve(std::string_view partner,
                                              const std::vector<std::string>& locales,
                                              std::string_view default_locale) const {
    auto try_locale = [&](std::string_view locale) -> const DisclosureEntry* {
        // "de-at" -> "de-at", "de"
        while (!locale.empty()) {
            if (!partner.empty() && partner != kGeneralDisclosure) {
                if (const auto* e = find(partner, locale)) return e;
            }
            if (const auto* e = find(kGeneralDisclosure, locale)) return e;
            auto dash = locale.rfind('-');
            locale = dash == std::string_view::npos ? std::string_view{} : locale.substr(0, dash);
        }
        return nullptr;
    };
    for (const auto& locale : locales) {
        if (const auto* e = try_locale(locale)) return e;
    }
    return try_locale(default_locale);
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

}  // namespace refgate
