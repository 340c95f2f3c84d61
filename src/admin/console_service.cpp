#include "refgate/admin/console_service.hpp"

#include <algorithm>
#include <stdexcept>

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/console_crypto.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::size_t kMaxPassword = 1024;
constexpr std::size_t kMinPassword = 10;
// A session's last use is written at most this often: a page of calls costs one UPDATE.
constexpr std::int64_t kTouchEveryUs = 60'000'000;

constexpr const char* kNameRule = "must be 1 to 64 characters of a-z, 0-9, '.', '_' and '-'";
constexpr const char* kRoleRule = "must be viewer, editor or admin";
constexpr const char* kPasswordRule = "must be a string of 10 to 1024 bytes";

std::int64_t micros(std::chrono::seconds s) { return s.count() * 1'000'000; }

std::string no_user(const std::string& name) { return "no user '" + name + "'"; }

// Inserts the user and its audit entry; false when the name is taken.
bool add_user(ConsoleRows& rows, const std::string& actor, const std::string& name, Role role,
              const std::string& hash) {
    if (!rows.insert_user(name, std::string(to_string(role)), hash)) return false;
    rows.insert_audit(
        {actor, "user", name, "create", nullptr, user_object(*rows.user(name, RowLock::none))});
    return true;
}

// The role of a request body's member, or an error.
std::optional<Role> role_field(const Json& value, std::vector<FieldError>& errors) {
    std::optional<Role> role;
    if (value.is_string()) role = parse_role(value.get<std::string>());
    if (!role) errors.push_back({"role", kRoleRule});
    return role;
}

std::optional<std::string> password_field(const Json& value, std::vector<FieldError>& errors) {
    if (value.is_string() && valid_password(value.get<std::string>()))
        return value.get<std::string>();
    errors.push_back({"password", kPasswordRule});
    return std::nullopt;
}

}  // namespace

bool valid_user_name(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    });
}

bool valid_password(std::string_view password) {
    return password.size() >= kMinPassword && password.size() <= kMaxPassword;
}

ConsoleService::ConsoleService(std::unique_ptr<ConsoleRepository> repository,
                               ConsoleOptions options)
    : repository_(std::move(repository)), options_(options) {}

std::int64_t ConsoleService::now_us() const {
    const Clock& clock = options_.clock != nullptr ? *options_.clock : system_clock_;
    return std::chrono::duration_cast<std::chrono::microseconds>(clock.now().time_since_epoch())
        .count();
}

ConsoleSession ConsoleService::view(const SessionRow& row) const {
    return {.user = row.user,
            .role = parse_role(row.role).value_or(Role::viewer),
            .csrf_token = row.csrf_token,
            .id_hash = row.id_hash,
            .expires_us = row.expires_us,
            .idle_expires_us = std::min(row.last_seen_us + micros(options_.idle), row.expires_us)};
}

std::optional<SignedIn> ConsoleService::sign_in(const std::string& name,
                                                std::string_view password) {
    std::optional<UserRow> user;
    if (valid_user_name(name) && password.size() <= kMaxPassword) {
        repository_->run(ConsoleRepository::Access::read,
                         [&](ConsoleRows& rows) { user = rows.user(name, RowLock::none); });
    }
    if (!user) {
        verify_nobody(password.substr(0, kMaxPassword));
        return std::nullopt;
    }
    if (!verify_password(user->password_hash, password) || user->disabled) return std::nullopt;
    std::string rehash = password_needs_rehash(user->password_hash) ? hash_password(password) : "";
    SignedIn in{.id = random_secret()};
    std::int64_t now = now_us();
    SessionRow row{.id_hash = secret_hash_hex(in.id),
                   .user = name,
                   .role = user->role,
                   .csrf_token = random_secret(),
                   .created_us = now,
                   .last_seen_us = now,
                   .expires_us = now + micros(options_.max)};
    bool live = false;
    repository_->run(ConsoleRepository::Access::write, [&](ConsoleRows& rows) {
        // Disabled, or given a new password, while the password was checked: refused.
        auto current = rows.user(name, RowLock::update);
        if (!current || current->disabled || current->password_hash != user->password_hash) return;
        row.role = current->role;
        if (!rehash.empty()) rows.rehash_user(name, rehash);
        rows.record_sign_in(name, now);
        rows.insert_session(row);
        rows.commit();
        live = true;
    });
    if (!live) return std::nullopt;
    in.session = view(row);
    return in;
}

