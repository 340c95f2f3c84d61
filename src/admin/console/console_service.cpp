#include "refgate/admin/console_service.hpp"

#include <algorithm>
#include <stdexcept>

#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/console_crypto.hpp"
#include "refgate/admin/password_policy.hpp"
#include "service/outcomes.hpp"

namespace refgate::admin {

UserView view_of(const UserRow& row) {
    return {row.name, row.role, row.disabled, row.stamps, row.last_sign_in_us};
}
// The answer's ETag.
std::int64_t version_of(const UserView& view) { return view.stamps.version; }
std::int64_t version_of(const CreatedUser& view) { return view.user.stamps.version; }

namespace {

using Json = nlohmann::ordered_json;

// A wrong password that long is refused before it is hashed.
constexpr std::size_t kMaxPassword = kMaxPasswordBytes;
// A session's last use is written at most this often: a page of calls costs one UPDATE.
constexpr std::int64_t kTouchEveryUs = 60'000'000;

constexpr const char* kNameRule = "must be 1 to 64 characters of a-z, 0-9, '.', '_' and '-'";

std::int64_t micros(std::chrono::seconds s) { return s.count() * 1'000'000; }

std::string no_user(const std::string& name) { return "no user '" + name + "'"; }

// Inserts the user and its audit entry; false when the name is taken.
bool add_user(ConsoleRows& rows, const std::string& actor, const std::string& name, Role role,
              const std::string& hash) {
    if (!rows.insert_user(name, std::string(to_string(role)), hash)) return false;
    rows.insert_audit(audit_record(actor, "user", name, "create", nullptr,
                                   view_json(view_of(*rows.user(name, RowLock::none)))));
    return true;
}

// The CLI's check: std::invalid_argument naming the rule.
void require_good_password(const std::string& password, const std::string& name) {
    auto verdict = check_password(password, name);
    if (verdict != PasswordVerdict::ok)
        throw std::invalid_argument("the password " + std::string(password_rule(verdict)));
}

// A random password (24 characters of base64url) that passes the policy for `name`; a draw that
// happens to contain the name is drawn again.
std::string generated_password(const std::string& name) {
    for (;;) {
        std::string password = generate_password();
        if (check_password(password, name) == PasswordVerdict::ok) return password;
    }
}

// Why the change would leave no enabled admin, or hand an admin's own account away; "" when it
// may go ahead. `admins` are the enabled admins, locked.
std::string admin_guard(const Actor& actor, const UserRow& before, const UserRow& after,
                        const std::vector<std::string>& admins) {
    const std::string recovery =
        "an operator on the server can still do it with `refgate user disable " + before.name + "`";
    bool self = !actor.session.empty() && actor.name == "user:" + before.name;
    auto rank = [](const std::string& role) {
        return static_cast<int>(parse_role(role).value_or(Role::viewer));
    };
    if (self && after.disabled && !before.disabled)
        return "you cannot disable your own account; another admin can, or " + recovery;
    if (self && rank(after.role) < rank(before.role))
        return "you cannot lower your own role; another admin can";
    bool was_admin = !before.disabled && before.role == "admin";
    bool still_admin = !after.disabled && after.role == "admin";
    bool others = std::any_of(admins.begin(), admins.end(),
                              [&](const std::string& admin) { return admin != before.name; });
    if (was_admin && !still_admin && !others)
        return "'" + before.name + "' is the last enabled admin; make another user admin first (" +
               recovery + ", the recovery path)";
    return {};
}

}  // namespace

bool valid_user_name(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    });
}

ConsoleService::ConsoleService(std::unique_ptr<ConsoleRepository> repository,
                               ConsoleOptions options)
    : repository_(std::move(repository)), options_(options) {}

std::int64_t ConsoleService::now_us() const {
    const domain::Clock& clock = options_.clock != nullptr ? *options_.clock : system_clock_;
    return std::chrono::duration_cast<std::chrono::microseconds>(clock.now().time_since_epoch())
        .count();
}

