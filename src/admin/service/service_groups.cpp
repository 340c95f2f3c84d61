// The admin service's country groups: each partner family's country fallbacks (AT -> DE), read,
// replaced as a whole and deleted, audited like partners and links. The snapshot follows them
// (the table's trigger NOTIFYs), as it follows an import's.

#include <algorithm>

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/stored_objects.hpp"

namespace refgate::admin {
namespace {

using GroupResult = Result<codec::CountryGroupView>;

constexpr const char* kEntity = "country_group";

std::string no_group(const std::string& family) {
    return "no country group for the partner family '" + family + "'";
}

// The same mapping, in whatever order its countries were written.
bool same_fallbacks(domain::CountryGroup a, domain::CountryGroup b) {
    auto by_country = [](const domain::CountryFallback& x, const domain::CountryFallback& y) {
        return x.country < y.country;
    };
    std::sort(a.fallbacks.begin(), a.fallbacks.end(), by_country);
    std::sort(b.fallbacks.begin(), b.fallbacks.end(), by_country);
    return a == b;
}

}  // namespace

Result<codec::Page<codec::CountryGroupView>> AdminService::list_country_groups() {
    return read<Result<codec::Page<codec::CountryGroupView>>>([&](AdminRows& rows) {
        codec::Page<codec::CountryGroupView> page;
        for (const auto& row : rows.country_groups()) page.items.push_back(view_of(row));
        return answered(OutcomeKind::ok, std::move(page));
    });
}

GroupResult AdminService::get_country_group(const std::string& family) {
    return read<GroupResult>([&](AdminRows& rows) -> GroupResult {
        auto row = rows.country_group(family, RowLock::none);
        if (!row) return refused(OutcomeKind::not_found, no_group(family));
        return answered(OutcomeKind::ok, view_of(*row));
    });
}

GroupResult AdminService::put_country_group(const Actor& actor, const std::string& family,
                                            const PutPrecondition& pre,
                                            const codec::CountryGroupPut& put) {
    if (!put.errors.empty()) return refused(put.errors);
    const domain::CountryGroup& group = put.group;
    return write<GroupResult>([&](AdminRows& rows) -> GroupResult {
        auto current = rows.country_group(family, RowLock::update);
        if (!current) {
            if (pre.if_match) return refused(OutcomeKind::stale, no_group(family) + " yet");
        } else {
            if (pre.if_none_match_any)
                return refused(OutcomeKind::stale, "the country group exists");
            if (!pre.if_match)
                return refused(OutcomeKind::precondition_required,
                               "send If-Match with the ETag of the country group you read");
            if (!precondition_holds(*pre.if_match, current->version))
                return refused(OutcomeKind::stale, "the country group changed; fetch it again");
            if (same_fallbacks(current->group, group))
                return answered(OutcomeKind::ok, view_of(*current));  // no change
        }
        // The family's row is locked when it exists; one created meanwhile loses the race here.
        if (!rows.put_country_group(group, !current))
            return refused(OutcomeKind::stale, "the country group exists");
        codec::CountryGroupView after = view_of(*rows.country_group(family, RowLock::none));
        rows.insert_audit(audit_record(actor.name, kEntity, family, current ? "update" : "create",
                                       current ? view_json(view_of(*current)) : nullptr,
                                       view_json(after)));
        rows.commit();
        return answered(current ? OutcomeKind::ok : OutcomeKind::created, std::move(after));
    });
}

GroupResult AdminService::delete_country_group(const Actor& actor, const std::string& family,
                                               const Precondition& pre) {
    return write<GroupResult>([&](AdminRows& rows) -> GroupResult {
        auto current = rows.country_group(family, RowLock::update);
        if (!current) return refused(OutcomeKind::not_found, no_group(family));
        if (!precondition_holds(pre, current->version))
            return refused(OutcomeKind::stale, "the country group changed; fetch it again");
        rows.delete_country_group(family);
        codec::CountryGroupView before = view_of(*current);
        rows.insert_audit(
            audit_record(actor.name, kEntity, family, "delete", view_json(before), nullptr));
        rows.commit();
        return answered(OutcomeKind::deleted, std::move(before));
    });
}

}  // namespace refgate::admin
