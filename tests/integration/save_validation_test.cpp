// Save-time validation end to end: what the admin API or `refgate import` accepts is what the
// snapshot serves, so no accepted write can make a live link vanish.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace save_validation_test {

using namespace refgate::test;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

const DemoLink kLink{"tailscale", "https://tailscale.com/pricing"};

Headers json_write(const std::string& token, const std::string& etag = "") {
    Headers h{{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
    if (!etag.empty()) h.emplace_back("If-Match", etag);
    return h;
}

// The rules named in a 422 answer, by field.
std::vector<std::pair<std::string, std::string>> rules(const HttpResponse& r) {
    std::vector<std::pair<std::string, std::string>> out;
    auto body = Json::parse(r.body);
    for (const auto& e : body.value("errors", Json::array()))
        out.emplace_back(e.value("field", ""), e.value("rule", ""));
    return out;
}

bool names_rule(const HttpResponse& r, const std::string& field, const std::string& rule) {
    for (const auto& [f, name] : rules(r)) {
        if (f == field && name == rule) return true;
    }
    return false;
}

struct Fixture {
    TestDatabase db;
    std::string editor = create_api_token(db.url(), "eddie", "editor");
    bool imported = import_demo_links(db.url(), {kLink});
    ServiceProcess service{{.database_url = db.url()}};

    HttpResponse call(const std::string& method, const std::string& target, const std::string& body,
                      const std::string& etag = "") {
        return http_request(service.admin_port(), method, target, json_write(editor, etag), body);
    }
};

}  // namespace

TEST_CASE("an empty destination or fallback is refused with 422 and the link keeps redirecting",
          "[validation][admin][pg]") {
    Fixture f;
    REQUIRE(f.imported);
    for (const char* patch :
         {R"({"destination": ""})", R"({"destination": "   "})", R"({"fallback": ""})"}) {
        INFO(patch);
        auto r = f.call("PATCH", "/api/v1/links/tailscale", patch, "*");
        CHECK(r.status == 422);
        std::string field =
            std::string(patch).find("fallback") != std::string::npos ? "fallback" : "destination";
        CHECK(names_rule(r, field, "empty"));
    }
    Json created_empty = {{"slug", "other"}, {"partner", "tailscale"}, {"destination", ""}};
    auto post = f.call("POST", "/api/v1/links", created_empty.dump());
    CHECK(post.status == 422);
    CHECK(names_rule(post, "destination", "empty"));

    // Nothing was written: the stored link is as imported and still redirects.
    CHECK(f.db.scalar("SELECT destination || '|' || version FROM refgate_links") ==
          "https://tailscale.com/pricing|1");
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_audit WHERE action = 'update'") == "0");
    auto go = http_request(f.service.port(), "GET", "/go/tailscale", {});
    CHECK(go.status == 302);
}

TEST_CASE("a destination host no browser can follow is refused with 422 invalid_host",
          "[validation][admin][pg]") {
    Fixture f;
    REQUIRE(f.imported);
    for (const char* url :
         {"https://evil.com%2f.tailscale.com/", "https://evil.com%23.tailscale.com/",
          "https://evil.com%00.tailscale.com/", "https://evil.com%5c.tailscale.com/",
          "https://evil.com%3a.tailscale.com/", "https://xn--www-evil.tailscale.com/",
          "https://.tailscale.com/", "https://www..tailscale.com/"}) {
        INFO(url);
        Json link = {{"slug", "bad"}, {"partner", "tailscale"}, {"destination", url}};
        auto post = f.call("POST", "/api/v1/links", link.dump());
        CHECK(post.status == 422);
        CHECK(names_rule(post, "destination", "invalid_host"));
        auto patch =
            f.call("PATCH", "/api/v1/links/tailscale", Json{{"destination", url}}.dump(), "*");
        CHECK(patch.status == 422);
        CHECK(names_rule(patch, "destination", "invalid_host"));
    }
    auto partner =
        f.call("PATCH", "/api/v1/partners/tailscale",
               R"({"allowed_domains": ["tailscale.com", "xn--www-evil.example.com"]})", "*");
    CHECK(partner.status == 422);
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_links") == "1");
    CHECK(f.db.scalar("SELECT allowed_domains::text FROM refgate_partners") == "{tailscale.com}");
}

TEST_CASE("refgate import refuses empty destinations and invalid hosts and applies nothing",
          "[validation][import][pg]") {
    TestDatabase db;
    auto doc = Json::parse(demo_document({kLink}));
    doc["links"].push_back({{"slug", "empty"}, {"partner", "tailscale"}, {"destination", ""}});
    doc["links"].push_back({{"slug", "escaped"},
                            {"partner", "tailscale"},
                            {"destination", "https://evil.com%2f.tailscale.com/"}});
    doc["links"].push_back({{"slug", "blank-fallback"},
                            {"partner", "tailscale"},
                            {"destination", "https://tailscale.com/"},
                            {"fallback", " "}});
    doc["partners"].push_back({{"slug", "dotty"},
                               {"name", "Dotty"},
                               {"ref_param", "ref"},
                               {"ref_code", "x"},
                               {"allowed_domains", {"www..example.com"}}});
    auto result = import_json(db.url(), doc.dump());
    CHECK(result.exit_code == 1);
    INFO(result.err);
    CHECK(result.err.find("links[1] (empty): destination must not be empty [empty]") !=
          std::string::npos);
    CHECK(result.err.find("links[2] (escaped): destination") != std::string::npos);
    CHECK(result.err.find("[invalid_host]") != std::string::npos);
    CHECK(result.err.find("links[3] (blank-fallback): fallback must not be empty [empty]") !=
          std::string::npos);
    CHECK(result.err.find("partners[1] (dotty): allowed_domains") != std::string::npos);
    CHECK(db.scalar("SELECT count(*) FROM refgate_links") == "0");
}

}  // namespace save_validation_test
