#include "refgate/ops/health.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refgate/runtime/snapshot_store.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace health_test {

namespace {

namespace http = refgate::http;

http::Response ask(refgate::ops::HealthHandler& handler, std::string_view target,
                   http::Method method = http::Method::get) {
    std::vector<http::HeaderField> fields;
    http::Request request;
    request.method = method;
    request.target = target;
    request.fields = &fields;
    http::Response response;
    handler.handle(request, response);
    return response;
}

}  // namespace

TEST_CASE("healthz answers 200 as long as the process runs", "[health]") {
    refgate::runtime::SnapshotStore store;
    refgate::runtime::HealthState health;
    refgate::ops::HealthHandler handler(store, health);
    auto response = ask(handler, "/healthz");
    CHECK(response.status() == 200);
    CHECK(nlohmann::json::parse(response.body())["status"] == "ok");
}

TEST_CASE("readyz answers 503 until a snapshot is loaded, then 200 with its version", "[health]") {
    refgate::runtime::SnapshotStore store;
    refgate::runtime::HealthState health;
    refgate::ops::HealthHandler handler(store, health);

    auto before = ask(handler, "/readyz");
    CHECK(before.status() == 503);
    auto body = nlohmann::json::parse(before.body());
    CHECK(body["ready"] == false);
    CHECK(body["snapshot"].is_null());

    store.publish(refgate::domain::Snapshot::build(9, {}, {}, {}, "file"));
    health.postgres = refgate::runtime::DependencyState::down;
    health.redis = refgate::runtime::DependencyState::up;
    auto after = ask(handler, "/readyz");
    CHECK(after.status() == 200);
    body = nlohmann::json::parse(after.body());
    CHECK(body["ready"] == true);
    CHECK(body["snapshot"]["version"] == 9);
    CHECK(body["snapshot"]["source"] == "file");
    CHECK(body["postgres"] == "down");
    CHECK(body["redis"] == "up");
}

TEST_CASE(
    "readyz says whether flushed counts are replicated synchronously once the flusher has "
    "connected, and stays ready either way",
    "[health]") {
    refgate::runtime::SnapshotStore store;
    refgate::runtime::HealthState health;
    refgate::ops::HealthHandler handler(store, health);
    store.publish(refgate::domain::Snapshot::build(9, {}, {}, {}, "postgres"));
    auto field = [&] {
        auto response = ask(handler, "/readyz");
        CHECK(response.status() == 200);
        return nlohmann::json::parse(response.body())["postgres_sync_replication"];
    };
    CHECK(field().is_null());
    health.postgres_sync_replication = 0;
    CHECK(field() == false);
    health.postgres_sync_replication = 1;
    CHECK(field() == true);
}

TEST_CASE("readyz answers 503 on both listeners once the instance drains, healthz still 200",
          "[health]") {
    refgate::runtime::SnapshotStore store;
    refgate::runtime::HealthState health;
    store.publish(refgate::domain::Snapshot::build(3, {}, {}, {}, "postgres"));
    refgate::ops::HealthHandler verdict(store, health, nullptr,
                                        refgate::ops::ReadinessDetail::verdict);
    refgate::ops::HealthHandler full(store, health, nullptr, refgate::ops::ReadinessDetail::full);
    REQUIRE(ask(verdict, "/readyz").status() == 200);
    REQUIRE(ask(full, "/readyz").status() == 200);

    health.draining = true;
    auto public_answer = ask(verdict, "/readyz");
    CHECK(public_answer.status() == 503);
    CHECK(public_answer.body() == "{\"ready\":false}\n");
    auto admin_answer = ask(full, "/readyz");
    CHECK(admin_answer.status() == 503);
    auto body = nlohmann::json::parse(admin_answer.body());
    CHECK(body["ready"] == false);
    CHECK(body["draining"] == true);
    CHECK(body["snapshot"]["version"] == 3);
    CHECK(ask(verdict, "/healthz").status() == 200);
}

TEST_CASE("health endpoints refuse methods other than GET and HEAD", "[health]") {
    refgate::runtime::SnapshotStore store;
    refgate::runtime::HealthState health;
    refgate::ops::HealthHandler handler(store, health);
    auto response = ask(handler, "/healthz", http::Method::post);
    CHECK(response.status() == 405);
    CHECK(response.headers().find("Allow: GET, HEAD\r\n") != std::string::npos);
}

TEST_CASE("the public readyz tells the verdict only, nothing about PostgreSQL, Redis or queues",
          "[health]") {
    refgate::runtime::SnapshotStore store;
    refgate::runtime::HealthState health;
    refgate::metrics::ClickStats clicks;
    refgate::ops::HealthHandler handler(store, health, &clicks,
                                        refgate::ops::ReadinessDetail::verdict);
    auto before = ask(handler, "/readyz");
    CHECK(before.status() == 503);
    CHECK(before.body() == "{\"ready\":false}\n");

    store.publish(refgate::domain::Snapshot::build(9, {}, {}, {}, "postgres"));
    health.postgres = refgate::runtime::DependencyState::down;
    auto after = ask(handler, "/readyz");
    CHECK(after.status() == 200);
    CHECK(after.body() == "{\"ready\":true}\n");
}

TEST_CASE("readyz counts the snapshot's age from its last confirmation against PostgreSQL",
          "[health]") {
    refgate::runtime::SnapshotStore store;
    refgate::runtime::HealthState health;
    refgate::ops::HealthHandler handler(store, health);
    // Built just now (a scheduled code change rebuilds it), last confirmed 100 s ago.
    store.publish(refgate::domain::Snapshot::build(9, {}, {}, {}, "postgres"));
    auto now = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
    health.snapshot_checked_at = now - 100;
    auto age = nlohmann::json::parse(ask(handler, "/readyz").body())["snapshot"]["age_seconds"];
    CHECK(age.get<std::int64_t>() >= 100);
    CHECK(age.get<std::int64_t>() < 110);
}

TEST_CASE("a snapshot never confirmed against PostgreSQL counts its age from its loading",
          "[health]") {
    CHECK(refgate::runtime::snapshot_age_seconds(1'000, 900, 0) == 100);
    CHECK(refgate::runtime::snapshot_age_seconds(1'000, 990, 800) == 200);
    CHECK(refgate::runtime::snapshot_age_seconds(1'000, 1'005, 0) == 0);
}

}  // namespace health_test
