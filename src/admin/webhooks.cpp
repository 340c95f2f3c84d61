// /api/v1/webhooks: create, list, get, update, delete, rotate the secret, the delivery log and
// "send again". Every change is audited (entity "webhook", its id as the slug) in its own
// transaction; the secret never appears in an audit entry, a list or a log.

#include "refgate/admin/webhooks.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "api.hpp"
#include "pg_transaction.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/pg/connection_pool.hpp"

namespace refgate::admin {

namespace {

using http::Method;

constexpr std::array kEventTypes{
    "*",
    "partner.created",
    "partner.updated",
    "partner.deleted",
    "partner.code_changed",
    "link.created",
    "link.updated",
    "link.deleted",
    "link.health_changed",
    "link.fallback_changed",
    "disclosure.changed",
    "clicks.hourly",
    "commission.recorded",
    "commission.status_changed",
};
constexpr std::size_t kMaxWebhooks = 100;
constexpr std::size_t kMaxUrl = 2048;

constexpr std::array kWebhookRoutes{
    Route{Method::get, "GET", "/api/v1/webhooks", Role::admin, Operation::list_webhooks},
    Route{Method::post, "POST", "/api/v1/webhooks", Role::admin, Operation::create_webhook},
    Route{Method::get, "GET", "/api/v1/webhooks/{id}", Role::admin, Operation::get_webhook},
    Route{Method::patch, "PATCH", "/api/v1/webhooks/{id}", Role::admin, Operation::update_webhook},
    Route{Method::del, "DELETE", "/api/v1/webhooks/{id}", Role::admin, Operation::delete_webhook},
    Route{Method::post, "POST", "/api/v1/webhooks/{id}/secret", Role::admin,
          Operation::rotate_webhook_secret},
    Route{Method::get, "GET", "/api/v1/webhooks/{id}/deliveries", Role::admin,
          Operation::webhook_deliveries},
    Route{Method::post, "POST", "/api/v1/webhooks/{id}/deliveries/{delivery}/retry", Role::admin,
          Operation::retry_webhook_delivery},
};

constexpr const char* kWebhookColumns =
    "id, url, events, active, version, "
    "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS created_at, "
    "to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS updated_at, "
    "to_char(disabled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS disabled_at, "
    "disabled_reason, "
    "to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS failing_since";

nlohmann::ordered_json webhook_text(const pqxx::field& f) {
    if (f.is_null()) return nullptr;
    return f.as<std::string>();
}

std::vector<std::string> text_list(const pqxx::field& f) {
    std::vector<std::string> out;
    auto parser = f.as_array();
    for (auto item = parser.get_next(); item.first != pqxx::array_parser::done;
         item = parser.get_next()) {
        if (item.first == pqxx::array_parser::string_value) out.push_back(item.second);
    }
    return out;
}

nlohmann::ordered_json webhook_json(const pqxx::row& row) {
    return {{"id", row["id"].as<std::int64_t>()},
            {"url", row["url"].as<std::string>()},
            {"events", text_list(row["events"])},
            {"active", row["active"].as<bool>()},
            {"created_at", row["created_at"].as<std::string>()},
            {"updated_at", row["updated_at"].as<std::string>()},
            {"disabled_at", webhook_text(row["disabled_at"])},
            {"disabled_reason", webhook_text(row["disabled_reason"])},
            {"failing_since", webhook_text(row["failing_since"])},
            {"version", row["version"].as<std::int64_t>()}};
}

// "{a,b}" for a text[] parameter; the names are checked against kEventTypes first.
std::string text_array_literal(const std::vector<std::string>& items) {
    std::string out = "{";
    for (const auto& i : items) out += (out.size() > 1 ? "," : "") + i;
    return out + "}";
}

std::optional<std::int64_t> numeric_id(std::string_view text) {
    std::int64_t id = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec != std::errc{} || ptr != text.data() + text.size() || id <= 0) return std::nullopt;
    return id;
}

// The webhook's id in /api/v1/webhooks/{id}/...
std::optional<std::int64_t> webhook_id_in(std::string_view path) {
    constexpr std::string_view prefix = "/api/v1/webhooks/";
    if (!path.starts_with(prefix)) return std::nullopt;
    path.remove_prefix(prefix.size());
    return numeric_id(path.substr(0, path.find('/')));
}

Outcome webhook_not_found(std::int64_t id) {
    return {.kind = OutcomeKind::not_found, .detail = "no webhook " + std::to_string(id)};
}

}  // namespace

