#pragma once

// The console's people and their sessions: sign-in with a name and password, sessions with an
// idle and an absolute expiry, and the users an admin manages (API and CLI alike, audited as
// entity "user", never with the password hash). No SQL and no HTTP here.

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
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
    const Clock* clock = nullptr;            // none: the system clock
};

// A live session as the API shows it.
struct ConsoleSession {
    std::string user;
    Role role = Role::viewer;
    std::string csrf_token;
    std::string id_hash;
    std::int64_t expires_us = 0;
    std::int64_t idle_expires_us = 0;
};

struct SignedIn {
    std::string id;  // the cookie's value; shown once, never stored
    ConsoleSession session;
};

// 1 to 64 characters of [a-z0-9._-].
bool valid_user_name(std::string_view name);
// 10 to 1024 bytes.
bool valid_password(std::string_view password);

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

    // {name, role, disabled, created_at, updated_at, last_sign_in_at, version}
    Outcome list_users();
    Outcome get_user(const std::string& name);
    // {name, role, password?}; the answer carries "password" when the server made it.
    Outcome create_user(const Actor& actor, const nlohmann::ordered_json& body);
    // Merge patch of {role, disabled, password}: disabling ends the user's sessions, a new
    // password the user's sessions but the caller's own.
    Outcome update_user(const Actor& actor, const std::string& name, const Precondition& if_match,
                        const nlohmann::ordered_json& patch);

    // The CLI's commands: the same rows and audit entries as the API's. Throw
    // std::invalid_argument on a bad name, role or password, or a name that is taken.
    // create_user_named returns the generated password, or "" when one was given.
    std::string create_user_named(const std::string& actor, const std::string& name, Role role,
                                  const std::optional<std::string>& password);
    std::vector<UserRow> user_list();
    // False when there is no such user.
    bool disable_user_named(const std::string& actor, const std::string& name);
    // nullopt when there is no such user; else the generated password, or "" when one was given.
    std::optional<std::string> set_password_named(const std::string& actor, const std::string& name,
                                                  const std::optional<std::string>& password);

  private:
    std::int64_t now_us() const;
    ConsoleSession view(const SessionRow& row) const;
    Outcome change_user(const Actor& actor, const std::string& name, const Precondition& pre,
                        const std::optional<std::string>& role, std::optional<bool> disabled,
                        const std::optional<std::string>& password_hash);

    std::unique_ptr<ConsoleRepository> repository_;
    ConsoleOptions options_;
    SystemClock system_clock_;
};

}  // namespace refgate::admin
