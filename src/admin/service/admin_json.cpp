#include "refgate/admin/admin_json.hpp"

#include "refgate/admin/tokens.hpp"
#include "refgate/codec/import_diff.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/destination.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/time.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

Json or_null(const std::string& text) { return text.empty() ? Json() : Json(text); }

}  // namespace

Json partner_object(const PartnerRow& row) {
    return codec::stored_partner_object(row.partner, row.stamps);
}

Json link_object(const LinkRow& row) { return codec::stored_link_object(row.link, row.stamps); }

Json view_json(const TokenView& view) {
    return Json{{"name", view.name},
                {"role", view.role},
                {"created_at", view.created_at},
                {"last_used_on", or_null(view.last_used_on)},
                {"revoked_at", or_null(view.revoked_at)},
                {"version", view.version},
                {"scopes", view.scopes},
                {"partners", view.partners},
                {"domains", view.domains},
                {"expires_at", or_null(view.expires_at)}};
}

Json view_json(const CreatedToken& view) {
    Json created = view_json(view.token);
    created["token"] = view.text;
    return created;
}

namespace {

// A JSON array of strings each `valid`, or the error; absent: empty.
std::vector<std::string> string_list(const Json& body, const char* key,
                                     bool (*valid)(std::string_view), const char* rule,
                                     std::vector<codec::FieldError>& errors) {
    std::vector<std::string> out;
    auto it = body.find(key);
    if (it == body.end()) return out;
    bool ok = it->is_array();
    if (ok) {
        for (const auto& item : *it) {
            if (!item.is_string() || !valid(item.get_ref<const std::string&>())) {
                ok = false;
                break;
            }
            out.push_back(item.get<std::string>());
        }
    }
    if (!ok) {
        errors.push_back({key, rule});
        out.clear();
    }
    return out;
}

bool known_scope(std::string_view name) { return parse_scope(name).has_value(); }

}  // namespace

NewToken parse_new_token(const Json& body) {
    NewToken token;
    auto& errors = token.errors;
    for (const auto& [key, value] : body.items()) {
        if (key != "name" && key != "role" && key != "scopes" && key != "partners" &&
            key != "domains" && key != "expires_at")
            errors.push_back({key, "is not a token field"});
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
    if (body.contains("scopes")) {
        auto names = string_list(body, "scopes", known_scope,
                                 "must be a list of scopes such as links:read", errors);
        token.scopes = scope::none;
        for (const auto& n : names) *token.scopes |= *parse_scope(n);
    }
    token.reach.partners = string_list(body, "partners", domain::valid_slug,
                                       "must be a list of partner slugs", errors);
    token.reach.domains = string_list(body, "domains", domain::valid_dns_name,
                                      "must be a list of lower-case host names", errors);
    auto expires = body.find("expires_at");
    if (expires != body.end() && !expires->is_null()) {
        std::optional<domain::SysSeconds> at;
        if (expires->is_string())
            at = domain::parse_rfc3339(expires->get_ref<const std::string&>());
        if (at) {
            token.expires_at = domain::format_rfc3339(*at);
        } else {
            errors.push_back(
                {"expires_at", "must be an RFC 3339 time such as 2027-01-01T00:00:00Z"});
        }
    }
    return token;
}

Json view_json(const ImportReport& view) {
    return codec::import_result_json(view.diff, view.refused, view.dry_run, view.applied);
}

Json view_json(const AuditView& view) {
    auto object = [](const std::string& text) { return text.empty() ? Json() : Json::parse(text); };
    return Json{{"id", view.id},
                {"at", codec::format_micros(view.at_us)},
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
    for (const char* stored :
         {"scheduled_codes", "created_at", "updated_at", "version", "serving", "serving_reason",
          "fallback_branches", "human_clicks_so_far", "capped"})
        object.erase(stored);
    return object;
}

Json collection(Json items, Json next_cursor) {
    return Json{{"items", std::move(items)}, {"next_cursor", std::move(next_cursor)}};
}

}  // namespace refgate::admin
