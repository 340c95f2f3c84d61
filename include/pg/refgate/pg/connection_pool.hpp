#pragma once

// A few PostgreSQL connections shared by request handlers on a thread pool. At most `max_open`
// are in use at once; a caller waits at most `wait` for one, so that a stalled database holds a
// bounded number of threads and every other caller gets an answer (PoolTimeout) in bounded time.

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "refgate/pg/connection.hpp"

namespace refgate::pg {

struct PoolOptions {
    std::size_t max_idle = 4;               // kept open for reuse
    std::size_t max_open = 4;               // in use at once
    std::chrono::milliseconds wait{2'000};  // for a free slot, and to connect
    Server server = Server::primary;        // of a multi-host URI
};

// No connection could be had within the pool's wait.
class PoolTimeout : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class ConnectionPool {
  public:
    ConnectionPool(std::string database_url, PoolOptions options)
        : database_url_(std::move(database_url)), options_(options) {}

    // Runs f on a pooled (or new) connection and returns what it returns. A connection is given
    // back only when f returned normally, so a broken one is dropped; exceptions pass through. An
    // idle one the server closed meanwhile (a restart, a failover) is replaced before f runs.
    // Throws PoolTimeout when every slot stays busy for the whole wait.
    template <typename F>
    auto run(F&& f) -> decltype(f(std::declval<pqxx::connection&>())) {
        Lease lease(*this);
        if (!lease.conn || !still_open(*lease.conn))
            lease.conn = connect(database_url_, connect_timeout_seconds(), options_.server);
        auto result = f(*lease.conn);
        lease.keep = true;
        return result;
    }

  private:
    // A slot in use, with the connection it holds; gives both back on destruction.
    struct Lease {
        explicit Lease(ConnectionPool& pool) : pool(pool) { conn = pool.acquire(); }
        ~Lease() { pool.release(std::move(conn), keep); }
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        ConnectionPool& pool;
        std::unique_ptr<pqxx::connection> conn;
        bool keep = false;
    };

    std::unique_ptr<pqxx::connection> acquire() {
        std::unique_lock lock(mutex_);
        if (!freed_.wait_for(lock, options_.wait, [this] { return in_use_ < options_.max_open; }))
            throw PoolTimeout("no database connection free within " +
                              std::to_string(options_.wait.count()) + " ms");
        ++in_use_;
        if (idle_.empty()) return nullptr;
        auto conn = std::move(idle_.back());
        idle_.pop_back();
        return conn;
    }

    void release(std::unique_ptr<pqxx::connection> conn, bool keep) {
        {
            std::lock_guard lock(mutex_);
            --in_use_;
            if (keep && conn && idle_.size() < options_.max_idle) idle_.push_back(std::move(conn));
        }
        freed_.notify_one();
    }

    // libpq counts whole seconds and takes less than 2 as 2.
    int connect_timeout_seconds() const {
        auto seconds = (options_.wait.count() + 999) / 1000;
        return static_cast<int>(std::max<long long>(2, seconds));
    }

    std::string database_url_;
    PoolOptions options_;
    std::mutex mutex_;
    std::condition_variable freed_;
    std::size_t in_use_ = 0;
    std::vector<std::unique_ptr<pqxx::connection>> idle_;
};

}  // namespace refgate::pg
