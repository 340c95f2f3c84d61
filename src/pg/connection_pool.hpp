#pragma once

// A few idle PostgreSQL connections kept for reuse by request handlers on a thread pool.

#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <utility>
#include <vector>

#include "pg/connection.hpp"

namespace refgate::pg {

class ConnectionPool {
  public:
    ConnectionPool(std::string database_url, std::size_t max_idle)
        : database_url_(std::move(database_url)), max_idle_(max_idle) {}

    // Runs f on a pooled (or new) connection and returns what it returns. A connection is given
    // back only when f returned normally, so a broken one is dropped; exceptions pass through.
    template <typename F>
    auto run(F&& f) -> decltype(f(std::declval<pqxx::connection&>())) {
        std::unique_ptr<pqxx::connection> conn;
        {
            std::lock_guard lock(mutex_);
            if (!idle_.empty()) {
                conn = std::move(idle_.back());
                idle_.pop_back();
            }
        }
        if (!conn || !conn->is_open()) conn = connect(database_url_);
        auto result = f(*conn);
        std::lock_guard lock(mutex_);
        if (idle_.size() < max_idle_) idle_.push_back(std::move(conn));
        return result;
    }

  private:
    std::string database_url_;
    std::size_t max_idle_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<pqxx::connection>> idle_;
};

}  // namespace refgate::pg
