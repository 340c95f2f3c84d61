#pragma once

// The console's users and sessions in PostgreSQL: one statement per method, no rules.

#include <memory>
#include <pqxx/pqxx>

#include "refgate/admin/console_rows.hpp"
#include "refgate/pg/connection_pool.hpp"

namespace refgate::admin {

class PgConsoleRows final : public ConsoleRows {
  public:
    explicit PgConsoleRows(pqxx::dbtransaction& tx) : tx_(tx) {}

    std::optional<UserRow> user(const std::string& name, RowLock lock) override;
    std::vector<UserRow> users() override;
    bool insert_user(const std::string& name, const std::string& role,
                     const std::string& password_hash) override;
    std::vector<std::string> lock_enabled_admins() override;
    void update_user(const UserRow& row) override;
    void rehash_user(const std::string& name, const std::string& password_hash) override;
    void record_sign_in(const std::string& name, std::int64_t at_us) override;

    void insert_session(const SessionRow& session) override;
    std::optional<SessionRow> session(const std::string& id_hash) override;
    void touch_session(const std::string& id_hash, std::int64_t at_us) override;
    bool end_session(const std::string& id_hash, std::int64_t at_us) override;
    void end_sessions(const std::string& user, const std::string& keep,
                      std::int64_t at_us) override;

    void insert_audit(const AuditRecord& record) override;
    void commit() override;

  private:
    pqxx::dbtransaction& tx_;
};

// Transactions on a pool the admin store may share; database failures and pool timeouts become
// StoreError (the API's 503).
class PgConsoleRepository final : public ConsoleRepository {
  public:
    explicit PgConsoleRepository(std::shared_ptr<pg::ConnectionPool> pool)
        : pool_(std::move(pool)) {}

    void run(Access access, const std::function<void(ConsoleRows&)>& work) override;

  private:
    std::shared_ptr<pg::ConnectionPool> pool_;
};

}  // namespace refgate::admin
