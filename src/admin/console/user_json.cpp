// The console users' JSON: the objects the API shows and the bodies it reads (admin_json.hpp).
// Apart from the other objects' JSON, so that what reads those needs no password policy.

#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/password_policy.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kUserNameRule = "must be 1 to 64 characters of a-z, 0-9, '.', '_' and '-'";

// The role of a request body's member, or an error.
std::optional<Role> role_field(const Json& value, std::vector<codec::FieldError>& errors) {
    std::optional<Role> role;
    if (value.is_string()) role = parse_role(value.get<std::string>());
    if (!role) errors.push_back({"role", "must be viewer, editor or admin"});
    return role;
}

// A new password for the user `name` from the body's member, or the rule it breaks.
std::optional<std::string> password_field(const Json& value, const std::string& name,
                                          std::vector<codec::FieldError>& errors) {
    if (!value.is_string()) {
        errors.push_back({"password", "must be a string"});
        return std::nullopt;
    }
    if (auto error = password_error(value.get_ref<const std::string&>(), name, "password")) {
        errors.push_back(std::move(*error));
        return std::nullopt;
    }
    return value.get<std::string>();
}

}  // namespace

Json view_json(const UserView& view) {
    return Json{{"name", view.name},
                {"role", view.role},
                {"disabled", view.disabled},
                {"created_at", codec::format_micros(view.stamps.created_us)},
                {"updated_at", codec::format_micros(view.stamps.updated_us)},
                {"last_sign_in_at",
                 view.last_sign_in_us ? Json(codec::format_micros(*view.last_sign_in_us)) : Json()},
                {"version", view.stamps.version}};
}

Json view_json(const CreatedUser& view) {
    Json created = view_json(view.user);
    if (!view.password.empty()) created["password"] = view.password;
    return created;
}

std::optional<codec::FieldError> password_error(const std::string& password,
                                                const std::string& name, const char* field) {
    auto verdict = check_password(password, name);
    if (verdict == PasswordVerdict::ok) return std::nullopt;
    return codec::FieldError{field, std::string(password_rule(verdict))};
}

NewUser parse_new_user(const Json& body) {
    NewUser user;
    auto& errors = user.errors;
    for (const auto& [key, value] : body.items()) {
        if (key != "name" && key != "role" && key != "password")
            errors.push_back({key, "is not a user field"});
    }
    auto name = body.find("name");
    if (name == body.end() || !name->is_string() || !valid_user_name(name->get<std::string>()))
        errors.push_back({"name", kUserNameRule});
    else
        user.name = name->get<std::string>();
    if (auto role = role_field(body.value("role", Json()), errors)) user.role = *role;
    if (body.contains("password"))
        user.password = password_field(body["password"], user.name, errors);
    return user;
}

UserPatch parse_user_patch(const std::string& name, const Json& patch) {
    UserPatch change;
    auto& errors = change.errors;
    for (const auto& [key, value] : patch.items()) {
        if (key == "role") {
            change.role = role_field(value, errors);
        } else if (key == "disabled") {
            if (value.is_boolean())
                change.disabled = value.get<bool>();
            else
                errors.push_back({"disabled", "must be true or false"});
        } else if (key == "password") {
            change.password = password_field(value, name, errors);
        } else if (key == "name") {
            if (value != name) errors.push_back({"name", "must be the name of the URL"});
        } else if (key != "created_at" && key != "updated_at" && key != "last_sign_in_at" &&
                   key != "version") {
            errors.push_back({key, "is not a user field"});
        }
    }
    return change;
}

PasswordChange parse_password_change(const Json& body) {
    PasswordChange change;
    auto& errors = change.errors;
    for (const auto& [key, value] : body.items()) {
        if (key != "current" && key != "new")
            errors.push_back({key, "is not a field of a password change"});
    }
    auto current = body.find("current");
    if (current == body.end() || !current->is_string())
        errors.push_back({"current", "is required (a string): your current password"});
    else
        change.current = current->get<std::string>();
    auto next = body.find("new");
    if (next == body.end())
        errors.push_back({"new", "is required (a string)"});
    else if (next->is_string())
        change.next = next->get<std::string>();
    return change;
}

}  // namespace refgate::admin
