// Webhook delivery. Each round the instance reads the queue's age (for /metrics, every
// instance), then, holding the fleet's advisory lock, takes each active webhook's oldest pending
// delivery (later ones wait behind it: order per webhook) and sends it when it is due. The
// outcome is written in one transaction: delivered; or a retry after retry_delay(); or, once the
// delivery has waited past the give-up window, failed. A webhook whose attempts have failed for
// that window is disabled, with an audit entry.

#include "refgate/webhooks/delivery.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <vector>

#include "refgate/domain/clock.hpp"
#include "refgate/linkcheck/checker.hpp"
#include "refgate/linkcheck/fetcher.hpp"
#include "refgate/pg/connection.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::webhooks {
namespace {

// The advisory lock of the delivering instance (the checker's and the flusher's use others).
constexpr std::int64_t kDeliveryLock = 0x7265667768646c76;  // "refwhdlv"
// A round sends at most this many deliveries, then lets the worker wait its interval.
constexpr int kMaxPerRound = 200;
// The error text kept in the delivery log is cut to this.
constexpr std::size_t kMaxErrorText = 300;

std::string base64(const unsigned char* data, std::size_t size) {
    std::string out(4 * ((size + 2) / 3), '\0');
    int n =
        EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
    out.resize(static_cast<std::size_t>(std::max(n, 0)));
    return out;
}

std::optional<std::string> unbase64(std::string_view text) {
    if (text.empty() || text.size() % 4 != 0) return std::nullopt;
    std::string out(3 * text.size() / 4, '\0');
    int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(text.data()),
                            static_cast<int>(text.size()));
    if (n < 0) return std::nullopt;
    std::size_t pad = 0;
    if (text.back() == '=') ++pad;
    if (text.size() > 1 && text[text.size() - 2] == '=') ++pad;
    out.resize(static_cast<std::size_t>(n) - pad);
    return out;
}

struct Due {
    std::int64_t delivery_id = 0;
    std::int64_t webhook_id = 0;
    std::int64_t event_id = 0;
    int attempt = 0;
    std::int64_t queued_s = 0;
    std::string url;
    std::string secret;
    std::string body;
};

std::string failure_text(const linkcheck::HopResult& r) {
    if (r.hop.failure != domain::HopFailure::none) {
        std::string why(to_string(r.hop.failure));
        if (r.hop.failure == domain::HopFailure::ssrf)
            why = "refused: the address is private, loopback or otherwise not public";
        return why;
    }
    return "answered " + std::to_string(r.hop.status);
}

}  // namespace

std::string signature(std::string_view secret, std::string_view id, std::string_view timestamp,
                      std::string_view body) {
    if (!secret.starts_with("whsec_")) return "";
    auto key = unbase64(secret.substr(6));
    if (!key || key->empty()) return "";
    std::string message;
    message.reserve(id.size() + timestamp.size() + body.size() + 2);
    message.append(id).append(".").append(timestamp).append(".").append(body);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_size = 0;
    if (HMAC(EVP_sha256(), key->data(), static_cast<int>(key->size()),
             reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac,
             &mac_size) == nullptr)
        return "";
    return "v1," + base64(mac, mac_size);
}

std::chrono::milliseconds retry_delay(std::chrono::milliseconds base, int attempts) {
    constexpr std::chrono::milliseconds kMax = std::chrono::hours{24};
    auto delay = base;
    for (int i = 1; i < attempts && delay < kMax; ++i) delay *= 2;
    return std::min(delay, kMax);
}

struct DeliveryWorker::Parts {
    const config::WebhookConfig& config;
    std::string database_url;
    metrics::WebhookStats& stats;
    const std::atomic<bool>* stopping;
    std::unique_ptr<linkcheck::HopFetcher> fetcher;
    std::unique_ptr<pqxx::connection> conn;
    bool locked = false;
    bool leading = false;

    pqxx::connection& connection() {
        if (!conn || !conn->is_open() || !pg::still_open(*conn)) {
            locked = false;
            conn.reset();
            conn = pg::connect(database_url);
        }
        return *conn;
    }

    bool try_lock() {
        pqxx::connection& c = connection();
        if (locked) return true;
        pqxx::nontransaction tx(c);
        locked =
            tx.exec_params("SELECT pg_try_advisory_lock($1) AS locked", kDeliveryLock)[0]["locked"]
                .as<bool>();
        return locked;
    }

