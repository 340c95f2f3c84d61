#pragma once

#include <memory>
#include <string>

#include "refgate/admin/stats_store.hpp"
#include "refgate/redis/redis_client.hpp"

namespace refgate::admin {

struct PgStatsStoreOptions {
    std::string database_url;
    redis::RedisAddress redis;
    std::size_t max_idle_connections = 2;
};

// Flushed figures from the views refgate_clicks_daily and refgate_uniques_daily, plus the counts
// still in Redis buckets (read-only: SMEMBERS, HGETALL, PFCOUNT) that PostgreSQL has not recorded
// as flushed.
std::unique_ptr<StatsStore> make_pg_stats_store(PgStatsStoreOptions options);

}  // namespace refgate::admin
