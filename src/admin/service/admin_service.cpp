#include "refgate/admin/admin_service.hpp"

#include <stdexcept>
#include <variant>

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/tokens.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

std::string no_disclosure(const std::string& key, const std::string& locale) {
    return "no disclosure '" + key + "' for locale '" + locale + "'";
}

// Throws std::invalid_argument on a bad name or a name that names a live token.
std::string insert_token(AdminRows& rows, const std::string& actor, const std::string& name,
                         Role role) {
    if (!valid_token_name(name))
        throw std::invalid_argument("token name must match [A-Za-z0-9][A-Za-z0-9_.@-]{0,63}");
    std::string token = generate_token();
    if (rows.lock_live_token(name))
        throw std::invalid_argument("a live token is already named '" + name + "'");
    std::string role_name(to_string(role));
    rows.insert_token(name, role_name, hash_token(token));
    rows.insert_audit(audit_record(actor, "token", name, "create", nullptr,
                                   Json{{"name", name}, {"role", role_name}}));
    return token;
}

bool revoke(AdminRows& rows, const std::string& actor, const std::string& name) {
    auto role = rows.revoke_token(name);
    if (!role) return false;
    Json before{{"name", name}, {"role", *role}};
    Json after = before;
    after["revoked"] = true;
    rows.insert_audit(audit_record(actor, "token", name, "revoke", before, after));
    return true;
}

// What GET returned may be sent back: its read-only fields are ignored, key and locale must
// name this resource. The import format's disclosure, or the field errors.
std::variant<Disclosure, std::vector<FieldError>> disclosure_input(const std::string& key,
                                                                   const std::string& locale,
                                                                   Json input) {
    for (const char* read_only : {"version", "updated_at", "updated_by", "html_given"})
        input.erase(read_only);
    std::vector<FieldError> errors;
    if (input.contains("key") && input["key"] != key)
        errors.push_back({"key", "must be the key of the URL"});
    if (input.contains("locale") &&
        (!input["locale"].is_string() ||
         normalize_locale(input["locale"].get<std::string>()) != locale))
        errors.push_back({"locale", "must be the locale of the URL"});
    if (!errors.empty()) return errors;
    input["key"] = key;
    input["locale"] = locale;
    auto parsed = parse_import(Json{{"disclosures", Json::array({input})}});
    if (!parsed.issues.empty()) return field_errors(parsed.issues);
    return parsed.document.disclosures.front();
}

}  // namespace

AdminService::AdminService(std::unique_ptr<AdminRepository> repository, AdminServiceOptions options)
    : repository_(std::move(repository)), options_(std::move(options)) {}

std::optional<StoredToken> AdminService::find_token(const std::string& hash_hex) {
    std::optional<StoredToken> found;
    repository_->run(AdminRepository::Access::write, [&](AdminRows& rows) {
        auto token = rows.live_token_by_hash(hash_hex);
        if (!token) return;
        auto role = parse_role(token->role);
        if (!role) return;
        rows.touch_token(token->id);
        rows.commit();
        found = StoredToken{{token->name, *role}, token->hash_hex};
    });
    return found;
}

Outcome AdminService::audit(const AuditFilter& filter) {
    return read([&](AdminRows& rows) {
        Json items = Json::array();
        for (const auto& row : rows.audit(filter)) items.push_back(audit_object(row));
        return object(OutcomeKind::ok, collection(std::move(items)));
    });
}

Outcome AdminService::list_tokens() {
    return read([](AdminRows& rows) {
        Json items = Json::array();
        for (const auto& t : rows.tokens("")) items.push_back(token_object(t));
        return object(OutcomeKind::ok, collection(std::move(items)));
    });
}

Outcome AdminService::create_token(const Actor& actor, const Json& body) {
    std::vector<FieldError> errors;
    for (const auto& [key, value] : body.items()) {
        if (key != "name" && key != "role") errors.push_back({key, "is not a token field"});
    }
    auto name = body.find("name");
    if (name == body.end() || !name->is_string() || !valid_token_name(name->get<std::string>()))
        errors.push_back({"name", "must match [A-Za-z0-9][A-Za-z0-9_.@-]{0,63}"});
    auto role_field = body.find("role");
    std::optional<Role> role;
    if (role_field != body.end() && role_field->is_string())
        role = parse_role(role_field->get<std::string>());
    if (!role) errors.push_back({"role", "must be viewer, editor or admin"});
    if (!errors.empty()) return invalid(std::move(errors));
    return write([&](AdminRows& rows) {
        std::string token;
        try {
            token = insert_token(rows, actor.name, name->get<std::string>(), *role);
        } catch (const std::invalid_argument& e) {
            return simple(OutcomeKind::conflict, e.what());
        }
        Json created = token_object(rows.tokens(name->get<std::string>()).at(0));
        rows.commit();
        created["token"] = token;
        return object(OutcomeKind::created, std::move(created));
    });
}

