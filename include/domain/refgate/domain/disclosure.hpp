#pragma once

// The affiliate disclosure texts publishers show beside paid picks: their versions as stored,
// locale tags, and the set that resolves a reader's locales to the current version. Pure logic;
// the answers' bodies and validators are the disclosure module's (disclosure_answers.hpp).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "refgate/domain/string_hash.hpp"

namespace refgate::domain {

// The publisher-wide disclosure's key. Any other key is a partner's slug.
inline constexpr std::string_view kGeneralDisclosure = "general";
inline constexpr std::size_t kMaxDisclosureText = 2000;  // bytes of plain text
inline constexpr std::size_t kMaxDisclosureHtml = 8000;  // bytes of editor HTML

// One version of the disclosure for a (key, locale).
struct Disclosure {
    std::string key;           // "general" or a partner slug
    std::string locale;        // normalised: "en", "de-at"
    std::string text;          // plain UTF-8
    std::string html;          // sanitised fragment
    bool html_given = false;   // false: html was derived from text
    std::int64_t version = 0;  // 1, 2, ... per (key, locale); 0 when not stored yet
    std::string updated_at;    // when this version took effect, RFC 3339 UTC; "" when not stored
};

// "de_AT", "DE-at" -> "de-at". A language of 2 or 3 letters, then up to 4 subtags of 1 to 8
// letters or digits; nullopt otherwise.
std::optional<std::string> normalize_locale(std::string_view tag);

// Plain text an editor may store: 1 to 2000 bytes, no control characters but tab and newline.
bool valid_disclosure_text(std::string_view text);

// The html to store for an editor's input: sanitised when given, derived from text otherwise.
std::string disclosure_html(std::string_view text, const std::optional<std::string>& html);

// The inlinable HTML fragment of a version: its html in an <aside> that names the locale.
std::string disclosure_fragment(const Disclosure& disclosure);

// "de-at-x" -> {"de-at-x", "de-at", "de"}.
std::vector<std::string> locale_chain(std::string_view locale);

// ---------------------------------------------------------------------------- the set

// The current version of a (key, locale), and every version of it, oldest first.
struct DisclosureEntry {
    const Disclosure* current = nullptr;
    std::span<const Disclosure> history;
};

class DisclosureSet {
  public:
    DisclosureSet() = default;
    // Versions in any order; html is sanitised again, so hand-edited rows cannot inject markup.
    explicit DisclosureSet(std::vector<Disclosure> versions);
    // Entries point into versions_: moving keeps them valid, copying would not.
    DisclosureSet(const DisclosureSet&) = delete;
    DisclosureSet& operator=(const DisclosureSet&) = delete;
    DisclosureSet(DisclosureSet&&) = default;
    DisclosureSet& operator=(DisclosureSet&&) = default;

    bool empty() const { return entries_.empty(); }
    std::size_t size() const { return entries_.size(); }
    const std::vector<Disclosure>& versions() const { return versions_; }

    const DisclosureEntry* find(std::string_view key, std::string_view locale) const;
    // Calls `visit` for every (key, locale), in no particular order.
    void each(const std::function<void(const DisclosureEntry&)>& visit) const;

    // The disclosure for a reader: for each locale in order (each with its fallbacks, then the
    // default locale), the partner's own text first, then the general one. `partner` may be
    // empty. nullptr when there is no disclosure at all for those keys.
    const DisclosureEntry* resolve(std::string_view partner,
                                   const std::vector<std::string>& locales,
                                   std::string_view default_locale) const;

  private:
    using ByLocale = std::unordered_map<std::string, DisclosureEntry, StringHash, std::equal_to<>>;

    std::vector<Disclosure> versions_;  // sorted by key, locale, version
    std::unordered_map<std::string, ByLocale, StringHash, std::equal_to<>> entries_;
};

}  // namespace refgate::domain
