#pragma once

// What the stats tests share (stats_test.cpp, domains_test.cpp): a database with the test's
// document, a Redis of the test's own, a token, and a service that never flushes by itself (the
// test flushes with `refgate flush`, so that some clicks are flushed and some still in Redis).

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"
#include "support/test_env.hpp"

namespace refgate::test::stats {

struct StatsService {
    // `document` imported before the service starts; a token `token_name` of `role`.
    StatsService(const std::string& document, const std::string& token_name,
                 const std::string& role)
        : token(create_api_token(db.url(), token_name, role)),
          imported(import_document(db.url(), document)) {}

    TestDatabase db;
    PrivateRedis redis;
    std::string token;
    bool imported;
    ServiceProcess service{{.database_url = db.url(),
                            .redis_url = redis.url(),
                            .env = {{"REFGATE_FLUSH_INTERVAL_MS", "3600000"}}}};
    std::string today = utc_today();

    // A GET of the admin API with the token.
    HttpResponse get(const std::string& target,
                     std::vector<std::pair<std::string, std::string>> headers = {}) {
        headers.emplace_back("Authorization", "Bearer " + token);
        return http_get(service.admin_port(), target, headers);
    }
    // Its JSON answer, which must be 200.
    nlohmann::json get_json(const std::string& target) {
        auto r = get(target);
        INFO(target << " -> " << r.status << " " << r.body);
        REQUIRE(r.status == 200);
        return nlohmann::json::parse(r.body);
    }
    // `refgate flush`: every bucket in Redis into PostgreSQL now.
    void flush() {
        auto r = run_refgate(
            {"flush"}, {{"REFGATE_DATABASE_URL", db.url()}, {"REFGATE_REDIS_URL", redis.url()}});
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
    }
};

}  // namespace refgate::test::stats
