#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "refgate/core/health.hpp"

namespace refgate::redis {

struct RedisAddress {
    std::string host = "127.0.0.1";
    int port = 6379;
    int db = 0;
};

// redis://host:port[/db]
std::optional<RedisAddress> parse_redis_url(const std::string& url);

// A blocking connection (hiredis). Never used on an I/O thread.
class RedisConnection {
  public:
    RedisConnection(const RedisAddress& address, std::chrono::milliseconds timeout);
    ~RedisConnection();
    RedisConnection(const RedisConnection&) = delete;
    RedisConnection& operator=(const RedisConnection&) = delete;

    bool ok() const;
    const std::string& error() const { return error_; }
    // PING; false when Redis did not answer PONG.
    bool ping();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::string error_;
};

// Pings Redis every interval and records the result for /readyz.
class RedisHealthMonitor {
  public:
    RedisHealthMonitor(RedisAddress address, HealthState& health,
                       std::chrono::milliseconds interval = std::chrono::milliseconds{1000});
    ~RedisHealthMonitor();
    void start();
    void stop();

  private:
    void run();

    RedisAddress address_;
    HealthState& health_;
    std::chrono::milliseconds interval_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace refgate::redis
