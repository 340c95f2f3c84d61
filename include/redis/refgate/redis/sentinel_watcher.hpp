#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "refgate/redis/redis_client.hpp"

namespace refgate::redis {

struct SentinelWatcherOptions {
    RedisAddress address;             // via_sentinel()
    std::function<void()> on_switch;  // after each switch of the master (a metric); may be empty
    std::chrono::milliseconds retry{500};  // between sentinels when one fails
};

// Follows the sentinels' +switch-master for the address's master name (SUBSCRIBEd on one
// sentinel, the next one when it fails) and bumps master_generation() at each switch, so every
// connection made before the switch reconnects before its next command. A switch missed while no
// sentinel was reachable is found on resubscribing (the master named then differs). Logs
// redis_master_switched {master, from, to}.
class SentinelWatcher {
  public:
    explicit SentinelWatcher(SentinelWatcherOptions options);
    ~SentinelWatcher();
    SentinelWatcher(const SentinelWatcher&) = delete;
    SentinelWatcher& operator=(const SentinelWatcher&) = delete;

    void start();
    void stop();

  private:
    void run();
    // One subscription on one sentinel, until it fails or stop() is called.
    void follow(const SentinelHost& sentinel);
    void switched(const std::string& to);
    bool wait_retry();

    SentinelWatcherOptions options_;
    std::string master_;  // the master last seen, "host:port"
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

}  // namespace refgate::redis