Outcome AdminService::revoke_token(const Actor& actor, const std::string& name,
                                   const Precondition& pre) {
    return write([&](AdminRows& rows) {
        auto live = rows.tokens(name);
        if (live.empty()) return simple(OutcomeKind::not_found, "no live token '" + name + "'");
        Json before = token_object(live.front());
        if (!precondition_holds(pre, live.front().id))
            return simple(OutcomeKind::stale, "that name names a newer token now");
        revoke(rows, actor.name, name);
        rows.commit();
        return object(OutcomeKind::deleted, std::move(before));
    });
}

std::string AdminService::create_token_text(const std::string& actor, const std::string& name,
                                            Role role) {
    std::string token;
    repository_->run(AdminRepository::Access::write, [&](AdminRows& rows) {
        token = insert_token(rows, actor, name, role);
        rows.commit();
    });
    return token;
}

std::vector<TokenInfo> AdminService::token_list() {
    std::vector<TokenInfo> tokens;
    repository_->run(AdminRepository::Access::read, [&](AdminRows& rows) {
        for (auto& t : rows.tokens(""))
            tokens.push_back({t.name, t.role, t.created_at, t.last_used_on, t.revoked_at, t.id});
    });
    return tokens;
}

bool AdminService::revoke_token_named(const std::string& actor, const std::string& name) {
    bool revoked = false;
    repository_->run(AdminRepository::Access::write, [&](AdminRows& rows) {
        revoked = revoke(rows, actor, name);
        if (revoked) rows.commit();
    });
    return revoked;
}

Outcome AdminService::list_disclosures() {
    return read([](AdminRows& rows) {
        Json items = Json::array();
        for (const auto& d : rows.disclosures()) items.push_back(disclosure_object(d));
        return object(OutcomeKind::ok, collection(std::move(items)));
    });
}

Outcome AdminService::get_disclosure(const std::string& key, const std::string& locale) {
    return read([&](AdminRows& rows) {
        auto current = rows.disclosure(key, locale);
        if (!current) return simple(OutcomeKind::not_found, no_disclosure(key, locale));
        return object(OutcomeKind::ok, disclosure_object(*current));
    });
}

Outcome AdminService::put_disclosure(const Actor& actor, const std::string& key,
                                     const std::string& locale, const PutPrecondition& pre,
                                     const Json& body) {
    auto input = disclosure_input(key, locale, body);
    if (auto* errors = std::get_if<std::vector<FieldError>>(&input))
        return invalid(std::move(*errors));
    Disclosure d = std::get<Disclosure>(std::move(input));
    return write([&](AdminRows& rows) {
        // Writers of one (key, locale) take turns, so versions are consecutive.
        rows.lock_disclosure(key, locale);
        auto current = rows.disclosure(key, locale);
        d.version = 1;
        if (!current) {
            if (pre.if_match)
                return simple(OutcomeKind::stale, no_disclosure(key, locale) + " yet");
        } else {
            const Disclosure& now = current->disclosure;
            if (pre.if_none_match_any) return simple(OutcomeKind::stale, "the disclosure exists");
            if (!pre.if_match)
                return simple(OutcomeKind::precondition_required,
                              "send If-Match with the ETag of the disclosure you read");
            if (!precondition_holds(*pre.if_match, now.version))
                return simple(OutcomeKind::stale, "the disclosure changed; fetch it again");
            if (now.text == d.text && now.html == d.html && now.html_given == d.html_given)
                return object(OutcomeKind::ok, disclosure_object(*current));  // nothing changed
            d.version = now.version + 1;
        }
        if (!rows.insert_disclosure(d, actor.name))
            return simple(OutcomeKind::stale, "the disclosure changed; fetch it again");
        Json after = disclosure_object(*rows.disclosure(key, locale));
        Json before = current ? disclosure_object(*current) : Json();
        rows.insert_audit(audit_record(actor.name, "disclosure", key + "/" + locale,
                                       current ? "update" : "create", before, after));
        rows.commit();
        return object(current ? OutcomeKind::ok : OutcomeKind::created, std::move(after));
    });
}

}  // namespace refgate::admin