    void read_queue_age() {
        pqxx::work tx(connection());
        auto row = tx.exec(
            "SELECT coalesce(extract(epoch FROM now() - min(d.queued_at))::bigint, 0) AS age "
            "FROM refgate_webhook_deliveries d JOIN refgate_webhooks w ON w.id = d.webhook_id "
            "WHERE d.status = 'pending' AND w.active")[0];
        tx.commit();
        stats.queue_age_seconds.store(std::max<std::int64_t>(row["age"].as<std::int64_t>(), 0));
    }

    // clicks.hourly: each closed hour's per-link sums that the flushes wrote become one event per
    // link, and their rows go, in one transaction.
    void emit_closed_hours() {
        pqxx::work tx(connection());
        tx.exec(
            "WITH closed AS (DELETE FROM refgate_webhook_clicks_hourly "
            "WHERE hour < date_trunc('hour', now()) RETURNING *), "
            "ordered AS (SELECT c.*, l.slug FROM closed c JOIN refgate_links l ON l.id = "
            "c.link_id ORDER BY c.hour, l.slug) "
            "SELECT refgate_webhook_emit('clicks.hourly', jsonb_build_object('link', slug, "
            "'hour', to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:00:00\"Z\"'), "
            "'clicks', jsonb_build_object('human', human, 'bot', bot, 'prefetch', prefetch, "
            "'scanner', scanner))) FROM ordered");
        tx.commit();
    }

    // Each active webhook's oldest pending delivery, when it is due.
    std::vector<Due> due() {
        std::vector<Due> out;
        pqxx::work tx(connection());
        for (const auto& row :
             tx.exec("SELECT DISTINCT ON (d.webhook_id) d.id, d.webhook_id, d.event_id, d.attempt, "
                     "extract(epoch FROM d.queued_at)::bigint AS queued_s, "
                     "d.next_attempt_at <= now() AS is_due, w.url, w.secret, e.body "
                     "FROM refgate_webhook_deliveries d "
                     "JOIN refgate_webhooks w ON w.id = d.webhook_id AND w.active "
                     "JOIN refgate_webhook_events e ON e.id = d.event_id "
                     "WHERE d.status = 'pending' ORDER BY d.webhook_id, d.event_id")) {
            if (!row["is_due"].as<bool>()) continue;
            out.push_back({.delivery_id = row["id"].as<std::int64_t>(),
                           .webhook_id = row["webhook_id"].as<std::int64_t>(),
                           .event_id = row["event_id"].as<std::int64_t>(),
                           .attempt = row["attempt"].as<int>(),
                           .queued_s = row["queued_s"].as<std::int64_t>(),
                           .url = row["url"].as<std::string>(),
                           .secret = row["secret"].as<std::string>(),
                           .body = row["body"].as<std::string>()});
        }
        tx.commit();
        return out;
    }

