#pragma once

// Builds the Location of a redirect: the stored destination with the partner's referral
// parameter set once, the partner's fixed extra parameters, and (for links that allow it) the
// incoming request's utm_* parameters. Nothing from the request can change the referral code,
// the host or the path.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "refgate/domain/model.hpp"

namespace refgate::domain {

// `incoming_query` is the raw query of the request target (without '?'); it is only read when
// the link passes utm_* parameters through. `destination` must be a canonical, validated URL.
std::string build_location(std::string_view destination, const Partner& partner,
                           bool utm_passthrough = false, std::string_view incoming_query = {});
// The same with `code` as the referral code and, when the partner has a sub-ID parameter, that
// parameter set once to `token` (every other spelling of it, in any case, removed; without a
// token it is only removed, as build_location() does).
std::string build_placement_location(std::string_view destination, const Partner& partner,
                                     std::string_view code, std::optional<std::string_view> token,
                                     bool utm_passthrough = false,
                                     std::string_view incoming_query = {});

// Whether a partner's Locations depend on the click's channel: it has a sub-ID parameter or
// per-channel codes.
bool has_placements(const Partner& partner);

// Where the channel's parts sit in a placement Location precomputed for the channel "direct":
// its referral code (only when the partner has per-channel codes) and its sub-ID token (only
// when it has a sub-ID parameter), as offsets and lengths; an offset of 0 (a Location starts
// with its scheme) means no such part. Small: a link's entry holds one.
struct PlacementSlots {
    std::uint16_t code_at = 0;
    std::uint16_t code_length = 0;
    std::uint16_t token_at = 0;
    std::uint16_t token_length = 0;
    bool any() const { return code_at != 0 || token_at != 0; }
};
struct PlacedLocation {
    std::string location;  // for the channel "direct"
    PlacementSlots slots;
};
// build_placement_location() for the channel "direct" with the parts' places found; nullopt when
// the Location is too long for the offsets (64 KiB).
std::optional<PlacedLocation> placed_location(std::string_view destination, const Partner& partner,
                                              std::int64_t link_id, std::string_view slug);
// The Location of another channel: `location` with its code replaced by `code` (raw; encoded
// here as build_location() encodes it) and its token by `token` (written as it is: tokens are
// unreserved characters), into `out`. Allocates nothing when `out` has the room.
void write_placed_location(std::string& out, std::string_view location, const PlacementSlots& slots,
                           std::string_view code, std::string_view token);

// A snapshot builds the Locations of many links per partner; building each through Boost.URL
// took most of a build. What build_location() appends to a destination without a query
// ("ref=code&extra=value...", taken from build_location() itself) is computed once per partner;
// its text is empty when the partner's parameters are not plain enough (a repeated key, say).
struct LocationSuffix {
    std::string text;
};
LocationSuffix location_suffix(const Partner& partner);
// build_location(destination, partner), the same answer: a plain destination whose query names
// none of the partner's parameters gets the suffix appended; anything else goes through
// Boost.URL.
std::string build_location(std::string_view destination, const Partner& partner,
                           const LocationSuffix& suffix);

// True when the raw query has a parameter whose key starts with "utm_": the only case in which
// a link's precomputed Location must be rebuilt per request.
bool query_has_utm(std::string_view raw_query);

// The small HTML page sent with a redirect: a link to `location` labelled `label`.
std::string redirect_page(std::string_view location, std::string_view label);
// The same page appended to `out`, labelled `label` followed by `label_name` (both escaped): a
// redirect writes it into the response's reused body instead of keeping a page per link.
void append_redirect_page(std::string& out, std::string_view location, std::string_view label,
                          std::string_view label_name = {});

}  // namespace refgate::domain
