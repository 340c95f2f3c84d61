#include <catch2/catch.hpp>
#include <map>

#include "refgate/config/config.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace linkcheck_settings_test {

using namespace refgate;
using namespace std::chrono_literals;

namespace {

config::EnvLookup env_of(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

std::string error_of(std::map<std::string, std::string> vars) {
    try {
        config::load_config(std::nullopt, env_of(std::move(vars)));
    } catch (const config::ConfigError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the link checker checks daily, one request a second per host, confirming after an hour",
          "[config][linkhealth]") {
    config::Config c = config::load_config(std::nullopt, env_of({}));
    CHECK(c.linkcheck.interval == 24h);
    CHECK(c.linkcheck.host_gap == 1000ms);
    CHECK(c.linkcheck.confirm_after == 1h);
    CHECK(c.linkcheck.ca_file.empty());
    CHECK(c.linkcheck.resolve.empty());
}

TEST_CASE("link checker settings are read and a bad one names its variable",
          "[config][linkhealth]") {
    config::Config c = config::load_config(
        std::nullopt,
        env_of({{"REFGATE_LINKCHECK_INTERVAL", "90m"},
                {"REFGATE_LINKCHECK_RESOLVE", "shop.test:8443:127.0.0.2, b.test:443:::1"},
                {"REFGATE_LINKCHECK_CONTACT_URL", "https://picks.example.com/about"}}));
    CHECK(c.linkcheck.interval == 90min);
    REQUIRE(c.linkcheck.resolve.size() == 2);
    CHECK(c.linkcheck.resolve[0].host == "shop.test");
    CHECK(c.linkcheck.resolve[0].port == 8443);
    CHECK(c.linkcheck.resolve[1].address == "::1");
    CHECK(config::resolve_list_text(c.linkcheck.resolve) ==
          "shop.test:8443:127.0.0.2,b.test:443:::1");
    CHECK(config::load_config(std::nullopt, env_of({{"REFGATE_LINKCHECK_INTERVAL", "0"}}))
              .linkcheck.interval == 0s);
    for (auto [name, value] : std::map<std::string, std::string>{
             {"REFGATE_LINKCHECK_INTERVAL", "daily"},
             {"REFGATE_LINKCHECK_RESOLVE", "shop.test:443:not-an-address"},
             {"REFGATE_LINKCHECK_CONTACT_URL", "mailto:me@example.com"},
             {"REFGATE_LINKCHECK_TIMEOUT_MS", "5"}}) {
        INFO(name);
        CHECK(error_of({{name, value}}).find(name) != std::string::npos);
    }
}

TEST_CASE("webhook delivery retries after 5 s, gives up after a day, and reads its settings",
          "[config][webhooks]") {
    config::Config defaults = config::load_config(std::nullopt, env_of({}));
    CHECK(defaults.webhooks.retry_base == 5000ms);
    CHECK(defaults.webhooks.give_up == 24h);
    CHECK(defaults.webhooks.timeout == 10s);
    CHECK(defaults.webhooks.ca_file.empty());
    config::Config c = config::load_config(
        std::nullopt, env_of({{"REFGATE_WEBHOOK_CA_FILE", "/tmp/ca.pem"},
                              {"REFGATE_WEBHOOK_RESOLVE", "hooks.test:8443:127.0.0.2"},
                              {"REFGATE_WEBHOOK_RETRY_BASE_MS", "200"},
                              {"REFGATE_WEBHOOK_GIVE_UP", "3s"}}));
    CHECK(c.webhooks.ca_file == "/tmp/ca.pem");
    REQUIRE(c.webhooks.resolve.size() == 1);
    CHECK(c.webhooks.resolve[0].port == 8443);
    CHECK(c.webhooks.retry_base == 200ms);
    CHECK(c.webhooks.give_up == 3s);
    for (auto [name, value] :
         std::map<std::string, std::string>{{"REFGATE_WEBHOOK_RESOLVE", "hooks.test:443:nowhere"},
                                            {"REFGATE_WEBHOOK_RETRY_BASE_MS", "60000"},
                                            {"REFGATE_WEBHOOK_GIVE_UP", "0"}}) {
        INFO(name << "=" << value);
        CHECK(error_of({{name, value}}).find(name) != std::string::npos);
    }
}

}  // namespace linkcheck_settings_test
