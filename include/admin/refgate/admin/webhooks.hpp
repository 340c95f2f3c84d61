#pragma once

// Webhooks (issue 44): `/api/v1/webhooks` (admin role), the receivers refgate sends its events to.
// A webhook's secret ("whsec_" + base64 of 32 random bytes) is generated here and shown once, at
// creation and at each rotation. The outbox and its delivery: refgate/pg/webhook_outbox.hpp and
// refgate/webhooks/delivery.hpp; docs/webhooks.md.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace refgate::admin {

class WebhookStore;  // over PostgreSQL (src/admin/webhooks.cpp)

struct WebhookStoreOptions {
    std::string database_url;
    std::chrono::milliseconds connection_wait{2'000};
    // Why a URL is refused when saved ("" when it is not): the link checker's outbound rules
    // (https, a public address), with the webhooks' test resolve list.
    std::function<std::string(const std::string& url)> url_refusal;
};
std::shared_ptr<WebhookStore> make_webhook_store(WebhookStoreOptions options);

// "whsec_" + base64 of 32 bytes from the system's random source.
std::string generate_webhook_secret();

}  // namespace refgate::admin
