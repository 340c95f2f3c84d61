#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "refgate/admin/stats_store.hpp"
#include "refgate/redis/redis_client.hpp"

namespace refgate::admin {

struct PgStatsStoreOptions {
    // Any host of it will do (every statement is read-only): a hot standby may serve the reads.
    std::string database_url;
    redis::RedisAddress redis;
    std::size_t max_idle_connections = 2;
    // In use at once: fewer than the server's blocking threads, so that a stalled database
    // never holds all of them.
    std::size_t max_open_connections = 2;
    // How long a call waits for a connection (a free one, or a new one to connect) before
    // it fails with StoreError (503).
    std::chrono::milliseconds connection_wait{2'000};
    const domain::Clock* clock =
        nullptr;  // which days' HyperLogLogs Redis still holds; none: system
};

// Flushed figures from the views refgate_clicks_daily and refgate_uniques_daily, plus the counts
// still in Redis buckets (read-only: SMEMBERS, HGETALL, PFCOUNT) that PostgreSQL has not recorded
// as flushed.
std::unique_ptr<StatsStore> make_pg_stats_store(PgStatsStoreOptions options);

}  // namespace refgate::admin
