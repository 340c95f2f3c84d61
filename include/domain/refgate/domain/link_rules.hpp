#pragma once

// What makes a link servable: the one check that both the snapshot builder and every save path
// (admin API, `refgate import`, partner edits) run, so that a write the store accepts can never
// make a live link vanish from the snapshot.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/domain/destination.hpp"
#include "refgate/domain/model.hpp"

namespace refgate::domain {

struct LinkIssue {
    std::string field;    // "slug", "partner", "destination" or "fallback"
    std::string rule;     // machine-readable, e.g. "empty", "invalid_host"
    std::string message;  // a sentence for the editor, e.g. "must not be empty"
};

struct LinkValidation {
    std::vector<LinkIssue> issues;
    // Set only where the canonical form differs from what the link holds: the common, already
    // canonical link costs no copy.
    std::optional<std::string> destination;
    std::optional<std::string> fallback;

    bool ok() const { return issues.empty(); }
    // Whether the link itself can be served (a bad fallback alone is dropped, the link kept).
    bool servable() const;
};

// Checks a link against its partner: slug, the partner's referral parameter, destination and
// fallback (see check_destination()).
LinkValidation validate_link(const Link& link, const Partner& partner, const UrlPolicy& policy);

// True only when check_destination(url) would accept `url` and return it unchanged as its
// canonical form. False says nothing: the caller asks check_destination().
bool plainly_canonical(std::string_view url, const std::vector<std::string>& allowed_domains,
                       const UrlPolicy& policy);

}  // namespace refgate::domain
