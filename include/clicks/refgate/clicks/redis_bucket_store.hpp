#pragma once

#include <chrono>
#include <memory>

#include "refgate/clicks/bucket_store.hpp"
#include "refgate/redis/redis_client.hpp"

namespace refgate::clicks {

struct RedisBucketStoreOptions {
    redis::RedisAddress address;
    std::chrono::milliseconds timeout{1'000};  // the sender's: a round trip per window
    // > 0: add_batches ends its pipeline with WAIT, and close_buckets WAITs after closing; fewer
    // acknowledgements than this fail the call with an unreplicated Fault.
    unsigned min_replicas_acked = 0;
    std::chrono::milliseconds wait_timeout{500};
};

// The flusher's timeout: it reads whole buckets, and nothing waits on it.
inline constexpr std::chrono::milliseconds kFlushRedisTimeout{5'000};

// The BucketStore over one Redis connection, opened when first needed and again after it broke.
// Blocking: never used on an I/O thread. Every Redis key and script of the pipeline lives in its
// implementation (redis_bucket_store.cpp).
std::unique_ptr<BucketStore> make_redis_bucket_store(RedisBucketStoreOptions options);

}  // namespace refgate::clicks