std::optional<ConsoleSession> ConsoleService::session(std::string_view id) {
    if (!plausible_secret(id)) return std::nullopt;
    std::string hash = secret_hash_hex(id);
    std::int64_t now = now_us();
    std::optional<SessionRow> found;
    repository_->run(ConsoleRepository::Access::write, [&](ConsoleRows& rows) {
        auto row = rows.session(hash);
        if (!row || row->ended || row->user_disabled || !parse_role(row->role)) return;
        if (now >= row->expires_us || now >= row->last_seen_us + micros(options_.idle)) return;
        if (now - row->last_seen_us >= kTouchEveryUs) {
            rows.touch_session(hash, now);
            rows.commit();
            row->last_seen_us = now;
        }
        found = std::move(row);
    });
    if (!found) return std::nullopt;
    return view(*found);
}

bool ConsoleService::sign_out(const std::string& id_hash) {
    bool ended = false;
    std::int64_t now = now_us();
    repository_->run(ConsoleRepository::Access::write, [&](ConsoleRows& rows) {
        ended = rows.end_session(id_hash, now);
        rows.commit();
    });
    return ended;
}

Outcome ConsoleService::list_users() {
    Outcome outcome;
    repository_->run(ConsoleRepository::Access::read, [&](ConsoleRows& rows) {
        Json items = Json::array();
        for (const auto& user : rows.users()) items.push_back(user_object(user));
        outcome = object(OutcomeKind::ok, collection(std::move(items)));
    });
    return outcome;
}

Outcome ConsoleService::get_user(const std::string& name) {
    Outcome outcome = simple(OutcomeKind::not_found, no_user(name));
    repository_->run(ConsoleRepository::Access::read, [&](ConsoleRows& rows) {
        if (auto user = rows.user(name, RowLock::none))
            outcome = object(OutcomeKind::ok, user_object(*user));
    });
    return outcome;
}

Outcome ConsoleService::create_user(const Actor& actor, const Json& body) {
    std::vector<FieldError> errors;
    for (const auto& [key, value] : body.items()) {
        if (key != "name" && key != "role" && key != "password")
            errors.push_back({key, "is not a user field"});
    }
    auto name = body.find("name");
    if (name == body.end() || !name->is_string() || !valid_user_name(name->get<std::string>()))
        errors.push_back({"name", kNameRule});
    auto role = role_field(body.value("role", Json()), errors);
    std::optional<std::string> password;
    if (body.contains("password")) password = password_field(body["password"], errors);
    if (!errors.empty()) return invalid(std::move(errors));
    std::string generated = password ? std::string() : generate_password();
    std::string hash = hash_password(password ? *password : generated);
    Outcome outcome;
    repository_->run(ConsoleRepository::Access::write, [&](ConsoleRows& rows) {
        std::string user = name->get<std::string>();
        if (!add_user(rows, actor.name, user, *role, hash)) {
            outcome = simple(OutcomeKind::conflict, "a user is already named '" + user + "'");
            return;
        }
        Json created = user_object(*rows.user(user, RowLock::none));
        rows.commit();
        if (!generated.empty()) created["password"] = generated;
        outcome = object(OutcomeKind::created, std::move(created));
    });
    return outcome;
}