std::string generate_webhook_secret() {
    std::array<unsigned char, 32> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
        throw std::runtime_error("no random bytes for a webhook secret");
    std::string text(4 * ((bytes.size() + 2) / 3), '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text.data()), bytes.data(),
                            static_cast<int>(bytes.size()));
    text.resize(static_cast<std::size_t>(std::max(n, 0)));
    return "whsec_" + text;
}

class WebhookStore {
  public:
    explicit WebhookStore(WebhookStoreOptions options)
        : options_(std::move(options)),
          pool_(options_.database_url,
                {.max_idle = 1, .max_open = 2, .wait = options_.connection_wait}) {}

    // Runs work(tx) in one transaction; database failures as the API answers them.
    template <typename Work>
    Outcome run(const Work& work) {
        Outcome out;
        try {
            pool_.run([&](pqxx::connection& c) {
                pqxx::work tx(c);
                out = work(tx);
                tx.commit();
                return true;
            });
        } catch (const pqxx::failure& e) {
            throw_database_failure(e);
        } catch (const pg::PoolTimeout& e) {
            throw StoreError(e.what());
        }
        return out;
    }

    // The body's url, events and active, checked: each problem by field.
    std::vector<codec::FieldError> check(const nlohmann::ordered_json& body, bool creating) {
        std::vector<codec::FieldError> errors;
        for (const auto& [key, value] : body.items()) {
            if (key != "url" && key != "events" && key != "active")
                errors.push_back({key, "is not a field of a webhook"});
        }
        if (body.contains("url")) {
            const auto& url = body["url"];
            if (!url.is_string() || url.get<std::string>().empty() ||
                url.get<std::string>().size() > kMaxUrl) {
                errors.push_back({"url", "must be an https URL of at most 2048 characters"});
            } else if (auto refusal = options_.url_refusal ? options_.url_refusal(url) : "";
                       !refusal.empty()) {
                errors.push_back({"url", refusal});
            }
        } else if (creating) {
            errors.push_back({"url", "is required"});
        }
        if (body.contains("events")) {
            const auto& events = body["events"];
            bool ok = events.is_array() && !events.empty() && events.size() <= 32;
            std::vector<std::string> seen;
            for (const auto& e : ok ? events : nlohmann::ordered_json::array()) {
                bool known = e.is_string() && std::any_of(kEventTypes.begin(), kEventTypes.end(),
                                                          [&](const char* t) { return e == t; });
                if (!known) {
                    errors.push_back(
                        {"events", "unknown event type " + e.dump() + "; see docs/webhooks.md"});
                    ok = true;
                    break;
                }
                if (std::find(seen.begin(), seen.end(), e.get<std::string>()) != seen.end()) {
                    errors.push_back({"events", "names " + e.dump() + " twice"});
                    break;
                }
                seen.push_back(e.get<std::string>());
            }
            if (!ok) errors.push_back({"events", "must be a list of 1 to 32 event types or \"*\""});
        } else if (creating) {
            errors.push_back({"events", "is required (\"*\" for all)"});
        }
        if (body.contains("active") && !body["active"].is_boolean())
            errors.push_back({"active", "must be true or false"});
        return errors;
    }

    Outcome list() {
        return run([&](pqxx::work& tx) {
            auto items = nlohmann::ordered_json::array();
            for (const auto& row : tx.exec(std::string("SELECT ") + kWebhookColumns +
                                           " FROM refgate_webhooks ORDER BY id"))
                items.push_back(webhook_json(row));
            return Outcome{.body = {{"items", std::move(items)}}};
        });
    }

