#include "refgate/admin/admin_json.hpp"

#include "refgate/codec/import_document.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

Json or_null(const std::string& text) { return text.empty() ? Json() : Json(text); }

}  // namespace

Json partner_object(const PartnerRow& row) {
    return stored_partner_object(row.partner, row.stamps);
}

Json link_object(const LinkRow& row) { return stored_link_object(row.link, row.stamps); }

Json country_group_object(const CountryGroupRow& row) {
    Json j = country_group_to_json(row.group);
    j["updated_at"] = format_micros(row.updated_us);
    j["version"] = row.version;
    return j;
}

Json disclosure_object(const DisclosureRow& row) {
    const Disclosure& d = row.disclosure;
    return Json{{"key", d.key},
                {"locale", d.locale},
                {"text", d.text},
                {"html", d.html},
                {"html_given", d.html_given},
                {"version", d.version},
                {"updated_at", format_micros(row.created_us)},
                {"updated_by", row.created_by}};
}

Json disclosure_version_object(const DisclosureRow& row) {
    const Disclosure& d = row.disclosure;
    return Json{{"version", d.version},
                {"text", d.text},
                {"html", d.html},
                {"created_at", format_micros(row.created_us)},
                {"created_by", row.created_by}};
}

Json token_object(const TokenRow& row) {
    return Json{{"name", row.name},
                {"role", row.role},
                {"created_at", row.created_at},
                {"last_used_on", or_null(row.last_used_on)},
                {"revoked_at", or_null(row.revoked_at)},
                {"version", row.id}};
}

Json user_object(const UserRow& row) {
    return Json{{"name", row.name},
                {"role", row.role},
                {"disabled", row.disabled},
                {"created_at", format_micros(row.stamps.created_us)},
                {"updated_at", format_micros(row.stamps.updated_us)},
                {"last_sign_in_at",
                 row.last_sign_in_us ? Json(format_micros(*row.last_sign_in_us)) : Json()},
                {"version", row.stamps.version}};
}

Json audit_object(const AuditRow& row) {
    const AuditRecord& r = row.record;
    auto object = [](const std::string& text) { return text.empty() ? Json() : Json::parse(text); };
    return Json{{"id", row.id},
                {"at", format_micros(row.at_us)},
                {"actor", r.actor},
                {"entity", r.entity},
                {"slug", r.slug},
                {"action", r.action},
                {"before", object(r.before)},
                {"after", object(r.after)}};
}

AuditRecord audit_record(std::string actor, std::string entity, std::string slug,
                         std::string action, const Json& before, const Json& after) {
    auto text = [](const Json& j) { return j.is_null() ? std::string() : j.dump(); };
    return {std::move(actor),  std::move(entity), std::move(slug),
            std::move(action), text(before),      text(after)};
}

Json writable(Json object) {
    for (const char* stored : {"scheduled_codes", "created_at", "updated_at", "version"})
        object.erase(stored);
    return object;
}

Json collection(Json items, Json next_cursor) {
    return Json{{"items", std::move(items)}, {"next_cursor", std::move(next_cursor)}};
}

}  // namespace refgate::admin
