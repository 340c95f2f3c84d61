#include "refgate/admin/admin_json.hpp"

#include <chrono>
#include <cstdio>

#include "refgate/codec/import_document.hpp"
#include "refgate/domain/time.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

void add_stamps(Json& object, const Stamps& stamps) {
    object["created_at"] = format_micros(stamps.created_us);
    object["updated_at"] = format_micros(stamps.updated_us);
    object["version"] = stamps.version;
}

Json or_null(const std::string& text) { return text.empty() ? Json() : Json(text); }

}  // namespace

std::string format_micros(std::int64_t unix_micros) {
    auto micros =
        std::chrono::sys_time<std::chrono::microseconds>(std::chrono::microseconds{unix_micros});
    auto seconds = std::chrono::floor<std::chrono::seconds>(micros);
    std::string text = format_rfc3339(seconds);  // "...T16:00:00Z"
    char fraction[8];
    std::snprintf(fraction, sizeof fraction, ".%06lld",
                  static_cast<long long>((micros - seconds).count()));
    text.insert(text.size() - 1, fraction);
    return text;
}

Json partner_object(const PartnerRow& row) {
    Json object = partner_to_json(row.partner);
    Json scheduled = Json::array();
    for (const auto& code : row.partner.scheduled_codes) {
        scheduled.push_back(
            {{"ref_code", code.ref_code}, {"valid_from", format_rfc3339(code.valid_from)}});
    }
    object["scheduled_codes"] = std::move(scheduled);
    add_stamps(object, row.stamps);
    return object;
}

Json link_object(const LinkRow& row) {
    Json object = link_to_json(row.link);
    add_stamps(object, row.stamps);
    return object;
}

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
    return Json{{"id", row.id},       {"at", format_micros(row.at_us)},
                {"actor", r.actor},   {"entity", r.entity},
                {"slug", r.slug},     {"action", r.action},
                {"before", r.before}, {"after", r.after}};
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
