// `refgate migrate`: versioned, applied once, safe to run twice and from two instances at once.

#include <catch2/catch.hpp>
#include <future>

#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace migrate_test {

using refgate::test::run_refgate;
using refgate::test::TestDatabase;

TEST_CASE("migrate applies each migration once and records it", "[migrate][pg]") {
    TestDatabase db(false);
    auto first = run_refgate({"migrate"}, {{"REFGATE_DATABASE_URL", db.url()}});
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    auto applied = db.scalar("SELECT count(*) FROM refgate_schema_migrations");
    CHECK(applied != "0");
    auto second = run_refgate({"migrate"}, {{"REFGATE_DATABASE_URL", db.url()}});
    REQUIRE(second.exit_code == 0);
    CHECK(second.out.find("migrations applied: 0") != std::string::npos);
    CHECK(db.scalar("SELECT count(*) FROM refgate_schema_migrations") == applied);
}

TEST_CASE("two instances migrating the same database at once both succeed", "[migrate][pg]") {
    TestDatabase db(false);
    auto env = refgate::test::EnvPairs{{"REFGATE_DATABASE_URL", db.url()}};
    auto a = std::async(std::launch::async, [&] { return run_refgate({"migrate"}, env); });
    auto b = std::async(std::launch::async, [&] { return run_refgate({"migrate"}, env); });
    auto ra = a.get();
    auto rb = b.get();
    INFO(ra.err << rb.err);
    CHECK(ra.exit_code == 0);
    CHECK(rb.exit_code == 0);
    CHECK(db.scalar("SELECT count(*) FROM refgate_schema_migrations") != "0");
    CHECK(db.scalar("SELECT count(*) FROM refgate_snapshot_version") == "1");
}

TEST_CASE("migrate against an unreachable database fails with one clear line", "[migrate]") {
    auto port = std::to_string(refgate::test::unused_port());
    auto result = run_refgate(
        {"migrate"}, {{"REFGATE_DATABASE_URL", "postgresql://refgate@127.0.0.1:" + port + "/x"}});
    CHECK(result.exit_code == 1);
    CHECK(result.err.find("database_error") != std::string::npos);
}

TEST_CASE("a bad setting stops start-up with one line naming it", "[config]") {
    auto result = run_refgate({"check-config"}, {{"REFGATE_THREADS", "lots"}});
    CHECK(result.exit_code == 2);
    CHECK(result.err.find("REFGATE_THREADS") != std::string::npos);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);

    auto serve = run_refgate({"serve"}, {{"REFGATE_LISTEN", "8080"}});
    CHECK(serve.exit_code == 2);
    CHECK(serve.err.find("REFGATE_LISTEN") != std::string::npos);

    auto good =
        run_refgate({"check-config"}, {{"REFGATE_DATABASE_URL", "postgresql://u:secret@h/db"}});
    CHECK(good.exit_code == 0);
    CHECK(good.out.find("secret") == std::string::npos);
}

}  // namespace migrate_test
