// The admin listener during a database stall: health and metrics answer from memory at once, API
// calls get 503 with Retry-After within the configured wait, and the listener's connection cap.

#include <catch2/catch.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/http_client.hpp"
#include "support/private_postgres.hpp"
#include "support/service_process.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace admin_listener_test {

using namespace refgate::test;
using namespace std::chrono_literals;
using Headers = std::vector<std::pair<std::string, std::string>>;
using Clock = std::chrono::steady_clock;

namespace {

// Lets a stopped database go on at the end of the scope, even when a check failed.
struct ResumeAtEnd {
    PrivatePostgres& postgres;
    ~ResumeAtEnd() { postgres.resume(); }
};

struct Timed {
    HttpResponse response;
    Clock::duration took;
};

Timed timed_get(int port, std::string_view target, const Headers& headers = {}) {
    auto started = Clock::now();
    auto response = http_get(port, target, headers);
    return {std::move(response), Clock::now() - started};
}

}  // namespace

TEST_CASE(
    "while PostgreSQL stalls, admin health and metrics answer at once and API calls get 503 "
    "with Retry-After",
    "[admin][pg][fault]") {
    PrivatePostgres postgres;
    std::string url = postgres.create_database("refgate");
    Headers viewer{{"Authorization", "Bearer " + create_api_token(url, "scraper", "viewer")}};
    ServiceProcess service({.database_url = url, .env = {{"REFGATE_ADMIN_DB_WAIT_MS", "1000"}}});
    REQUIRE(http_get(service.admin_port(), "/api/v1/partners", viewer).status == 200);

    postgres.pause();
    ResumeAtEnd resume_at_end{postgres};
    // More hanging calls than the server has threads for blocking work.
    std::vector<std::unique_ptr<RawConnection>> hanging;
    for (int i = 0; i < 40; ++i) {
        hanging.push_back(std::make_unique<RawConnection>(service.admin_port()));
        REQUIRE(hanging.back()->send("GET /api/v1/partners HTTP/1.1\r\nHost: t\r\nAuthorization: " +
                                     viewer[0].second + "\r\n\r\n"));
    }
    std::this_thread::sleep_for(200ms);

    for (auto target : {"/healthz", "/readyz", "/metrics"}) {
        auto t = timed_get(service.admin_port(), target);
        INFO(target);
        CHECK(t.response.status == 200);
        CHECK(t.took < 500ms);
    }
    auto t = timed_get(service.admin_port(), "/api/v1/partners", viewer);
    CHECK(t.response.status == 503);
    CHECK(t.response.header("Retry-After") == "1");
    CHECK(t.response.header("Content-Type") == "application/problem+json");
    // Bounded: the wait for a pool thread, then for a connection slot or a connect (libpq's
    // connect timeout is 2 s at least), each at most admin_db_wait; plus a margin.
    CHECK(t.took < 1000ms + 1000ms + 2000ms + 1000ms);
    // Every hanging call has its answer within the wait too (a few may hold pool threads).
    int answered = 0;
    for (auto& c : hanging) {
        auto r = c->read_response(100ms);
        if (r && r->status == 503) ++answered;
    }
    CHECK(answered >= 30);
    auto metrics = http_get(service.admin_port(), "/metrics").body;
    CHECK(metrics.find("refgate_admin_unavailable_total{reason=\"busy\"} 0\n") ==
          std::string::npos);

    postgres.resume();
    auto deadline = Clock::now() + 15s;
    int status = 0;
    while (Clock::now() < deadline) {
        status = http_get(service.admin_port(), "/api/v1/partners", viewer).status;
        if (status == 200) break;
        std::this_thread::sleep_for(200ms);
    }
    CHECK(status == 200);
}

TEST_CASE("the admin listener closes connections past admin_max_connections at accept",
          "[admin][http]") {
    std::string unreachable =
        "postgresql://refgate@127.0.0.1:" + std::to_string(unused_port()) + "/refgate";
    ServiceProcess service(
        {.database_url = unreachable, .env = {{"REFGATE_ADMIN_MAX_CONNECTIONS", "2"}}});
    RawConnection first(service.admin_port());
    RawConnection second(service.admin_port());
    for (auto* c : {&first, &second}) {
        REQUIRE(c->send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"));
        CHECK(c->read_response().value_or(HttpResponse{}).status == 200);
    }
    RawConnection third(service.admin_port());
    CHECK(third.wait_closed(2s));
    // The public listener has a cap of its own.
    CHECK(http_get(service.port(), "/healthz").status == 200);
}

}  // namespace admin_listener_test
