#include "refgate/admin/admin_json.hpp"

#include "refgate/admin/tokens.hpp"
#include "refgate/codec/import_diff.hpp"
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

Json view_json(const TokenView& view) {
    return Json{{"name", view.name},
                {"role", view.role},
                {"created_at", view.created_at},
                {"last_used_on", or_null(view.last_used_on)},
                {"revoked_at", or_null(view.revoked_at)},
                {"version", view.version}};
}

Json view_json(const CreatedToken& view) {
    Json created = view_json(view.token);
    created["token"] = view.text;
    return created;
}

NewToken parse_new_token(const Json& body) {
    NewToken token;
    auto& errors = token.errors;
    for (const auto& [key, value] : body.items()) {
        if (key != "name" && key != "role") errors.push_back({key, "is not a token field"});
    }
    auto name = body.find("name");
    if (name != body.end() && name->is_string()) token.name = name->get<std::string>();
    if (name == body.end() || !name->is_string() || !valid_token_name(token.name))
        errors.push_back({"name", "must match [A-Za-z0-9][A-Za-z0-9_.@-]{0,63}"});
    auto role_field = body.find("role");
    std::optional<Role> role;
    if (role_field != body.end() && role_field->is_string())
        role = parse_role(role_field->get<std::string>());
    if (role) {
        token.role = *role;
    } else {
        errors.push_back({"role", "must be viewer, editor or admin"});
    }
    return token;
}

Json view_json(const ImportReport& view) {
    return import_result_json(view.diff, view.refused, view.dry_run, view.applied);
}

Json view_json(const AuditView& view) {
    auto object = [](const std::string& text) { return text.empty() ? Json() : Json::parse(text); };
    return Json{{"id", view.id},
                {"at", format_micros(view.at_us)},
                {"actor", view.actor},
                {"entity", view.entity},
                {"slug", view.slug},
                {"action", view.action},
                {"before", object(view.before)},
                {"after", object(view.after)}};
}

AuditRecord audit_record(std::string actor, std::string entity, std::string slug,
                         std::string action, const Json& before, const Json& after) {
    auto text = [](const Json& j) { return j.is_null() ? std::string() : j.dump(); };
    return {std::move(actor),  std::move(entity), std::move(slug),
            std::move(action), text(before),      text(after)};
}

Json writable(Json object) {
    for (const char* stored : {"scheduled_codes", "created_at", "updated_at", "version", "serving",
                               "serving_reason", "fallback_branches"})
        object.erase(stored);
    return object;
}

Json collection(Json items, Json next_cursor) {
    return Json{{"items", std::move(items)}, {"next_cursor", std::move(next_cursor)}};
}

}  // namespace refgate::admin
