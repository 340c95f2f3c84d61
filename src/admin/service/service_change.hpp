#pragma once

// What every PATCH and DELETE of a partner or link shares, inside the service's transaction.

#include <optional>
#include <string>
#include <string_view>

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_rows.hpp"

namespace refgate::admin {

// The audit entry's key of a changed object: the name it was addressed by, except a link's, which
// is its key as stored (issue 46: `slug`, or `host/slug` on a domain), however ?domain= named it,
// as its creation was audited.
template <typename Row>
std::string audit_key(const Row&, const std::string& name) {
    return name;
}
inline std::string audit_key(const LinkRow& row, const std::string&) {
    return domain::link_key(row.link);
}

// The object locked, If-Match checked, then `apply` makes the change (nullopt) or answers
// instead (nothing is committed then); the audit entry and the answer follow in the same
// transaction. `find(slug, lock)` reads a row, `view_of(row)` makes its view.
template <typename Find, typename Apply>
auto change(AdminRows& rows, std::string_view entity, const Actor& actor, const std::string& slug,
            const Precondition& pre, std::string_view action, Find&& find, Apply&& apply)
    -> Result<decltype(view_of(*find(slug, RowLock::none)))> {
    using View = decltype(view_of(*find(slug, RowLock::none)));
    auto row = find(slug, RowLock::update);
    if (!row)
        return refused(OutcomeKind::not_found, "no " + std::string(entity) + " '" + slug + "'");
    if (!precondition_holds(pre, row->stamps.version))
        return refused(OutcomeKind::stale,
                       "the " + std::string(entity) + " changed; fetch it again");
    if (std::optional<Result<View>> answer = apply(*row)) return std::move(*answer);
    bool deleted = action == "delete";
    View before = view_of(*row);
    std::optional<View> after;
    if (!deleted) after = view_of(*find(slug, RowLock::none));
    rows.insert_audit(audit_record(actor.name, std::string(entity), audit_key(*row, slug),
                                   std::string(action), view_json(before),
                                   after ? view_json(*after) : nlohmann::ordered_json()));
    rows.commit();
    return deleted ? answered(OutcomeKind::deleted, std::move(before))
                   : answered(OutcomeKind::ok, std::move(*after));
}

}  // namespace refgate::admin
