#pragma once

// Webhook delivery (issue 44): one instance of the fleet (an advisory lock) sends the outbox's
// events to each active webhook in event order, signed per the Standard Webhooks specification,
// through the link checker's outbound client (resolved once, pinned, private addresses refused).
// At least once: a delivery is marked delivered only after a 2xx answer. docs/webhooks.md.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "refgate/config/config.hpp"
#include "refgate/metrics/webhook_stats.hpp"
#include "refgate/runtime/periodic_worker.hpp"

namespace refgate::webhooks {

// "v1," + base64(HMAC-SHA256(secret's bytes, id "." timestamp "." body)); the secret is
// "whsec_" + base64 of its bytes. Empty when the secret cannot be decoded.
std::string signature(std::string_view secret, std::string_view id, std::string_view timestamp,
                      std::string_view body);

// The wait before the retry that follows `attempts` failed attempts (1: the first retry):
// base, 2·base, 4·base, ..., at most a day.
std::chrono::milliseconds retry_delay(std::chrono::milliseconds base, int attempts);

class DeliveryWorker {
  public:
    DeliveryWorker(const config::Config& config, metrics::WebhookStats& stats,
                   const std::string& version);
    ~DeliveryWorker();
    void start() { worker_.start(); }
    void stop();

  private:
    struct Parts;
    runtime::RoundOutcome round();

    std::atomic<bool> stopping_{false};
    std::unique_ptr<Parts> parts_;
    runtime::PeriodicWorker worker_;
};

}  // namespace refgate::webhooks