ConsoleSession ConsoleService::view(const SessionRow& row) const {
    return {.user = row.user,
            .role = parse_role(row.role).value_or(Role::viewer),
            .csrf_token = row.csrf_token,
            .id_hash = row.id_hash,
            .expires_us = row.expires_us,
            .idle_expires_us = std::min(row.last_seen_us + micros(options_.idle), row.expires_us),
            .touch_due_us = row.last_seen_us + kTouchEveryUs};
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

Result<codec::Page<UserView>> ConsoleService::list_users() {
    codec::Page<UserView> page;
    repository_->run(ConsoleRepository::Access::read, [&](ConsoleRows& rows) {
        for (const auto& user : rows.users()) page.items.push_back(view_of(user));
    });
    return answered(OutcomeKind::ok, std::move(page));
}

Result<UserView> ConsoleService::get_user(const std::string& name) {
    Result<UserView> result = refused(OutcomeKind::not_found, no_user(name));
    repository_->run(ConsoleRepository::Access::read, [&](ConsoleRows& rows) {
        if (auto user = rows.user(name, RowLock::none))
            result = answered(OutcomeKind::ok, view_of(*user));
    });
    return result;
}

Result<CreatedUser> ConsoleService::create_user(const Actor& actor, const NewUser& command) {
    if (!command.errors.empty()) return refused(command.errors);
    const std::string& user = command.name;
    const std::optional<std::string>& password = command.password;
    std::string generated = password ? std::string() : generated_password(user);
    std::string hash = hash_password(password ? *password : generated);
    Result<CreatedUser> result;
    repository_->run(ConsoleRepository::Access::write, [&](ConsoleRows& rows) {
        if (!add_user(rows, actor.name, user, command.role, hash)) {
            result = refused(OutcomeKind::conflict, "a user is already named '" + user + "'");
            return;
        }
        CreatedUser created{view_of(*rows.user(user, RowLock::none)), generated};
        rows.commit();
        result = answered(OutcomeKind::created, std::move(created));
    });
    return result;
}

Result<UserView> ConsoleService::update_user(const Actor& actor, const std::string& name,
                                             const Precondition& if_match, const UserPatch& patch) {
    if (!patch.errors.empty()) return refused(patch.errors);
    UserChange change;
    if (patch.role) change.role = std::string(to_string(*patch.role));
    change.disabled = patch.disabled;
    if (patch.password) change.password_hash = hash_password(*patch.password);
    return change_user(actor, name, if_match, change, AdminGuard::refuse);
}

Result<UserView> ConsoleService::change_user(const Actor& actor, const std::string& name,
                                             const Precondition& pre, const UserChange& change,
                                             AdminGuard guard, bool* removed_last_admin) {
    Result<UserView> result;
    std::int64_t now = now_us();
    repository_->run(ConsoleRepository::Access::write, [&](ConsoleRows& rows) {
        // The enabled admins are locked before the user (always in this order, so two changes
        // cannot deadlock): two admins disabling each other at once cannot both go ahead.
        std::vector<std::string> admins;
        if (change.role || change.disabled) admins = rows.lock_enabled_admins();
        auto row = rows.user(name, RowLock::update);
        if (!row) return void(result = refused(OutcomeKind::not_found, no_user(name)));
        if (!precondition_holds(pre, row->stamps.version))
            return void(result = refused(OutcomeKind::stale, "the user changed; fetch it again"));
        UserRow next = *row;
        next.role = change.role.value_or(row->role);
        next.disabled = change.disabled.value_or(row->disabled);
        if (change.password_hash) next.password_hash = *change.password_hash;
        if (next.role == row->role && next.disabled == row->disabled && !change.password_hash)
            return void(result = answered(OutcomeKind::ok, view_of(*row)));
        std::string refusal = admin_guard(actor, *row, next, admins);
        if (!refusal.empty() && guard == AdminGuard::refuse)
            return void(result = refused(OutcomeKind::conflict, refusal));
        if (removed_last_admin != nullptr)
            *removed_last_admin = !refusal.empty() && row->role == "admin" && !row->disabled;
        rows.update_user(next);
        // A disabled user's sessions end; a new password ends every other session of the user.
        if (next.disabled)
            rows.end_sessions(name, "", now);
        else if (change.password_hash)
            rows.end_sessions(name, actor.session, now);
        UserView after = view_of(*rows.user(name, RowLock::none));
        Json audited = view_json(after);
        if (change.password_hash) audited["password_changed"] = true;
        rows.insert_audit(
            audit_record(actor.name, "user", name, "update", view_json(view_of(*row)), audited));
        rows.commit();
        result = answered(OutcomeKind::ok, std::move(after));
    });
    return result;
}

OwnPasswordChange ConsoleService::change_own_password(const ConsoleSession& session,
                                                      const PasswordChange& change) {
    if (!change.errors.empty()) return {OwnPasswordChange::Result::invalid, change.errors};

    std::optional<UserRow> user;
    repository_->run(ConsoleRepository::Access::read,
                     [&](ConsoleRows& rows) { user = rows.user(session.user, RowLock::none); });
    if (!user || user->disabled) return {OwnPasswordChange::Result::ended, {}};
    const std::string& given = change.current;
    if (given.size() > kMaxPassword || !verify_password(user->password_hash, given))
        return {OwnPasswordChange::Result::wrong_current, {}};
    if (!change.next) return {OwnPasswordChange::Result::invalid, {{"new", "must be a string"}}};
    if (auto error = password_error(*change.next, session.user, "new"))
        return {OwnPasswordChange::Result::invalid, {std::move(*error)}};

    std::string hash = hash_password(*change.next);
    std::int64_t now = now_us();
    auto result = OwnPasswordChange::Result::ended;
    repository_->run(ConsoleRepository::Access::write, [&](ConsoleRows& rows) {
        // Disabled, or given a new password by someone else, since the check: the session has
        // ended (both end every session).
        auto row = rows.user(session.user, RowLock::update);
        if (!row || row->disabled || row->password_hash != user->password_hash) return;
        UserRow next = *row;
        next.password_hash = hash;
        rows.update_user(next);
        rows.end_sessions(session.user, session.id_hash, now);
        Json after = view_json(view_of(*rows.user(session.user, RowLock::none)));
        after["password_changed"] = true;
        rows.insert_audit(audit_record("user:" + session.user, "user", session.user, "update",
                                       view_json(view_of(*row)), after));
        rows.commit();
        result = OwnPasswordChange::Result::changed;
    });
    return {result, {}};
}

std::string ConsoleService::create_user_named(const std::string& actor, const std::string& name,
                                              Role role,
                                              const std::optional<std::string>& password) {
    if (!valid_user_name(name)) throw std::invalid_argument(std::string("--name ") + kNameRule);
    if (password) require_good_password(*password, name);
    std::string generated = password ? std::string() : generated_password(name);
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

DisableResult ConsoleService::disable_user_named(const std::string& actor,
                                                 const std::string& name) {
    bool last_admin = false;
    auto outcome = change_user(Actor{.name = actor}, name, Precondition{.any = true},
                               UserChange{.disabled = true}, AdminGuard::allow, &last_admin);
    if (outcome.kind == OutcomeKind::not_found) return DisableResult::no_such_user;
    return last_admin ? DisableResult::disabled_last_admin : DisableResult::disabled;
}

std::optional<std::string> ConsoleService::set_password_named(
    const std::string& actor, const std::string& name, const std::optional<std::string>& password) {
    if (password) require_good_password(*password, name);
    std::string generated = password ? std::string() : generated_password(name);
    auto outcome =
        change_user(Actor{.name = actor}, name, Precondition{.any = true},
                    UserChange{.password_hash = hash_password(password ? *password : generated)},
                    AdminGuard::allow);
    if (outcome.kind == OutcomeKind::not_found) return std::nullopt;
    return generated;
}

}  // namespace refgate::admin
