#pragma once

// Webhook events (issue 44) enter the outbox through one call, in the transaction of the change
// that causes them: committed together or not at all. See docs/webhooks.md for the event types.

#include <pqxx/pqxx>
#include <string>
#include <string_view>

namespace refgate::pg {

// Queues an event of `type` whose `data` is a JSON object's text for every active webhook that
// takes it (nothing is written when none does). Never put anything about a reader in `data`.
inline void emit_webhook(pqxx::transaction_base& tx, std::string_view type,
                         const std::string& data_json) {
    tx.exec_params("SELECT refgate_webhook_emit($1, $2::jsonb)", std::string(type), data_json);
}

}  // namespace refgate::pg
