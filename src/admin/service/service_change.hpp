#pragma once

// What every PATCH and DELETE of a partner or link shares, inside the service's transaction.

#include <optional>
#include <string>
#include <string_view>

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_rows.hpp"

namespace refgate::admin {

// The object locked, If-Match checked, then `apply` makes the change (nullopt) or answers
// instead (nothing is committed then); the audit entry and the answer follow in the same
// transaction. `find(slug, lock)` reads a row, `shape(row)` makes its object.
template <typename Find, typename Shape, typename Apply>
Outcome change(AdminRows& rows, std::string_view entity, const Actor& actor,
               const std::string& slug, const Precondition& pre, std::string_view action,
               Find&& find, Shape&& shape, Apply&& apply) {
    auto row = find(slug, RowLock::update);
    if (!row)
        return simple(OutcomeKind::not_found, "no " + std::string(entity) + " '" + slug + "'");
    if (!precondition_holds(pre, row->stamps.version))
        return simple(OutcomeKind::stale,
                      "the " + std::string(entity) + " changed; fetch it again");
    if (std::optional<Outcome> answer = apply(*row)) return std::move(*answer);
    bool deleted = action == "delete";
    nlohmann::ordered_json before = shape(*row);
    nlohmann::ordered_json after =
        deleted ? nlohmann::ordered_json() : shape(*find(slug, RowLock::none));
    rows.insert_audit(
        audit_record(actor.name, std::string(entity), slug, std::string(action), before, after));
    rows.commit();
    return deleted ? object(OutcomeKind::deleted, std::move(before))
                   : object(OutcomeKind::ok, std::move(after));
}

}  // namespace refgate::admin