Outcome ConsoleService::update_user(const Actor& actor, const std::string& name,
                                    const Precondition& if_match, const Json& patch) {
    std::vector<FieldError> errors;
    std::optional<Role> role;
    std::optional<bool> disabled;
    std::optional<std::string> hash;
    for (const auto& [key, value] : patch.items()) {
        if (key == "role") {
            role = role_field(value, errors);
        } else if (key == "disabled") {
            if (value.is_boolean())
                disabled = value.get<bool>();
            else
                errors.push_back({"disabled", "must be true or false"});
        } else if (key == "password") {
            if (auto password = password_field(value, errors)) hash = hash_password(*password);
        } else if (key == "name") {
            if (value != name) errors.push_back({"name", "must be the name of the URL"});
        } else if (key != "created_at" && key != "updated_at" && key != "last_sign_in_at" &&
                   key != "version") {
            errors.push_back({key, "is not a user field"});
        }
    }
    if (!errors.empty()) return invalid(std::move(errors));
    std::optional<std::string> role_name;
    if (role) role_name = std::string(to_string(*role));
    return change_user(actor, name, if_match, role_name, disabled, hash);
}

Outcome ConsoleService::change_user(const Actor& actor, const std::string& name,
                                    const Precondition& pre, const std::optional<std::string>& role,
                                    std::optional<bool> disabled,
                                    const std::optional<std::string>& password_hash) {
    Outcome outcome;
    std::int64_t now = now_us();
    repository_->run(ConsoleRepository::Access::write, [&](ConsoleRows& rows) {
        auto row = rows.user(name, RowLock::update);
        if (!row) return void(outcome = simple(OutcomeKind::not_found, no_user(name)));
        if (!precondition_holds(pre, row->stamps.version))
            return void(outcome = simple(OutcomeKind::stale, "the user changed; fetch it again"));
        UserRow next = *row;
        next.role = role.value_or(row->role);
        next.disabled = disabled.value_or(row->disabled);
        if (password_hash) next.password_hash = *password_hash;
        if (next.role == row->role && next.disabled == row->disabled && !password_hash)
            return void(outcome = object(OutcomeKind::ok, user_object(*row)));
        rows.update_user(next);
        // A disabled user's sessions end; a new password ends every other session of the user.
        if (next.disabled)
            rows.end_sessions(name, "", now);
        else if (password_hash)
            rows.end_sessions(name, actor.session, now);
        Json after = user_object(*rows.user(name, RowLock::none));
        Json audited = after;
        if (password_hash) audited["password_changed"] = true;
        rows.insert_audit({actor.name, "user", name, "update", user_object(*row), audited});
        rows.commit();
        outcome = object(OutcomeKind::ok, std::move(after));
    });
    return outcome;
}

std::string ConsoleService::create_user_named(const std::string& actor, const std::string& name,
                                              Role role,
                                              const std::optional<std::string>& password) {
    if (!valid_user_name(name)) throw std::invalid_argument(std::string("--name ") + kNameRule);
    if (password && !valid_password(*password))
        throw std::invalid_argument("the password must be 10 to 1024 bytes");
    std::string generated = password ? std::string() : generate_password();
    std::string hash = hash_password(password ? *password : generated);
    repository_->run(ConsoleRepository::Access::write, [&](ConsoleRows& rows) {
        if (!add_user(rows, actor, name, role, hash))
            throw std::invalid_argument("a user is already named '" + name + "'");
        rows.commit();
    });
    return generated;
}

std::vector<UserRow> ConsoleService::user_list() {
    std::vector<UserRow> users;
    repository_->run(ConsoleRepository::Access::read,
                     [&](ConsoleRows& rows) { users = rows.users(); });
    return users;
}

bool ConsoleService::disable_user_named(const std::string& actor, const std::string& name) {
    auto outcome = change_user(Actor{.name = actor}, name, Precondition{.any = true}, std::nullopt,
                               true, std::nullopt);
    return outcome.kind != OutcomeKind::not_found;
}

std::optional<std::string> ConsoleService::set_password_named(
    const std::string& actor, const std::string& name, const std::optional<std::string>& password) {
    if (password && !valid_password(*password))
        throw std::invalid_argument("the password must be 10 to 1024 bytes");
    std::string generated = password ? std::string() : generate_password();
    auto outcome = change_user(Actor{.name = actor}, name, Precondition{.any = true}, std::nullopt,
                               std::nullopt, hash_password(password ? *password : generated));
    if (outcome.kind == OutcomeKind::not_found) return std::nullopt;
    return generated;
}

}  // namespace refgate::admin
