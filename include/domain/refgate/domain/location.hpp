#pragma once

// Builds the Location of a redirect: the stored destination with the partner's referral
// parameter set once, the partner's fixed extra parameters, and (for links that allow it) the
// incoming request's utm_* parameters. Nothing from the request can change the referral code,
// the host or the path.

#include <string>
#include <string_view>

#include "refgate/domain/model.hpp"

namespace refgate {

// `incoming_query` is the raw query of the request target (without '?'); it is only read when
// the link passes utm_* parameters through. `destination` must be a canonical, validated URL.
std::string build_location(std::string_view destination, const Partner& partner,
                           bool utm_passthrough = false, std::string_view incoming_query = {});

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

}  // namespace refgate
