#pragma once

// What a reader of a link gets at a given moment, from the same rules the redirect and the
// snapshot use: the partner's code in effect then and the Location build_location() makes.

#include <optional>
#include <string>

#include "refgate/domain/model.hpp"
#include "refgate/domain/time.hpp"

namespace refgate::domain {

// Scheduled codes whose moment has come replace the partner's code and, where they name them,
// its channel codes (the latest wins) and leave the schedule; the rest stay, sorted by
// valid_from. True when a switch took over.
bool apply_due_codes(Partner& partner, SysSeconds now);

// The Location a reader of `link` is sent to at `now` (no incoming query): the 302's for an
// active, unexpired link of an active partner, the fallback otherwise; nullopt when the reader
// gets 410. `link.destination` must be canonical and validated.
std::optional<std::string> reader_location(const Link& link, Partner partner, SysSeconds now);

}  // namespace refgate::domain
