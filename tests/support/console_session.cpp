#include "support/console_session.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/http_client.hpp"
#include "support/service_process.hpp"

namespace refgate::test {

void add_console_user(const std::string& database_url, const std::string& name,
                      const std::string& role, const std::string& password) {
    auto r = run_refgate({"user", "create", "--name", name, "--role", role, "--password-stdin"},
                         {{"REFGATE_DATABASE_URL", database_url}}, password + "\n");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
}

ConsoleBrowser sign_in_console(int admin_port, const std::string& name,
                               const std::string& password) {
    auto r = http_request(admin_port, "POST", "/api/v1/session",
                          {{"Origin", kConsoleOrigin}, {"Content-Type", "application/json"}},
                          nlohmann::json{{"name", name}, {"password", password}}.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    std::string set = r.header("Set-Cookie");
    ConsoleBrowser b;
    b.cookie = set.substr(0, set.find(';'));
    b.id = b.cookie.substr(b.cookie.find('=') + 1);
    b.csrf = nlohmann::json::parse(r.body)["csrf_token"];
    return b;
}

std::vector<std::pair<std::string, std::string>> console_page_headers(const ConsoleBrowser& b) {
    return {{"Cookie", b.cookie},
            {"X-CSRF-Token", b.csrf},
            {"Origin", kConsoleOrigin},
            {"Sec-Fetch-Site", "same-origin"}};
}

}  // namespace refgate::test