    Outcome get(std::int64_t id) {
        return run([&](pqxx::work& tx) {
            auto rows = tx.exec_params(
                std::string("SELECT ") + kWebhookColumns + " FROM refgate_webhooks WHERE id = $1",
                id);
            if (rows.empty()) return webhook_not_found(id);
            return Outcome{.body = webhook_json(rows[0]),
                           .version = rows[0]["version"].as<std::int64_t>()};
        });
    }

    Outcome create(const Actor& actor, const nlohmann::ordered_json& body) {
        auto errors = check(body, true);
        if (!errors.empty()) return {.kind = OutcomeKind::invalid, .errors = std::move(errors)};
        std::string secret = generate_webhook_secret();
        return run([&](pqxx::work& tx) {
            auto count = tx.exec("SELECT count(*) AS n FROM refgate_webhooks")[0]["n"];
            if (count.as<std::size_t>() >= kMaxWebhooks)
                return Outcome{.kind = OutcomeKind::conflict,
                               .detail = "at most 100 webhooks; delete one first"};
            auto rows = tx.exec_params(
                std::string("INSERT INTO refgate_webhooks (url, events, active, secret) VALUES "
                            "($1, $2::text[], $3, $4) RETURNING ") +
                    kWebhookColumns,
                body["url"].get<std::string>(),
                text_array_literal(body["events"].get<std::vector<std::string>>()),
                body.value("active", true), secret);
            auto view = webhook_json(rows[0]);
            audit(tx, actor, view["id"].get<std::int64_t>(), "create", "", view.dump());
            auto shown = view;
            shown["secret"] = secret;
            return Outcome{.kind = OutcomeKind::created,
                           .body = std::move(shown),
                           .version = view["version"].get<std::int64_t>()};
        });
    }

    Outcome update(const Actor& actor, std::int64_t id, const Precondition& if_match,
                   const nlohmann::ordered_json& body) {
        return run([&](pqxx::work& tx) {
            auto rows = tx.exec_params(std::string("SELECT ") + kWebhookColumns +
                                           " FROM refgate_webhooks WHERE id = $1 FOR UPDATE",
                                       id);
            if (rows.empty()) return webhook_not_found(id);
            auto before = webhook_json(rows[0]);
            if (!if_match.any && if_match.version != before["version"].get<std::int64_t>())
                return Outcome{.kind = OutcomeKind::stale,
                               .detail = "webhook " + std::to_string(id) + " changed"};
            auto errors = check(body, false);
            if (!errors.empty())
                return Outcome{.kind = OutcomeKind::invalid, .errors = std::move(errors)};
            auto events = body.contains("events")
                              ? body["events"].get<std::vector<std::string>>()
                              : before["events"].get<std::vector<std::string>>();
            bool active = body.value("active", before["active"].get<bool>());
            // Turned on again: its failures are forgiven, and delivery resumes where it stopped.
            auto after_rows = tx.exec_params(
                std::string("UPDATE refgate_webhooks SET url = $2, events = $3::text[], "
                            "active = $4, version = version + 1, updated_at = now(), "
                            "disabled_at = CASE WHEN $4 THEN NULL ELSE disabled_at END, "
                            "disabled_reason = CASE WHEN $4 THEN NULL ELSE disabled_reason END, "
                            "failing_since = CASE WHEN $4 AND NOT active THEN NULL ELSE "
                            "failing_since END WHERE id = $1 RETURNING ") +
                    kWebhookColumns,
                id, body.value("url", before["url"].get<std::string>()), text_array_literal(events),
                active);
            auto after = webhook_json(after_rows[0]);
            audit(tx, actor, id, "update", before.dump(), after.dump());
            return Outcome{.body = after, .version = after["version"].get<std::int64_t>()};
        });
    }

