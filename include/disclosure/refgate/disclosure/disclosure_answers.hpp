#pragma once

// The answers the public disclosure endpoints send, precomputed once per snapshot: for the
// current version of each (key, locale) its text, HTML and JSON bodies, its history, and a strong
// validator for each.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "refgate/domain/disclosure.hpp"

namespace refgate::disclosure {

enum class DisclosureFormat { text, html, json };

// The representations, in the order preferred when the client does not care.
inline constexpr std::array<std::string_view, 3> kDisclosureMediaTypes = {"text/plain", "text/html",
                                                                          "application/json"};
inline constexpr std::string_view kDisclosureTypes = "text/plain, text/html, application/json";

// Picks the representation for an Accept header (RFC 9110 q-values, most specific range wins).
// An absent or empty header accepts anything. nullopt: none of ours is acceptable (406).
std::optional<DisclosureFormat> negotiate_format(std::string_view accept);

struct DisclosureAnswer {
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

// The answers for every entry of a set; the set must outlive them.
class DisclosureAnswers {
  public:
    DisclosureAnswers() = default;
    explicit DisclosureAnswers(const domain::DisclosureSet& set);

    // The answer for an entry of the set these were built from.
    const DisclosureAnswer& of(const domain::DisclosureEntry& entry) const;

  private:
    std::unordered_map<const domain::Disclosure*, DisclosureAnswer> answers_;
};

}  // namespace refgate::disclosure
