// Readable placement tokens under concurrent saves (issue 42): two link saves that would give
// colliding tokens, released at the same moment, cannot both pass the collision check.

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace placements_race_test {

using namespace refgate::test;
using namespace std::chrono_literals;

namespace {

// Readable tokens without a separator: "tail" + channel "scalenl" and "tailscale" + "nl" would
// be one token, so links "tail" and "tailscale" of this partner must not both exist.
const char* const kDocument = R"json({
  "partners": [
    {"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks42",
     "allowed_domains": ["tailscale.com"], "subid_param": "subId1", "subid_style": "readable",
     "subid_charset": "a-z0-9"}
  ],
  "links": []
})json";

// Backends of the database waiting for a lock, besides the test's own.
int waiting_for_locks(pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    return tx
        .exec1(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
            "wait_event_type = 'Lock' AND pid <> pg_backend_pid()")[0]
        .as<int>();
}

}  // namespace

TEST_CASE("two concurrent link saves whose readable tokens would collide do not both pass",
          "[placements][admin][pg]") {
    TestDatabase db;
    REQUIRE(import_document(db.url(), kDocument));
    std::string editor = create_api_token(db.url(), "editors", "editor");
    ServiceProcess service{{.database_url = db.url()}};
    auto create = [&](const std::string& slug) {
        std::string body = R"({"slug": ")" + slug +
                           R"(", "partner": "tailscale", "destination": "https://tailscale.com/)" +
                           slug + R"("})";
        return http_request(
            service.admin_port(), "POST", "/api/v1/links",
            {{"Authorization", "Bearer " + editor}, {"Content-Type", "application/json"}}, body);
    };

    // Several rounds, each a pair of slugs where one begins the other. In each, the test holds
    // the partner's row until both saves wait for it, then lets them go at once.
    constexpr int kRounds = 3;
    for (int round = 0; round < kRounds; ++round) {
        const std::string shorter = "r" + std::to_string(round) + "tail";
        const std::string longer = shorter + "scale";
        pqxx::connection holder(db.url());
        pqxx::connection watcher(db.url());
        auto hold = std::make_unique<pqxx::work>(holder);
        hold->exec("SELECT 1 FROM refgate_partners WHERE slug = 'tailscale' FOR UPDATE");
        auto first = std::async(std::launch::async, [&] { return create(shorter); });
        auto second = std::async(std::launch::async, [&] { return create(longer); });
        auto deadline = std::chrono::steady_clock::now() + 10s;
        while (waiting_for_locks(watcher) < 2 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(10ms);
        REQUIRE(waiting_for_locks(watcher) >= 2);
        hold->abort();  // both saves go on together
        auto a = first.get();
        auto b = second.get();
        INFO("round " << round << ": " << a.status << " " << a.body << " / " << b.status << " "
                      << b.body);
        // Exactly one is created; the other is refused, naming both links.
        CHECK(((a.status == 201 && b.status == 422) || (a.status == 422 && b.status == 201)));
        const auto& refused = a.status == 422 ? a : b;
        CHECK(refused.body.find("'" + shorter + "' and '" + longer + "' could collide") !=
              std::string::npos);
        CHECK(db.scalar("SELECT count(*) FROM refgate_links WHERE slug IN ('" + shorter + "', '" +
                        longer + "')") == "1");
    }
}

}  // namespace placements_race_test
