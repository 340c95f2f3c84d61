#pragma once

// One transaction on a pooled connection for a row repository: read-only or not, failures of
// the database and of the pool turned into StoreError (the API's 503).

#include <pqxx/pqxx>
#include <string_view>

#include "refgate/admin/admin_store.hpp"
#include "refgate/pg/connection_pool.hpp"

namespace refgate::admin {

// A failure of the database as the API answers it: StoreError (503, counted as an outage) when the
// server is gone, shutting down, overloaded, read-only after a failover or losing a lock race;
// RejectedInput (400) when it refused a value; anything else is a defect (500).
[[noreturn]] inline void throw_database_failure(const pqxx::failure& e) {
    const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e);
    if (sql == nullptr) throw StoreError(e.what());  // broken connection, commit in doubt
    std::string_view state = sql->sqlstate();
    std::string_view family = state.substr(0, 2);
    if (family == "08" || family == "53" || family == "57" || family == "40" || state == "25006" ||
        state == "55P03" || state.empty())
        throw StoreError(e.what());
    if (family == "22") throw RejectedInput(e.what());
    throw std::runtime_error(e.what());
}

// Runs work(rows) with `Rows` built over the transaction; only what work commits is kept.
template <typename Rows, typename Work>
void run_transaction(pg::ConnectionPool& pool, bool read_only, const Work& work) {
    try {
        pool.run([&](pqxx::connection& c) {
            if (read_only) {
                pqxx::read_transaction tx(c);
                Rows rows(tx);
                work(rows);
            } else {
                pqxx::work tx(c);
                Rows rows(tx);
                work(rows);
            }
            return true;
        });
    } catch (const pqxx::failure& e) {
        throw_database_failure(e);
    } catch (const pg::PoolTimeout& e) {
        throw StoreError(e.what());
    }
}

}  // namespace refgate::admin