    Outcome remove(const Actor& actor, std::int64_t id, const Precondition& if_match) {
        return run([&](pqxx::work& tx) {
            auto rows = tx.exec_params(std::string("DELETE FROM refgate_webhooks WHERE id = $1 "
                                                   "AND ($2 OR version = $3) RETURNING ") +
                                           kWebhookColumns,
                                       id, if_match.any, if_match.version);
            if (rows.empty()) {
                bool exists =
                    !tx.exec_params("SELECT 1 FROM refgate_webhooks WHERE id = $1", id).empty();
                if (!exists) return webhook_not_found(id);
                return Outcome{.kind = OutcomeKind::stale,
                               .detail = "webhook " + std::to_string(id) + " changed"};
            }
            auto before = webhook_json(rows[0]);
            // Events no webhook waits for any more are dropped with it.
            tx.exec(
                "DELETE FROM refgate_webhook_events e WHERE NOT EXISTS (SELECT 1 FROM "
                "refgate_webhook_deliveries d WHERE d.event_id = e.id)");
            audit(tx, actor, id, "delete", before.dump(), "");
            return Outcome{.kind = OutcomeKind::deleted,
                           .version = before["version"].get<std::int64_t>()};
        });
    }

    Outcome rotate(const Actor& actor, std::int64_t id) {
        std::string secret = generate_webhook_secret();
        return run([&](pqxx::work& tx) {
            auto rows = tx.exec_params(
                "UPDATE refgate_webhooks SET secret = $2, version = version + 1, updated_at = "
                "now() WHERE id = $1 RETURNING version",
                id, secret);
            if (rows.empty()) return webhook_not_found(id);
            audit(tx, actor, id, "update", "", R"({"secret": "rotated"})");
            return Outcome{.body = {{"id", id}, {"secret", secret}},
                           .version = rows[0]["version"].as<std::int64_t>()};
        });
    }

    Outcome deliveries(std::int64_t id, std::size_t limit, std::optional<std::int64_t> before) {
        return run([&](pqxx::work& tx) {
            if (tx.exec_params("SELECT 1 FROM refgate_webhooks WHERE id = $1", id).empty())
                return webhook_not_found(id);
            auto items = nlohmann::ordered_json::array();
            auto rows = tx.exec_params(
                "SELECT d.id, d.event_id, e.type, d.status, d.attempt, d.response_status, "
                "d.duration_ms, d.error, "
                "to_char(d.queued_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS "
                "queued_at, to_char(d.last_attempt_at AT TIME ZONE 'UTC', "
                "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS last_attempt_at, "
                "to_char(d.next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
                "AS next_attempt_at FROM refgate_webhook_deliveries d JOIN "
                "refgate_webhook_events e ON e.id = d.event_id WHERE d.webhook_id = $1 AND "
                "($3 < 0 OR d.id < $3) ORDER BY d.id DESC LIMIT $2",
                id, static_cast<std::int64_t>(limit), before.value_or(-1));
            for (const auto& row : rows) {
                bool pending = row["status"].as<std::string>() == "pending";
                items.push_back(
                    {{"id", row["id"].as<std::int64_t>()},
                     {"event_id", "evt_" + row["event_id"].as<std::string>()},
                     {"type", row["type"].as<std::string>()},
                     {"status", row["status"].as<std::string>()},
                     {"attempt", row["attempt"].as<int>()},
                     {"response_status",
                      row["response_status"].is_null()
                          ? nlohmann::ordered_json(nullptr)
                          : nlohmann::ordered_json(row["response_status"].as<int>())},
                     {"duration_ms", row["duration_ms"].is_null()
                                         ? nlohmann::ordered_json(nullptr)
                                         : nlohmann::ordered_json(row["duration_ms"].as<int>())},
                     {"error", webhook_text(row["error"])},
                     {"queued_at", row["queued_at"].as<std::string>()},
                     {"last_attempt_at", webhook_text(row["last_attempt_at"])},
                     {"next_attempt_at",
                      pending ? webhook_text(row["next_attempt_at"]) : nullptr}});
            }
            nlohmann::ordered_json next = nullptr;
            if (rows.size() == limit) next = std::to_string(rows.back()["id"].as<std::int64_t>());
            return Outcome{.body = {{"items", std::move(items)}, {"next_cursor", next}}};
        });
    }

