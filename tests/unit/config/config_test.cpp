#include "refgate/config/config.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace config_test {

namespace {

using refgate::config::Config;
using refgate::config::ConfigError;
using refgate::config::EnvLookup;

// A fake environment: only what the test puts in the map is set.
EnvLookup fake_env(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

// A config file in the temp directory, removed when the test ends.
class TempConfigFile {
  public:
    explicit TempConfigFile(const std::string& content) {
        static int counter = 0;
        path_ = std::filesystem::temp_directory_path() /
                ("refgate-config-test-" + std::to_string(::getpid()) + "-" +
                 std::to_string(++counter) + ".json");
        std::ofstream(path_) << content;
    }
    ~TempConfigFile() {
        std::error_code ignored;
        std::filesystem::remove(path_, ignored);
    }
    TempConfigFile(const TempConfigFile&) = delete;
    TempConfigFile& operator=(const TempConfigFile&) = delete;

    std::string path() const { return path_.string(); }

  private:
    std::filesystem::path path_;
};

// The message of the ConfigError that loading throws; fails the test when nothing is thrown.
std::string config_error(const std::optional<std::string>& file, const EnvLookup& env) {
    try {
        refgate::config::load_config(file, env);
    } catch (const ConfigError& e) {
        return e.what();
    }
    FAIL("load_config accepted a bad setting");
    return {};
}

}  // namespace

TEST_CASE("without a file or environment the defaults apply", "[config]") {
    Config c = refgate::config::load_config(std::nullopt, fake_env({}));
    CHECK(c.listen.to_string() == "127.0.0.1:8080");
    CHECK(c.admin_listen.to_string() == "127.0.0.1:9090");
    CHECK(c.database_url == "postgresql://127.0.0.1:5432/refgate");
    CHECK(c.redis_url == "redis://127.0.0.1:6379/0");
    CHECK(c.threads == 2);
    CHECK(c.snapshot_file == "refgate-snapshot.json");
    CHECK(c.referrer_policy == "strict-origin-when-cross-origin");
    CHECK_FALSE(c.allow_http_destinations);
    CHECK(c.http.max_header_bytes == 8 * 1024);
    CHECK(c.http.max_target_bytes == 2 * 1024);
    CHECK(c.http.max_connections == 10'000);
    CHECK(c.admin_http.max_body_bytes == 64 * 1024);
    CHECK(c.reload_interval == std::chrono::milliseconds{5'000});
    CHECK(c.log_level == "info");
}

TEST_CASE("environment variables override the config file", "[config]") {
    TempConfigFile file(R"({"threads": 4, "listen": "0.0.0.0:8081", "log_level": "warn",
                            "allow_http_destinations": true, "read_timeout_ms": 2500})");
    Config c = refgate::config::load_config(file.path(),
                                            fake_env({{"REFGATE_THREADS", "8"},
                                                      {"REFGATE_REFERRER_POLICY", "no-referrer"},
                                                      {"REFGATE_ADMIN_LISTEN", "[::1]:9191"}}));
    CHECK(c.threads == 8);
    CHECK(c.listen.to_string() == "0.0.0.0:8081");
    CHECK(c.log_level == "warn");
    CHECK(c.allow_http_destinations);
    CHECK(c.http.read_timeout == std::chrono::milliseconds{2'500});
    CHECK(c.referrer_policy == "no-referrer");
    CHECK(c.admin_listen.host == "::1");
    CHECK(c.admin_listen.port == 9191);
    CHECK(c.admin_listen.to_string() == "[::1]:9191");
}

TEST_CASE("a bad environment value is a one-line error naming the variable", "[config]") {
    std::string name;
    std::string value;
    SECTION("zero threads") {
        name = "REFGATE_THREADS";
        value = "0";
    }
    SECTION("threads that are not a number") {
        name = "REFGATE_THREADS";
        value = "abc";
    }
    SECTION("threads with trailing garbage") {
        name = "REFGATE_THREADS";
        value = "4x";
    }
    SECTION("a listen address without a port") {
        name = "REFGATE_LISTEN";
        value = "nohostport";
    }
    SECTION("a listen port out of range") {
        name = "REFGATE_LISTEN";
        value = "127.0.0.1:70000";
    }
    SECTION("a redis url of another scheme") {
        name = "REFGATE_REDIS_URL";
        value = "http://x";
    }
    SECTION("a database url of another database") {
        name = "REFGATE_DATABASE_URL";
        value = "mysql://x";
    }
    SECTION("an unknown referrer policy") {
        name = "REFGATE_REFERRER_POLICY";
        value = "everywhere";
    }
    SECTION("a boolean that is not one") {
        name = "REFGATE_ALLOW_HTTP_DESTINATIONS";
        value = "maybe";
    }
    SECTION("an unknown log level") {
        name = "REFGATE_LOG_LEVEL";
        value = "loud";
    }
    SECTION("a zero timeout") {
        name = "REFGATE_READ_TIMEOUT_MS";
        value = "0";
    }

    std::string message = config_error(std::nullopt, fake_env({{name, value}}));
    CHECK_THAT(message, Catch::Contains(name));
    CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("the channel cap per link and day is 100 unless set, from 1 to 100000", "[config]") {
    CHECK(
        refgate::config::load_config(std::nullopt, fake_env({})).clicks.max_channels_per_link_day ==
        100);
    auto set = refgate::config::load_config(std::nullopt,
                                            fake_env({{"REFGATE_MAX_CHANNELS_PER_LINK_DAY", "5"}}));
    CHECK(set.clicks.max_channels_per_link_day == 5);
    for (const char* bad : {"0", "100001", "-1", "lots"}) {
        INFO(bad);
        CHECK_THAT(
            config_error(std::nullopt, fake_env({{"REFGATE_MAX_CHANNELS_PER_LINK_DAY", bad}})),
            Catch::Contains("REFGATE_MAX_CHANNELS_PER_LINK_DAY"));
    }
}

TEST_CASE("stats retention keeps every day unless set, and at least a week", "[config]") {
    CHECK(refgate::config::load_config(std::nullopt, fake_env({})).clicks.stats_retention_days ==
          0);
    auto set = refgate::config::load_config(std::nullopt,
                                            fake_env({{"REFGATE_STATS_RETENTION_DAYS", "400"}}));
    CHECK(set.clicks.stats_retention_days == 400);
    for (const char* bad : {"6", "1", "36501", "-7", "a year"}) {
        INFO(bad);
        CHECK_THAT(config_error(std::nullopt, fake_env({{"REFGATE_STATS_RETENTION_DAYS", bad}})),
                   Catch::Contains("REFGATE_STATS_RETENTION_DAYS"));
    }
}

TEST_CASE("an unknown key in the config file is an error naming the key", "[config]") {
    TempConfigFile file(R"({"threads": 2, "thread_count": 4})");
    std::string message = config_error(file.path(), fake_env({}));
    CHECK_THAT(message, Catch::Contains("thread_count"));
    CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("a bad value in the config file is an error naming the key", "[config]") {
    TempConfigFile file(R"({"threads": 0})");
    std::string message = config_error(file.path(), fake_env({}));
    CHECK_THAT(message, Catch::Contains("threads"));
    CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("a config value of the wrong JSON type is an error naming the key", "[config]") {
    TempConfigFile file(R"({"listen": ["127.0.0.1", 8080]})");
    std::string message = config_error(file.path(), fake_env({}));
    CHECK_THAT(message, Catch::Contains("listen"));
    CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("a config file that is not JSON is a one-line error naming the file", "[config]") {
    TempConfigFile file("threads = 4\nlisten = \"0.0.0.0:80\"\n");
    std::string message = config_error(file.path(), fake_env({}));
    CHECK_THAT(message, Catch::Contains(file.path()));
    CHECK_THAT(message, Catch::Contains("JSON"));
    CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("a config file that cannot be read is an error naming the file", "[config]") {
    std::string missing = "/nonexistent/refgate-config-test.json";
    std::string message = config_error(missing, fake_env({}));
    CHECK_THAT(message, Catch::Contains(missing));
}

// Regression: the bad value is quoted verbatim, so a value with a line break gives a multi-line
// what() (config.hpp promises one line; a log line or exit message is split, and could be forged).
TEST_CASE("a bad value with a line break still gives a one-line error", "[config]") {
    std::string message =
        config_error(std::nullopt, fake_env({{"REFGATE_LISTEN", "127.0.0.1\n{\"level\":\"x\"}"}}));
    CHECK_THAT(message, Catch::Contains("REFGATE_LISTEN"));
    CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("endpoints parse as host:port or [v6]:port", "[config]") {
    auto v4 = refgate::config::parse_endpoint("10.0.0.1:80");
    REQUIRE(v4.has_value());
    CHECK(v4->host == "10.0.0.1");
    CHECK(v4->port == 80);
    auto v6 = refgate::config::parse_endpoint("[::]:0");
    REQUIRE(v6.has_value());
    CHECK(v6->host == "::");
    CHECK(v6->port == 0);
    CHECK_FALSE(refgate::config::parse_endpoint("::1:80").has_value());
    CHECK_FALSE(refgate::config::parse_endpoint(":80").has_value());
    CHECK_FALSE(refgate::config::parse_endpoint("host:").has_value());
    CHECK_FALSE(refgate::config::parse_endpoint("[::1]80").has_value());
    CHECK_FALSE(refgate::config::parse_endpoint("host:65536").has_value());
}

TEST_CASE("an endpoint whose host is no name or address is a start-up error", "[config]") {
    // Found by fuzzing: "[[/]:0" was taken as host "[/" and failed only when the listener bound.
    CHECK_FALSE(refgate::config::parse_endpoint("[[/]:0").has_value());
    CHECK_FALSE(refgate::config::parse_endpoint("[localhost]:80").has_value());
    CHECK_FALSE(refgate::config::parse_endpoint("a]b:80").has_value());
    CHECK_FALSE(refgate::config::parse_endpoint("my host:80").has_value());
    CHECK(refgate::config::parse_endpoint("localhost:8080").has_value());
    CHECK(refgate::config::parse_endpoint("[::1]:8080")->to_string() == "[::1]:8080");
}

TEST_CASE("disclosure settings are read, normalised and validated", "[config][disclosure]") {
    Config defaults = refgate::config::load_config(std::nullopt, fake_env({}));
    CHECK(defaults.disclosure.default_locale == "en");
    CHECK(defaults.disclosure.max_age == std::chrono::seconds{300});
    CHECK(defaults.disclosure.public_base_url.empty());

    Config c = refgate::config::load_config(
        std::nullopt, fake_env({{"REFGATE_DISCLOSURE_DEFAULT_LOCALE", "de-AT"},
                                {"REFGATE_DISCLOSURE_MAX_AGE", "60"},
                                {"REFGATE_PUBLIC_BASE_URL", "https://picks.example.com/r/"}}));
    CHECK(c.disclosure.default_locale == "de-at");
    CHECK(c.disclosure.max_age == std::chrono::seconds{60});
    CHECK(c.disclosure.public_base_url == "https://picks.example.com/r");

    for (const char* bad : {"http://picks.example.com", "https://user@picks.example.com",
                            "https://picks.example.com/?a=1", "https://picks.example.com/#x",
                            "picks.example.com", "https://", "https://a.example/\"><script>"}) {
        INFO(bad);
        CHECK_THROWS_AS(refgate::config::load_config(std::nullopt,
                                                     fake_env({{"REFGATE_PUBLIC_BASE_URL", bad}})),
                        ConfigError);
    }
    CHECK_THROWS_AS(refgate::config::load_config(
                        std::nullopt, fake_env({{"REFGATE_DISCLOSURE_DEFAULT_LOCALE", "x"}})),
                    ConfigError);
    CHECK_THROWS_AS(refgate::config::load_config(std::nullopt,
                                                 fake_env({{"REFGATE_DISCLOSURE_MAX_AGE", "-1"}})),
                    ConfigError);
}

TEST_CASE("every setting is described, and the description reads back as the same configuration",
          "[config]") {
    Config c = refgate::config::load_config(
        std::nullopt,
        fake_env({{"REFGATE_TRUSTED_PROXIES", "10.0.0.0/8"},
                  {"REFGATE_ADMIN_CORS_ORIGINS", "https://a.example,https://b.example"},
                  {"REFGATE_STATE_DIR", "/srv/state"},
                  {"REFGATE_PUBLIC_BASE_URL", "https://picks.example.com"},
                  {"REFGATE_REUSE_PORT", "true"},
                  {"REFGATE_IO_URING", "false"},
                  {"REFGATE_ADMIN_DB_WAIT_MS", "1500"}}));
    CHECK_FALSE(c.io_uring);
    auto rows = refgate::config::describe_config(c);
    std::map<std::string, std::string> described(rows.begin(), rows.end());
    CHECK(described.size() == rows.size());
    for (const char* key : {"listen",
                            "admin_listen",
                            "database_url",
                            "stats_database_url",
                            "redis_url",
                            "redis_sentinel_password",
                            "redis_min_replicas_acked",
                            "redis_wait_timeout_ms",
                            "threads",
                            "io_uring",
                            "snapshot_file",
                            "referrer_policy",
                            "allow_http_destinations",
                            "max_connections",
                            "max_header_bytes",
                            "max_target_bytes",
                            "read_timeout_ms",
                            "write_timeout_ms",
                            "reload_interval_ms",
                            "shutdown_timeout_ms",
                            "drain_ms",
                            "aggregation_window_ms",
                            "flush_interval_ms",
                            "bucket_seconds",
                            "max_pending_keys",
                            "max_channels_per_link_day",
                            "stats_retention_days",
                            "spill_file",
                            "trusted_proxies",
                            "asn_db",
                            "scanner_networks",
                            "scanner_burst_links",
                            "scanner_burst_seconds",
                            "disclosure_default_locale",
                            "disclosure_max_age",
                            "public_base_url",
                            "log_level",
                            "metrics_token",
                            "admin_max_connections",
                            "admin_max_connections_per_client",
                            "reuse_port",
                            "state_dir",
                            "admin_cors_origins",
                            "admin_db_wait_ms",
                            "admin_public_url",
                            "console_session_idle",
                            "console_session_max",
                            "auth_cache_seconds",
                            "linkcheck_interval",
                            "linkcheck_resolve",
                            "webhook_ca_file",
                            "webhook_resolve",
                            "webhook_retry_base_ms",
                            "webhook_give_up"}) {
        INFO(key);
        CHECK(described.count(key) == 1);
    }
    CHECK(rows.size() == 62);
    CHECK(described["admin_cors_origins"] == "https://a.example,https://b.example");
    CHECK(described["reuse_port"] == "true");
    CHECK(described["io_uring"] == "false");

    // Written back as a config file, every value is accepted and means the same.
    nlohmann::json file = nlohmann::json::object();
    for (const auto& [key, value] : rows) file[key] = value;
    TempConfigFile config_file(file.dump());
    auto again = refgate::config::describe_config(
        refgate::config::load_config(config_file.path(), fake_env({})));
    CHECK(again == rows);
}

TEST_CASE("the scanner settings default to the built files and a burst of 4 links in 10 s",
          "[config][scanner]") {
    Config c = refgate::config::load_config(std::nullopt, fake_env({}));
    CHECK(c.clicks.asn_db == "default");
    CHECK(c.clicks.scanner_networks == "default");
    CHECK(c.clicks.scanner_burst_links == 4);
    CHECK(c.clicks.scanner_burst_seconds == 10);
    c = refgate::config::load_config(std::nullopt,
                                     fake_env({{"REFGATE_ASN_DB", ""},
                                               {"REFGATE_SCANNER_NETWORKS", "/etc/n.txt"},
                                               {"REFGATE_SCANNER_BURST_LINKS", "0"},
                                               {"REFGATE_SCANNER_BURST_SECONDS", "30"}}));
    CHECK(c.clicks.asn_db.empty());
    CHECK(c.clicks.scanner_networks == "/etc/n.txt");
    CHECK(c.clicks.scanner_burst_links == 0);
    CHECK(c.clicks.scanner_burst_seconds == 30);
    for (const char* links : {"1", "9", "-1", "four"}) {
        INFO(links);
        CHECK_THROWS_WITH(refgate::config::load_config(
                              std::nullopt, fake_env({{"REFGATE_SCANNER_BURST_LINKS", links}})),
                          Catch::Contains("REFGATE_SCANNER_BURST_LINKS") &&
                              Catch::Contains("0 (off) or an integer from 2 to 8"));
    }
    CHECK_THROWS_AS(refgate::config::load_config(
                        std::nullopt, fake_env({{"REFGATE_SCANNER_BURST_SECONDS", "0"}})),
                    ConfigError);
}

TEST_CASE("no password appears in the description or in a config error", "[config]") {
    Config c = refgate::config::load_config(
        std::nullopt,
        fake_env(
            {{"REFGATE_DATABASE_URL",
              "postgresql://editor:hunter2@db.internal/refgate?sslmode=require&password=hunter3"},
             {"REFGATE_REDIS_URL", "redis://counter:hunter4@127.0.0.1:6379/0"}}));
    for (const auto& [key, value] : refgate::config::describe_config(c)) {
        INFO(key << " = " << value);
        CHECK(value.find("hunter") == std::string::npos);
    }
    auto message =
        config_error(std::nullopt, fake_env({{"REFGATE_REDIS_URL", "redis://:hunter5@h:port/0"}}));
    CHECK(message.find("REFGATE_REDIS_URL") != std::string::npos);
    CHECK(message.find("hunter5") == std::string::npos);
    message = config_error(
        std::nullopt,
        fake_env({{"REFGATE_DATABASE_URL", "mysql://u:hunter6@h/db?password=hunter7"}}));
    CHECK(message.find("hunter") == std::string::npos);
}

TEST_CASE("redaction hides URL passwords and password parameters only", "[config]") {
    using refgate::config::redact_secrets;
    CHECK(refgate::config::redact_secrets("postgresql://u:pw@h:5432/db") ==
          "postgresql://u:***@h:5432/db");
    CHECK(refgate::config::redact_secrets("redis://:pw@h:6379/0") == "redis://:***@h:6379/0");
    CHECK(redact_secrets("redis://user:p%40w@h") == "redis://user:***@h");
    CHECK(redact_secrets("postgresql://h/db?sslmode=require&Password=pw&x=1") ==
          "postgresql://h/db?sslmode=require&Password=***&x=1");
    CHECK(redact_secrets("host=h password='a b' dbname=x") == "host=h password=*** dbname=x");
    CHECK(redact_secrets("postgresql://u@h/db") == "postgresql://u@h/db");
    CHECK(redact_secrets("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0");
    // A password that holds "password=" goes whole, not from its "=" on.
    CHECK(redact_secrets("postgresql://u:s3cret-password=x@h/db") == "postgresql://u:***@h/db");
}

TEST_CASE("redacting a quoted password with text stuck to its quote is the same done twice",
          "[config]") {
    using refgate::config::redact_secrets;
    // Found by the config_parsers fuzz target: the text after the closing quote used to be left,
    // and a second pass redacted it as a value of its own.
    std::string once = refgate::config::redact_secrets("x password='ab  password='cd' tail");
    CHECK(once == "x password=*** tail");
    CHECK(refgate::config::redact_secrets(once) == once);
    CHECK(redact_secrets("password='unterminated") == "password=***");
}

TEST_CASE("a userinfo password that a password= value hid behind its '/' is redacted at once",
          "[config]") {
    using refgate::config::redact_secrets;
    // Found by the config_parsers fuzz target: the password= value "a/@b" held the '/' that ended
    // the first authority; once it was redacted, "c:d@e" became a userinfo that only a second
    // pass redacted, so the first one printed "d".
    std::string once = refgate::config::redact_secrets("x://password=a/@b&c:d@e/");
    CHECK(once == "x://password=***&c:***@e/");
    CHECK(refgate::config::redact_secrets(once) == once);
}

TEST_CASE("Redis URLs with a password or an ACL user are accepted, rediss:// is refused plainly",
          "[config]") {
    for (const char* url : {"redis://:secret@h:6379/0", "redis://user:secret@h:6379/0",
                            "redis://user:p%40ss@h", "redis://[::1]:6379/1"}) {
        INFO(url);
        CHECK(refgate::config::load_config(std::nullopt, fake_env({{"REFGATE_REDIS_URL", url}}))
                  .redis_url == url);
    }
    auto message =
        config_error(std::nullopt, fake_env({{"REFGATE_REDIS_URL", "rediss://:secret@h:6380/0"}}));
    CHECK(message.find("no TLS") != std::string::npos);
    CHECK(message.find("stunnel") != std::string::npos);
    CHECK(message.find("secret") == std::string::npos);
}

TEST_CASE("a sentinel URL and the replica settings are read, and a bad sentinel URL says why",
          "[config][sentinel]") {
    auto c = refgate::config::load_config(
        std::nullopt, fake_env({{"REFGATE_REDIS_URL", "redis+sentinel://:pw@s1:26379,s2/main/2"},
                                {"REFGATE_REDIS_SENTINEL_PASSWORD", "sentinel-secret"},
                                {"REFGATE_REDIS_MIN_REPLICAS_ACKED", "1"},
                                {"REFGATE_REDIS_WAIT_TIMEOUT_MS", "250"}}));
    CHECK(c.redis_ha.sentinel_password == "sentinel-secret");
    CHECK(c.redis_ha.min_replicas_acked == 1);
    CHECK(c.redis_ha.wait_timeout == std::chrono::milliseconds{250});
    for (const auto& [key, value] : refgate::config::describe_config(c)) {
        CHECK(value.find("sentinel-secret") == std::string::npos);
        CHECK(value.find(":pw@") == std::string::npos);
    }
    auto message = config_error(
        std::nullopt, fake_env({{"REFGATE_REDIS_URL", "redis+sentinel://:hunter6@s1:26379"}}));
    CHECK(message.find("REFGATE_REDIS_URL") != std::string::npos);
    CHECK(message.find("master name") != std::string::npos);
    CHECK(message.find("hunter6") == std::string::npos);
    CHECK(config_error(std::nullopt, fake_env({{"REFGATE_REDIS_MIN_REPLICAS_ACKED", "-1"}}))
              .find("REFGATE_REDIS_MIN_REPLICAS_ACKED") != std::string::npos);
    CHECK(config_error(std::nullopt, fake_env({{"REFGATE_REDIS_WAIT_TIMEOUT_MS", "0"}}))
              .find("REFGATE_REDIS_WAIT_TIMEOUT_MS") != std::string::npos);
}

TEST_CASE("listeners that would share an address are a config error naming both settings",
          "[config]") {
    using Pair = std::pair<std::string, std::string>;
    for (const auto& [a, b] :
         {Pair{"127.0.0.1:8080", "127.0.0.1:8080"}, Pair{"0.0.0.0:8080", "127.0.0.1:8080"},
          Pair{"127.0.0.1:8080", "0.0.0.0:8080"}, Pair{"[::]:8080", "127.0.0.1:8080"},
          Pair{"[::1]:8080", "[::]:8080"}, Pair{"localhost:8080", "127.0.0.1:8080"}}) {
        INFO(a << " " << b);
        auto message = config_error(std::nullopt,
                                    fake_env({{"REFGATE_LISTEN", a}, {"REFGATE_ADMIN_LISTEN", b}}));
        CHECK(message.find("REFGATE_LISTEN") != std::string::npos);
        CHECK(message.find("REFGATE_ADMIN_LISTEN") != std::string::npos);
    }
    for (const auto& [a, b] :
         {Pair{"127.0.0.1:0", "127.0.0.1:0"}, Pair{"127.0.0.1:8080", "127.0.0.2:8080"},
          Pair{"0.0.0.0:8080", "[::1]:8080"}, Pair{"0.0.0.0:8080", "0.0.0.0:9090"}}) {
        INFO(a << " " << b);
        CHECK_NOTHROW(refgate::config::load_config(
            std::nullopt, fake_env({{"REFGATE_LISTEN", a}, {"REFGATE_ADMIN_LISTEN", b}})));
    }
}

TEST_CASE("the state directory defaults to /var/lib/refgate, else XDG_STATE_HOME, else HOME",
          "[config]") {
    auto none = [](const std::string&) { return false; };
    auto system = [](const std::string& dir) { return dir == "/var/lib/refgate"; };
    auto env = fake_env({{"XDG_STATE_HOME", "/home/ed/.state"}, {"HOME", "/home/ed"}});
    CHECK(refgate::config::default_state_dir(env, system) == "/var/lib/refgate");
    CHECK(refgate::config::default_state_dir(env, none) == "/home/ed/.state/refgate");
    CHECK(refgate::config::default_state_dir(fake_env({{"HOME", "/home/ed"}}), none) ==
          "/home/ed/.local/state/refgate");
    CHECK_THROWS_AS(refgate::config::default_state_dir(fake_env({}), none), ConfigError);

    Config c = refgate::config::load_config(std::nullopt,
                                            fake_env({{"REFGATE_SPILL_FILE", "/abs/spill"}}));
    refgate::config::resolve_state_paths(c, env, none);
    CHECK(c.state_dir == "/home/ed/.state/refgate");
    CHECK(c.snapshot_file == "/home/ed/.state/refgate/refgate-snapshot.json");
    CHECK(c.clicks.spill_file == "/abs/spill");

    Config set = refgate::config::load_config(
        std::nullopt,
        fake_env({{"REFGATE_STATE_DIR", "/srv/refgate"}, {"REFGATE_SNAPSHOT_FILE", "snap.json"}}));
    refgate::config::resolve_state_paths(set, env, system);
    CHECK(set.snapshot_file == "/srv/refgate/snap.json");
    CHECK(set.clicks.spill_file == "/srv/refgate/refgate-spill.json");
}

TEST_CASE("the drain lasts five seconds by default, and drain_ms 0 turns it off", "[config]") {
    using std::chrono::milliseconds;
    CHECK(refgate::config::load_config(std::nullopt, fake_env({})).drain == milliseconds{5'000});
    CHECK(refgate::config::load_config(std::nullopt, fake_env({{"REFGATE_DRAIN_MS", "0"}})).drain ==
          milliseconds{0});
    TempConfigFile file(R"({"drain_ms": 1500})");
    CHECK(refgate::config::load_config(file.path(), fake_env({})).drain == milliseconds{1'500});
    CHECK_THROWS_AS(
        refgate::config::load_config(std::nullopt, fake_env({{"REFGATE_DRAIN_MS", "-1"}})),
        ConfigError);
    CHECK_THROWS_AS(
        refgate::config::load_config(std::nullopt, fake_env({{"REFGATE_DRAIN_MS", "soon"}})),
        ConfigError);
}

TEST_CASE("console sessions last 30 minutes idle and 12 hours at most unless configured",
          "[config]") {
    Config defaults = refgate::config::load_config(std::nullopt, fake_env({}));
    CHECK(defaults.console_session_idle == std::chrono::minutes{30});
    CHECK(defaults.console_session_max == std::chrono::hours{12});
    CHECK(defaults.admin_public_url.empty());
    Config c = refgate::config::load_config(
        std::nullopt, fake_env({{"REFGATE_CONSOLE_SESSION_IDLE", "600"},
                                {"REFGATE_CONSOLE_SESSION_MAX", "3600"},
                                {"REFGATE_ADMIN_PUBLIC_URL", "https://admin.example.com"}}));
    CHECK(c.console_session_idle == std::chrono::minutes{10});
    CHECK(c.console_session_max == std::chrono::hours{1});
    CHECK(c.admin_public_url == "https://admin.example.com");
    for (const auto& [env, value] : std::vector<std::pair<std::string, std::string>>{
             {"REFGATE_CONSOLE_SESSION_IDLE", "0"},
             {"REFGATE_CONSOLE_SESSION_MAX", "30m"},
             {"REFGATE_ADMIN_PUBLIC_URL", "https://admin.example.com/console"},
             {"REFGATE_ADMIN_PUBLIC_URL", "https://a.example, https://b.example"},
             {"REFGATE_ADMIN_PUBLIC_URL", "ftp://admin.example.com"}}) {
        INFO(env << "=" << value);
        CHECK_THROWS_AS(refgate::config::load_config(std::nullopt, fake_env({{env, value}})),
                        refgate::config::ConfigError);
    }
}

TEST_CASE("checked credentials are kept 5 seconds unless configured, 0 keeping none", "[config]") {
    CHECK(refgate::config::load_config(std::nullopt, fake_env({})).auth_cache ==
          std::chrono::seconds{5});
    CHECK(
        refgate::config::load_config(std::nullopt, fake_env({{"REFGATE_AUTH_CACHE_SECONDS", "0"}}))
            .auth_cache == std::chrono::seconds{0});
    for (const char* value : {"61", "-1", "5s"}) {
        INFO(value);
        CHECK_THROWS_AS(refgate::config::load_config(
                            std::nullopt, fake_env({{"REFGATE_AUTH_CACHE_SECONDS", value}})),
                        refgate::config::ConfigError);
    }
}

}  // namespace config_test
