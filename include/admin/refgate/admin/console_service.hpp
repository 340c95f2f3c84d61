#pragma once

// The console's people and their sessions: sign-in with a name and password, sessions with an
// idle and an absolute expiry, and the users an admin manages (API and CLI alike, audited as
// entity "user", never with the password hash). No SQL and no HTTP here.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/admin/admin_store.hpp"
#include "refgate/admin/console_rows.hpp"
#include "refgate/domain/clock.hpp"

namespace refgate::admin {

struct ConsoleOptions {
    std::chrono::seconds idle{30 * 60};      // a session unused this long has ended
    std::chrono::seconds max{12 * 60 * 60};  // and every session ends this long after sign-in
    const domain::Clock* clock = nullptr;    // none: the system clock
};

// A live session as the API shows it.
struct ConsoleSession {
    std::string user;
    Role role = Role::viewer;
    std::string csrf_token;
    std::string id_hash;
    std::int64_t expires_us = 0;
    std::int64_t idle_expires_us = 0;
    std::int64_t touch_due_us = 0;  // from then on, a use is noted (and moves the idle expiry)
};

struct SignedIn {
    std::string id;  // the cookie's value; shown once, never stored
    ConsoleSession session;
};

// 1 to 64 characters of [a-z0-9._-]. Passwords: refgate/admin/password_policy.hpp.
bool valid_user_name(std::string_view name);

// What `refgate user disable` did: the last enabled admin may be disabled from the server (the
// recovery path), never through the API.
enum class DisableResult { no_such_user, disabled, disabled_last_admin };

// A console user as the API shows it; never the password's hash.
struct UserView {
    std::string name;
    std::string role;
    bool disabled = false;
    codec::Stamps stamps;
    std::optional<std::int64_t> last_sign_in_us;
};

// A user just created, with the password the server made (empty: the request gave one).
struct CreatedUser {
    UserView user;
    std::string password;
};

// POST /users: {name, role, password?}, the password checked against the policy.
struct NewUser {
    std::string name;
    Role role = Role::viewer;
    std::optional<std::string> password;  // none: the server makes one
    std::vector<codec::FieldError> errors;
};

// PATCH /users/{name}: a merge patch of {role, disabled, password}; what it leaves is none.
struct UserPatch {
    std::optional<Role> role;
    std::optional<bool> disabled;
    std::optional<std::string> password;  // checked against the policy for the user's name
    std::vector<codec::FieldError> errors;
};

// PUT /session/password: {current, new}. The new password is checked once the current one
// matched: none when it is not a string.
struct PasswordChange {
    std::string current;
    std::optional<std::string> next;
    std::vector<codec::FieldError> errors;
};

// A user's change of their own password (PUT /api/v1/session/password).
struct OwnPasswordChange {
    enum class Result {
        changed,        // the other sessions of the user have ended
        invalid,        // `errors` names the fields ("new": the rule it breaks)
        wrong_current,  // counts as a failed sign-in
        ended           // the user was disabled or given a new password meanwhile
    };
    Result result = Result::invalid;
    std::vector<codec::FieldError> errors;
};

// Methods throw StoreError when the database fails. Thread-safe.
class ConsoleService {
  public:
    explicit ConsoleService(std::unique_ptr<ConsoleRepository> repository,
                            ConsoleOptions options = {});

    // A new session with a new random id; nullopt when the name is unknown, the user disabled
    // or the password wrong (the same time is spent on each).
    std::optional<SignedIn> sign_in(const std::string& name, std::string_view password);
    // The live session of a cookie's id, noted as used (at most once a minute); nullopt when it
    // is unknown, ended, idle or past its end, or its user is disabled.
    std::optional<ConsoleSession> session(std::string_view id);
    // Ends the session; false when it had ended.
    bool sign_out(const std::string& id_hash);

    Result<codec::Page<UserView>> list_users();
    Result<UserView> get_user(const std::string& name);
    // The answer carries the password when the server made it.
    Result<CreatedUser> create_user(const Actor& actor, const NewUser& user);
    // Disabling ends the user's sessions, a new password the user's sessions but the caller's
    // own. A conflict when it would disable or demote the caller's own account, or leave no
    // enabled admin.
    Result<UserView> update_user(const Actor& actor, const std::string& name,
                                 const Precondition& if_match, const UserPatch& patch);
    // From the session's own user: the current password must match, the new one pass the
    // policy; every other session of the user ends.
    OwnPasswordChange change_own_password(const ConsoleSession& session,
                                          const PasswordChange& change);

    // The CLI's commands: the same rows and audit entries as the API's. Throw
    // std::invalid_argument on a bad name, role or password (naming the rule it breaks), or a
    // name that is taken.
    // create_user_named returns the generated password, or "" when one was given.
    std::string create_user_named(const std::string& actor, const std::string& name, Role role,
                                  const std::optional<std::string>& password);
    std::vector<UserRow> user_list();
    // Disables any user, the last enabled admin included (the recovery path when no admin can
    // sign in, or one must be locked out at once).
    DisableResult disable_user_named(const std::string& actor, const std::string& name);
    // nullopt when there is no such user; else the generated password, or "" when one was given.
    std::optional<std::string> set_password_named(const std::string& actor, const std::string& name,
                                                  const std::optional<std::string>& password);

  private:
    // What change_user sets; nullopt leaves it.
    struct UserChange {
        std::optional<std::string> role;
        std::optional<bool> disabled;
        std::optional<std::string> password_hash;
    };
    // Whether change_user refuses (409) a change that leaves no enabled admin or disables or
    // demotes the caller's own account, or lets it through (the CLI).
    enum class AdminGuard { refuse, allow };

    std::int64_t now_us() const;
    ConsoleSession view(const SessionRow& row) const;
    // `removed_last_admin` (when given) is set when the change disabled or demoted the last
    // enabled admin.
    Result<UserView> change_user(const Actor& actor, const std::string& name,
                                 const Precondition& pre, const UserChange& change,
                                 AdminGuard guard, bool* removed_last_admin = nullptr);

    std::unique_ptr<ConsoleRepository> repository_;
    ConsoleOptions options_;
    domain::SystemClock system_clock_;
};

}  // namespace refgate::admin
