// The admin service's country groups: each partner family's country fallbacks (AT -> DE), read,
// replaced as a whole and deleted, audited like partners and links. The snapshot follows them
// (the table's trigger NOTIFYs), as it follows an import's.

#include <algorithm>
#include <variant>

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_document.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kEntity = "country_group";

std::string no_group(const std::string& family) {
    return "no country group for the partner family '" + family + "'";
}

// {fallbacks} (a "family" the body names must be the path's), read as the import reads
// "country_groups": the same checks, the same field names.
std::variant<CountryGroup, std::vector<FieldError>> group_input(const std::string& family,
                                                                const Json& body) {
    Json item = body;
    if (auto it = item.find("family"); it != item.end() && *it != Json(family))
        return std::vector<FieldError>{{"family", "must be the family the path names"}};
    item["family"] = family;
    auto parsed = parse_import(Json{{"country_groups", Json::array({item})}});
    if (!parsed.issues.empty()) return field_errors(parsed.issues);
    return std::move(parsed.document.country_groups.front());
}

// The same mapping, in whatever order its countries were written.
bool same_fallbacks(CountryGroup a, CountryGroup b) {
    auto by_country = [](const CountryFallback& x, const CountryFallback& y) {
        return x.country < y.country;
    };
    std::sort(a.fallbacks.begin(), a.fallbacks.end(), by_country);
    std::sort(b.fallbacks.begin(), b.fallbacks.end(), by_country);
    return a == b;
}

}  // namespace

Outcome AdminService::list_country_groups() {
    return read([&](AdminRows& rows) {
        Json items = Json::array();
        for (const auto& row : rows.country_groups()) items.push_back(country_group_object(row));
        return object(OutcomeKind::ok, collection(std::move(items)));
    });
}

Outcome AdminService::get_country_group(const std::string& family) {
    return read([&](AdminRows& rows) {
        auto row = rows.country_group(family, RowLock::none);
        if (!row) return simple(OutcomeKind::not_found, no_group(family));
        return object(OutcomeKind::ok, country_group_object(*row));
    });
}

Outcome AdminService::put_country_group(const Actor& actor, const std::string& family,
                                        const PutPrecondition& pre, const Json& body) {
    auto input = group_input(family, body);
    if (auto* errors = std::get_if<std::vector<FieldError>>(&input))
        return invalid(std::move(*errors));
    CountryGroup group = std::get<CountryGroup>(std::move(input));
    return write([&](AdminRows& rows) {
        auto current = rows.country_group(family, RowLock::update);
        if (!current) {
            if (pre.if_match) return simple(OutcomeKind::stale, no_group(family) + " yet");
        } else {
            if (pre.if_none_match_any)
                return simple(OutcomeKind::stale, "the country group exists");
            if (!pre.if_match)
                return simple(OutcomeKind::precondition_required,
                              "send If-Match with the ETag of the country group you read");
            if (!precondition_holds(*pre.if_match, current->version))
                return simple(OutcomeKind::stale, "the country group changed; fetch it again");
            if (same_fallbacks(current->group, group))
                return object(OutcomeKind::ok, country_group_object(*current));  // no change
        }
        // The family's row is locked when it exists; one created meanwhile loses the race here.
        if (!rows.put_country_group(group, !current))
            return simple(OutcomeKind::stale, "the country group exists");
        Json after = country_group_object(*rows.country_group(family, RowLock::none));
        Json before = current ? country_group_object(*current) : Json();
        rows.insert_audit(audit_record(actor.name, kEntity, family, current ? "update" : "create",
                                       before, after));
        rows.commit();
        return object(current ? OutcomeKind::ok : OutcomeKind::created, std::move(after));
    });
}

Outcome AdminService::delete_country_group(const Actor& actor, const std::string& family,
                                           const Precondition& pre) {
    return write([&](AdminRows& rows) {
        auto current = rows.country_group(family, RowLock::update);
        if (!current) return simple(OutcomeKind::not_found, no_group(family));
        if (!precondition_holds(pre, current->version))
            return simple(OutcomeKind::stale, "the country group changed; fetch it again");
        rows.delete_country_group(family);
        Json before = country_group_object(*current);
        rows.insert_audit(audit_record(actor.name, kEntity, family, "delete", before, nullptr));
        rows.commit();
        return object(OutcomeKind::deleted, std::move(before));
    });
}

}  // namespace refgate::admin
