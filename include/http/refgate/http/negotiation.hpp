#pragma once

// Content negotiation and validators (RFC 9110 sections 12 and 13): which of the media types a
// handler offers an Accept header picks, the languages of Accept-Language, strong ETags and
// If-None-Match.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace refgate::http {

// The index of the media type in `offered` (in the order preferred when the client does not
// care) that an Accept header picks: q-values, the most specific matching range wins. An absent
// or empty header accepts anything (0). nullopt: none of them is acceptable (406).
std::optional<std::size_t> negotiate_media_type(std::string_view accept,
                                                std::span<const std::string_view> offered);

// The language ranges of an Accept-Language header, best first (q=0 and "*" left out, invalid
// ones skipped), each normalised as normalize_locale does.
std::vector<std::string> accepted_languages(std::string_view accept_language);

// True when the Accept header asks for text/csv (before application/json, if both are named).
bool wants_csv(std::string_view accept);

// A strong validator for a body: "<version>-<16 hex digits>".
std::string strong_etag(std::int64_t version, std::string_view body);

// Whether an If-None-Match header matches `etag` (weak comparison, "*" matches anything).
bool if_none_match_matches(std::string_view header, std::string_view etag);

}  // namespace refgate::http
