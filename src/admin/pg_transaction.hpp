#pragma once

// One transaction on a pooled connection for a row repository: read-only or not, failures of
// the database and of the pool turned into StoreError (the API's 503).

#include <pqxx/pqxx>

#include "refgate/admin/admin_store.hpp"
#include "refgate/pg/connection_pool.hpp"

namespace refgate::admin {

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
        throw StoreError(e.what());
    } catch (const pg::PoolTimeout& e) {
        throw StoreError(e.what());
    }
}

}  // namespace refgate::admin
