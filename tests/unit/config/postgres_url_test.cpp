// libpq URIs naming a primary and its standbys: what refgate reads from them, adds to them and
// hides when it shows them.

#include "refgate/config/postgres_url.hpp"

#include <catch2/catch.hpp>
#include <map>

#include "refgate/config/config.hpp"
#include "refgate/pg/connection.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace postgres_url_test {

using namespace refgate;

namespace {

config::Config config_with(const std::string& name, const std::string& value) {
    std::map<std::string, std::string> vars{{name, value}};
    return config::load_config(std::nullopt,
                               [vars](const std::string& key) -> std::optional<std::string> {
                                   auto it = vars.find(key);
                                   if (it == vars.end()) return std::nullopt;
                                   return it->second;
                               });
}

std::size_t host_count(const std::string& url) {
    return config::postgres_url_hosts(url).value().size();
}

}  // namespace

TEST_CASE("a URI's hosts are counted from its host list, or from its host parameter",
          "[config][postgres]") {
    CHECK(host_count("postgresql://127.0.0.1:5432/refgate") == 1);
    CHECK(host_count("postgresql:///refgate") == 1);
    CHECK(host_count("postgresql://u:p@w@h1:5432,h2:5433,[::1]:5434/refgate?x=1") == 3);
    CHECK(host_count("postgres://h1,h2/refgate") == 2);
    CHECK(host_count("postgresql:///refgate?host=h1,h2&port=5432,5433") == 2);
    CHECK(config::postgres_url_hosts("postgresql://h1:5432,h2:5433/refgate").value() ==
          std::vector<std::string>{"h1:5432", "h2:5433"});
}

TEST_CASE("a host list with an empty entry or a bad port is not a PostgreSQL URI",
          "[config][postgres]") {
    for (const char* bad :
         {"postgresql://h1,,h2/db", "postgresql://h1:5432,/db", "postgresql://h1:x,h2/db",
          "postgresql://h1:0/db", "postgresql://h1:65536/db", "postgresql://[::1/db",
          "postgresql://:5432/db", "mysql://h/db", "h1,h2"}) {
        INFO(bad);
        CHECK_FALSE(config::postgres_url_hosts(bad).has_value());
    }
}

TEST_CASE("a multi-host REFGATE_DATABASE_URL is accepted and a broken one named at start",
          "[config][postgres]") {
    auto c =
        config_with("REFGATE_DATABASE_URL",
                    "postgresql://u:pw@h1:5432,h2:5433/refgate?target_session_attrs=read-write");
    CHECK(c.database_url.find("h2:5433") != std::string::npos);
    try {
        config_with("REFGATE_DATABASE_URL", "postgresql://u:secret@h1:5432,h2:x/refgate");
        FAIL("accepted a bad port");
    } catch (const config::ConfigError& e) {
        std::string message = e.what();
        CHECK(message.find("REFGATE_DATABASE_URL") != std::string::npos);
        CHECK(message.find("secret") == std::string::npos);
    }
}

TEST_CASE("REFGATE_STATS_DATABASE_URL is optional, and validated like the main URL",
          "[config][postgres]") {
    CHECK(config_with("REFGATE_THREADS", "2").stats_database_url.empty());
    auto c = config_with("REFGATE_STATS_DATABASE_URL", "postgresql://u:pw@replica:5432/refgate");
    CHECK(c.stats_database_url == "postgresql://u:pw@replica:5432/refgate");
    bool shown = false;
    for (const auto& [key, value] : config::describe_config(c)) {
        if (key != "stats_database_url") continue;
        shown = true;
        CHECK(value == "postgresql://u:***@replica:5432/refgate");
    }
    CHECK(shown);
    CHECK_THROWS_AS(config_with("REFGATE_STATS_DATABASE_URL", "redis://replica"),
                    config::ConfigError);
}

TEST_CASE("redaction hides the password of a URI naming several hosts", "[config][postgres]") {
    CHECK(config::redact_secrets(
              "postgresql://u:pw@h1:5432,h2:5433/db?target_session_attrs=read-write") ==
          "postgresql://u:***@h1:5432,h2:5433/db?target_session_attrs=read-write");
    CHECK(config::redact_secrets("postgresql://u:pw@[::1]:5432,[::2]:5433/db") ==
          "postgresql://u:***@[::1]:5432,[::2]:5433/db");
    CHECK(config::redact_secrets("postgresql://u:p:w@h1,h2?password=x") ==
          "postgresql://u:***@h1,h2?password=***");
    CHECK(config::redact_secrets("postgresql://u@h1:5432,h2:5433/db") ==
          "postgresql://u@h1:5432,h2:5433/db");
}

TEST_CASE("a connect timeout joins the URI's query, and never replaces one it has",
          "[config][postgres]") {
    CHECK(pg::connection_uri("postgresql://h/db", 3) == "postgresql://h/db?connect_timeout=3");
    CHECK(pg::connection_uri("postgresql://h/db?sslmode=require", 3) ==
          "postgresql://h/db?sslmode=require&connect_timeout=3");
    CHECK(pg::connection_uri("postgresql://h/db?", 2) == "postgresql://h/db?connect_timeout=2");
    CHECK(pg::connection_uri("postgresql://h/db?a=1&", 2) ==
          "postgresql://h/db?a=1&connect_timeout=2");
    CHECK(pg::connection_uri("postgresql://h/db?connect_timeout=9", 3) ==
          "postgresql://h/db?connect_timeout=9");
    // A parameter whose value mentions the key is no such parameter.
    CHECK(pg::connection_uri("postgresql://h/db?options=-c%20x%3Dconnect_timeout=1", 3) ==
          "postgresql://h/db?options=-c%20x%3Dconnect_timeout=1&connect_timeout=3");
}

TEST_CASE("a URI naming several hosts connects to the writable one unless it says otherwise",
          "[config][postgres]") {
    CHECK(pg::connection_uri("postgresql://h1,h2/db", 3) ==
          "postgresql://h1,h2/db?connect_timeout=3&target_session_attrs=read-write");
    CHECK(pg::connection_uri("postgresql://h1,h2/db?target_session_attrs=primary", 3) ==
          "postgresql://h1,h2/db?target_session_attrs=primary&connect_timeout=3");
    CHECK(pg::connection_uri("postgresql://h1,h2/db", 3, pg::Server::any) ==
          "postgresql://h1,h2/db?connect_timeout=3");
    CHECK(pg::connection_uri("postgresql://h1/db", 3) == "postgresql://h1/db?connect_timeout=3");
}

}  // namespace postgres_url_test
