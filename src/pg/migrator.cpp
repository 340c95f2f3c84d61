#include "migrations_data.hpp"
#include "refgate/pg/connection.hpp"
#include "refgate/pg/database.hpp"
#include "refgate/pg/rollups.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::pg {
namespace {

// Any constant shared by every refgate instance; chosen once, never changed.
constexpr long long kMigrationLock = 0x7265666761746531LL;  // "refgate1"

// A roll-up batch holds the flushes off for this long at most (about).
constexpr std::chrono::milliseconds kRollupBatchTime{300};

}  // namespace

std::vector<std::string> migrate(const std::string& database_url) {
    std::vector<std::string> applied;
    try {
        auto conn = connect(database_url);
        {
            pqxx::nontransaction lock(*conn);
            lock.exec_params("SELECT pg_advisory_lock($1)", kMigrationLock);
        }
        try {
            {
                pqxx::work tx(*conn);
                tx.exec(
                    "CREATE TABLE IF NOT EXISTS refgate_schema_migrations ("
                    " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
                tx.commit();
            }
            for (const auto& migration : embedded_migrations()) {
                pqxx::work tx(*conn);
                auto done = tx.exec_params(
                    "SELECT 1 FROM refgate_schema_migrations WHERE name = $1", migration.name);
                if (!done.empty()) continue;
                tx.exec(migration.sql);
                tx.exec_params("INSERT INTO refgate_schema_migrations (name) VALUES ($1)",
                               migration.name);
                tx.commit();
                applied.push_back(migration.name);
                runtime::log::info("migration_applied", {{"name", migration.name}});
            }
            // The roll-ups of the counts stored before migration 014 (or rebuilt after a write
            // that did not keep them), in short batches while flushes go on.
            std::size_t batches = build_rollups(*conn, kRollupBatchTime);
            if (batches > 0) runtime::log::info("rollups_built", {{"batches", batches}});
        } catch (...) {
            pqxx::nontransaction unlock(*conn);
            unlock.exec_params("SELECT pg_advisory_unlock($1)", kMigrationLock);
            throw;
        }
        pqxx::nontransaction unlock(*conn);
        unlock.exec_params("SELECT pg_advisory_unlock($1)", kMigrationLock);
    } catch (const pqxx::failure& e) {
        throw DatabaseError(std::string("migrate: ") + e.what());
    }
    return applied;
}

}  // namespace refgate::pg