    void send(const Due& d) {
        std::string id = "evt_" + std::to_string(d.event_id);
        auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
        std::string timestamp = std::to_string(now_s);
        std::vector<std::string> headers{
            "Content-Type: application/json",
            "Expect:",  // no 100-continue round trip
            "webhook-id: " + id,
            "webhook-timestamp: " + timestamp,
            "webhook-signature: " + signature(d.secret, id, timestamp, d.body),
        };
        auto started = std::chrono::steady_clock::now();
        auto result = fetcher->post(d.url, headers, d.body);
        if (stopping->load()) return;  // aborted by the stop: not an attempt, sent again later
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
        bool ok = result.hop.failure == domain::HopFailure::none && result.hop.status >= 200 &&
                  result.hop.status < 300;
        std::string error = ok ? "" : failure_text(result).substr(0, kMaxErrorText);
        pqxx::work tx(connection());
        if (ok) {
            tx.exec_params(
                "UPDATE refgate_webhook_deliveries SET status = 'delivered', attempt = attempt + "
                "1, last_attempt_at = now(), response_status = $2, duration_ms = $3, error = NULL "
                "WHERE id = $1 AND status = 'pending'",
                d.delivery_id, result.hop.status, static_cast<int>(ms));
            tx.exec_params("UPDATE refgate_webhooks SET failing_since = NULL WHERE id = $1",
                           d.webhook_id);
            tx.commit();
            stats.delivered.fetch_add(1);
            return;
        }
        std::int64_t status = result.hop.failure == domain::HopFailure::none
                                  ? static_cast<std::int64_t>(result.hop.status)
                                  : -1;
        auto delay = retry_delay(config.retry_base, d.attempt + 1);
        auto outcome = tx.exec_params(
            "UPDATE refgate_webhook_deliveries SET attempt = attempt + 1, last_attempt_at = now(), "
            "response_status = NULLIF($2, -1)::integer, duration_ms = $3, error = $4, "
            "status = CASE WHEN now() - queued_at >= make_interval(secs => $5) THEN 'failed' "
            "ELSE 'pending' END, "
            "next_attempt_at = now() + make_interval(secs => $6::double precision / 1000) "
            "WHERE id = $1 AND status = 'pending' RETURNING status",
            d.delivery_id, status, static_cast<int>(ms), error,
            static_cast<double>(config.give_up.count()), static_cast<double>(delay.count()));
        bool failed = !outcome.empty() && outcome[0]["status"].as<std::string>() == "failed";
        auto webhook = tx.exec_params(
            "UPDATE refgate_webhooks SET failing_since = coalesce(failing_since, now()) "
            "WHERE id = $1 RETURNING now() - failing_since >= make_interval(secs => $2) AS "
            "too_long, active",
            d.webhook_id, static_cast<double>(config.give_up.count()));
        // Failing for the whole window, or its oldest event given up after failing that long.
        bool disable = !webhook.empty() && webhook[0]["active"].as<bool>() &&
                       (failed || webhook[0]["too_long"].as<bool>());
        if (disable) {
            std::string reason = "deliveries failed for " + config::duration_text(config.give_up) +
                                 "; last: " + error;
            tx.exec_params(
                "UPDATE refgate_webhooks SET active = false, disabled_at = now(), "
                "disabled_reason = $2, updated_at = now(), version = version + 1 WHERE id = $1",
                d.webhook_id, reason);
            tx.exec_params(
                "INSERT INTO refgate_audit (actor, entity, slug, action, before, after) VALUES "
                "('webhooks', 'webhook', $1, 'update', '{\"active\": true}'::jsonb, $2::jsonb)",
                std::to_string(d.webhook_id),
                nlohmann::json{{"active", false}, {"disabled_reason", reason}}.dump());
        }
        tx.commit();
        (failed ? stats.failed : stats.retried).fetch_add(1);
        if (disable) {
            stats.disabled.fetch_add(1);
            runtime::log::warn("webhook_disabled", {{"webhook", d.webhook_id}, {"error", error}});
        }
    }
};

DeliveryWorker::DeliveryWorker(const config::Config& config, metrics::WebhookStats& stats,
                               const std::string& version)
    : parts_(std::make_unique<Parts>(Parts{
          .config = config.webhooks,
          .database_url = config.database_url,
          .stats = stats,
          .stopping = &stopping_,
          .fetcher = linkcheck::make_curl_fetcher(
              {.ca_file = config.webhooks.ca_file,
               .resolve = config.webhooks.resolve,
               .user_agent = "refgate-webhooks/" + version,
               .connect_timeout =
                   std::min(config.webhooks.timeout, std::chrono::milliseconds{5'000}),
               .timeout = config.webhooks.timeout,
               .max_body = 4096,
               .stopping = &stopping_}),
      })),
      worker_({.name = "rg-webhooks",
               .priority = runtime::BackgroundPriority::low,
               .interval = std::chrono::milliseconds{500},
               .min_backoff = std::chrono::seconds{1},
               .max_backoff = std::chrono::seconds{30}},
              [this] { return round(); }) {}

DeliveryWorker::~DeliveryWorker() { stop(); }

void DeliveryWorker::stop() {
    stopping_.store(true);
    worker_.stop();
}

runtime::RoundOutcome DeliveryWorker::round() {
    try {
        parts_->read_queue_age();
        if (!parts_->try_lock()) {
            if (parts_->leading) runtime::log::info("webhooks_standby", {});
            parts_->leading = false;
            return runtime::RoundOutcome::done;
        }
        if (!parts_->leading) runtime::log::info("webhooks_leader", {});
        parts_->leading = true;
        parts_->emit_closed_hours();
        int sent = 0;
        while (sent < kMaxPerRound && !stopping_.load()) {
            auto due = parts_->due();
            if (due.empty()) break;
            for (const auto& d : due) {
                if (stopping_.load()) break;
                parts_->send(d);
                ++sent;
            }
        }
        if (sent > 0) parts_->read_queue_age();
        return runtime::RoundOutcome::done;
    } catch (const std::exception& e) {
        runtime::log::warn("webhook_delivery_failed", {{"error", e.what()}});
        return runtime::RoundOutcome::failed;
    }
}

}  // namespace refgate::webhooks
