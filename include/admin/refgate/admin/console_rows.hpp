#pragma once

// The console's users and sessions as rows: PostgreSQL in, rows out, no rules (ConsoleService
// decides). Times are microseconds since the epoch, UTC, as the service's clock gives them.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "refgate/admin/admin_rows.hpp"

namespace refgate::admin {

struct UserRow {
    std::string name;
    std::string role;
    std::string password_hash;
    bool disabled = false;
    codec::Stamps stamps;
    std::optional<std::int64_t> last_sign_in_us;
};

// A session with what its user is now (role and disabled are read at every request).
struct SessionRow {
    std::string id_hash;  // hex SHA-256 of the id
    std::string user;
    std::string role;
    bool user_disabled = false;
    std::string csrf_token;
    std::int64_t created_us = 0;
    std::int64_t last_seen_us = 0;
    std::int64_t expires_us = 0;
    bool ended = false;
};

// One transaction. Nothing is kept unless commit() is called before the work returns.
class ConsoleRows {
  public:
    virtual ~ConsoleRows() = default;

    virtual std::optional<UserRow> user(const std::string& name, RowLock lock) = 0;
    // By name.
    virtual std::vector<UserRow> users() = 0;
    // False when the name is taken.
    virtual bool insert_user(const std::string& name, const std::string& role,
                             const std::string& password_hash) = 0;
    // The names of the enabled admins, their rows locked for update, by name.
    virtual std::vector<std::string> lock_enabled_admins() = 0;
    // Writes role, disabled and hash; a new version.
    virtual void update_user(const UserRow& row) = 0;
    // A stronger hash of the same password: no new version.
    virtual void rehash_user(const std::string& name, const std::string& password_hash) = 0;
    virtual void record_sign_in(const std::string& name, std::int64_t at_us) = 0;

    virtual void insert_session(const SessionRow& session) = 0;
    virtual std::optional<SessionRow> session(const std::string& id_hash) = 0;
    virtual void touch_session(const std::string& id_hash, std::int64_t at_us) = 0;
    // False when no live session has that hash.
    virtual bool end_session(const std::string& id_hash, std::int64_t at_us) = 0;
    // Ends every live session of `user` but the one whose hash is `keep` (may be empty).
    virtual void end_sessions(const std::string& user, const std::string& keep,
                              std::int64_t at_us) = 0;

    virtual void insert_audit(const AuditRecord& record) = 0;
    virtual void commit() = 0;
};

// Runs work in one transaction; throws StoreError when the database fails.
class ConsoleRepository {
  public:
    virtual ~ConsoleRepository() = default;
    enum class Access { read, write };
    virtual void run(Access access, const std::function<void(ConsoleRows&)>& work) = 0;
};

}  // namespace refgate::admin
