#pragma once

// Automatic fallback (issue 44): the one place where a link's branches are switched to and from
// its fallback, in the transaction that stores the check that caused it.

#include <cstdint>
#include <pqxx/pqxx>
#include <vector>

#include "refgate/linkcheck/health_store.hpp"

namespace refgate::linkcheck {

// Locks link `link_id`'s row for the rest of `tx`; a transaction that stores a check takes it
// first, before the health rows, as a deletion of the link does (its cascade reaches them).
void lock_link(pqxx::transaction_base& tx, std::int64_t link_id);

// Brings refgate_link_fallbacks of link `link_id` in line with its branches' confirmed health
// (as `tx` sees them; the caller holds lock_link): a link with auto_fallback and a fallback has a
// row per branch whose state is broken, unavailable or code_dropped; any other link none. Each
// branch switched either way gets its audit entry (actor "health", entity link, action update) in
// `tx`; the table's trigger bumps the snapshot version, so every instance serves the switch within
// the snapshot's second.
std::vector<FallbackChange> switch_fallbacks(pqxx::transaction_base& tx, std::int64_t link_id);

}  // namespace refgate::linkcheck
