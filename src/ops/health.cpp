#include "refgate/ops/health.hpp"

#include <chrono>
#include <nlohmann/json.hpp>

namespace refgate::ops {

void HealthHandler::handle(const http::Request& request, http::Response& response) {
    if (request.method != http::Method::get && request.method != http::Method::head) {
        response.simple_page(405, "Method Not Allowed");
        response.add_header("Allow", "GET, HEAD");
        return;
    }
    response.add_header("Cache-Control", "no-store");
    if (request.path() == "/healthz") {
        response.json(200, "{\"status\":\"ok\"}\n");
        return;
    }
    auto snapshot = store_.current();
    bool draining = health_.draining.load(std::memory_order_relaxed);
    bool ready = snapshot != nullptr && !draining;
    if (detail_ == ReadinessDetail::verdict) {
        response.json(ready ? 200 : 503, ready ? "{\"ready\":true}\n" : "{\"ready\":false}\n");
        return;
    }
    nlohmann::ordered_json body;
    body["ready"] = ready;
    body["draining"] = draining;
    if (snapshot) {
        static const domain::SystemClock system_clock;
        auto now = (clock_ != nullptr ? *clock_ : system_clock).unix_seconds();
        auto age = runtime::snapshot_age_seconds(now, snapshot->built_at(),
                                                 health_.snapshot_checked_at.load());
        body["snapshot"] = {{"version", snapshot->version()},
                            {"source", snapshot->source()},
                            {"links", snapshot->link_count()},
                            {"age_seconds", age}};
    } else {
        body["snapshot"] = nullptr;
    }
    body["postgres"] = to_string(health_.postgres.load());
    body["redis"] = to_string(health_.redis.load());
    // Known once the flusher has connected: whether a flushed count survives a failover.
    if (int sync = health_.postgres_sync_replication.load(); sync >= 0)
        body["postgres_sync_replication"] = sync == 1;
    else
        body["postgres_sync_replication"] = nullptr;
    if (int country = health_.country_db.load(); country >= 0)
        body["country_db"] = country == 1 ? "loaded" : "none: country rules skipped";
    if (clicks_ != nullptr) {
        body["clicks"] = {{"pending_keys", clicks_->pending_keys.load()},
                          {"dropped_clicks", clicks_->dropped_clicks.load()},
                          {"redis_config_risky", clicks_->redis_config_risky.load()}};
    }
    response.json(ready ? 200 : 503, body.dump() + "\n");
}

}  // namespace refgate::ops
