#include "refgate/domain/disclosure.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "refgate/domain/ascii.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/domain/time.hpp"

namespace refgate::domain {
namespace {

constexpr std::size_t kMaxLocaleLength = 35;
constexpr std::size_t kMaxLocaleSubtags = 4;  // after the language

using ascii::is_alnum;
using ascii::is_alpha;
using ascii::to_lower;

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

std::vector<std::string> locale_chain(std::string_view locale) {
    std::vector<std::string> chain;
    while (!locale.empty()) {
        chain.emplace_back(locale);
        auto dash = locale.rfind('-');
        locale = dash == std::string_view::npos ? std::string_view{} : locale.substr(0, dash);
    }
    return chain;
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
        entry.history = std::span<const Disclosure>(versions_.data() + i, end - i);
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

std::string disclosure_fragment(const Disclosure& d) {
    std::string out =
        "<aside class=\"refgate-disclosure\" role=\"note\" data-rel=\"sponsored\" lang=\"";
    out.append(d.locale);  // normalised: letters, digits and '-' only
    out.append("\">");
    out.append(d.html);
    out.append("</aside>\n");
    return out;
}

void DisclosureSet::each(const std::function<void(const DisclosureEntry&)>& visit) const {
    for (const auto& [key, locales] : entries_) {
        for (const auto& [locale, entry] : locales) visit(entry);
    }
}

}  // namespace refgate::domain