    Outcome retry(const Actor& actor, std::int64_t id, std::int64_t delivery) {
        return run([&](pqxx::work& tx) {
            auto rows = tx.exec_params(
                "UPDATE refgate_webhook_deliveries SET status = 'pending', queued_at = now(), "
                "next_attempt_at = now() WHERE id = $2 AND webhook_id = $1 RETURNING event_id",
                id, delivery);
            if (rows.empty())
                return Outcome{.kind = OutcomeKind::not_found,
                               .detail = "no delivery " + std::to_string(delivery) +
                                         " of webhook " + std::to_string(id)};
            audit(tx, actor, id, "update", "", nlohmann::json{{"retry_delivery", delivery}}.dump());
            return Outcome{.body = {{"id", delivery}, {"status", "pending"}}};
        });
    }

  private:
    static void audit(pqxx::work& tx, const Actor& actor, std::int64_t id, const char* action,
                      const std::string& before, const std::string& after) {
        tx.exec_params(
            "INSERT INTO refgate_audit (actor, entity, slug, action, before, after) VALUES ($1, "
            "'webhook', $2, $3, NULLIF($4, '')::jsonb, NULLIF($5, '')::jsonb)",
            actor.name, std::to_string(id), std::string(action), before, after);
    }

    WebhookStoreOptions options_;
    pg::ConnectionPool pool_;
};

std::shared_ptr<WebhookStore> make_webhook_store(WebhookStoreOptions options) {
    return std::make_shared<WebhookStore>(std::move(options));
}

namespace {

class Webhooks final : public Resource {
  public:
    explicit Webhooks(WebhookStore* store) : store_(store) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        if (store_ == nullptr)
            return answer.problem(503, "unavailable", "webhooks are not configured here");
        Operation op = r.route->operation;
        if (op == Operation::list_webhooks) return answer.outcome(store_->list());
        if (op == Operation::create_webhook) {
            auto o = store_->create(r.actor, r.body);
            std::string location;
            if (o.kind == OutcomeKind::created)
                location = "/api/v1/webhooks/" + std::to_string(o.body["id"].get<std::int64_t>());
            return answer.outcome(o, location);
        }
        auto id = webhook_id_in(r.http.path());
        if (!id) return answer.problem(404, "not-found", "no such webhook");
        switch (op) {
            case Operation::get_webhook:
                return answer.outcome(store_->get(*id));
            case Operation::update_webhook:
                return answer.outcome(store_->update(r.actor, *id, r.if_match, r.body));
            case Operation::delete_webhook:
                return answer.outcome(store_->remove(r.actor, *id, r.if_match));
            case Operation::rotate_webhook_secret:
                return answer.outcome(store_->rotate(r.actor, *id));
            case Operation::webhook_deliveries: {
                auto limit = limit_parameter(r.http.query(), 50, 500);
                if (!limit) return answer.invalid_query({{"limit", "must be 1 to 500"}});
                auto cursor = domain::query_value(r.http.query(), "cursor");
                std::optional<std::int64_t> before;
                if (cursor) {
                    before = numeric_id(*cursor);
                    if (!before) return answer.invalid_query({{"cursor", "must be a next_cursor"}});
                }
                return answer.outcome(store_->deliveries(*id, *limit, before));
            }
            default: {
                auto delivery = numeric_id(r.name);
                if (!delivery) return answer.problem(404, "not-found", "no such delivery");
                return answer.outcome(store_->retry(r.actor, *id, *delivery));
            }
        }
    }

  private:
    WebhookStore* store_;
};

}  // namespace

std::span<const Route> webhook_routes() { return kWebhookRoutes; }

std::unique_ptr<Resource> webhooks_resource(WebhookStore* store) {
    return std::make_unique<Webhooks>(store);
}

}  // namespace refgate::admin
