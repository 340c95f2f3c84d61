#pragma once

// The affiliate disclosure texts publishers show beside paid picks: their versions as stored,
// locale tags, content and language negotiation, and the precomputed set that public requests
// are answered from. Pure logic; no I/O.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "refgate/domain/string_hash.hpp"

namespace refgate {

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

// The import-format object of a version: key, locale, text and (when the editor gave it) html.
nlohmann::ordered_json disclosure_to_json(const Disclosure& disclosure);
// All versions as the snapshot file keeps them. Throws std::runtime_error when malformed.
nlohmann::ordered_json disclosures_to_json(const std::vector<Disclosure>& versions);
std::vector<Disclosure> disclosures_from_json(const nlohmann::ordered_json& array);

// ---------------------------------------------------------------------------- negotiation

enum class DisclosureFormat { text, html, json };

// The representations, in the order preferred when the client does not care.
std::string_view media_type_of(DisclosureFormat format);
inline constexpr std::string_view kDisclosureTypes = "text/plain, text/html, application/json";

// Picks the representation for an Accept header (RFC 9110 q-values, most specific range wins).
// An absent or empty header accepts anything. nullopt: none of ours is acceptable (406).
std::optional<DisclosureFormat> negotiate_format(std::string_view accept);

// The language ranges of an Accept-Language header, best first (q=0 and "*" left out, invalid
// ones skipped), each normalised.
std::vector<std::string> accepted_languages(std::string_view accept_language);

// "de-at-x" -> {"de-at-x", "de-at", "de"}.
std::vector<std::string> locale_chain(std::string_view locale);

// ---------------------------------------------------------------------------- the set

// The current version of a (key, locale) with every answer precomputed.
struct DisclosureEntry {
    const Disclosure* current = nullptr;
    std::string text_body;  // text + "\n"
    std::string html_body;  // the inlinable fragment
    std::string json_body;  // {"key","locale","text","html","version","updated_at"}
    std::string text_etag;  // strong validators, one per representation
    std::string html_etag;
    std::string json_etag;
    std::string history_body;  // {"key","locale","items":[...]}, oldest first
    std::string history_etag;

    const std::string& body(DisclosureFormat format) const;
    const std::string& etag(DisclosureFormat format) const;
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

// A strong validator for a body: "<version>-<16 hex digits>".
std::string strong_etag(std::int64_t version, std::string_view body);

// Whether an If-None-Match header matches `etag` (weak comparison, "*" matches anything).
bool if_none_match_matches(std::string_view header, std::string_view etag);

}  // namespace refgate
