#pragma once

// What the tests of the console's API additions share: a database with a partner, tokens of each
// role, and a service with a public base URL.

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

namespace refgate::test::console {

using Json = nlohmann::ordered_json;
using Headers = std::vector<std::pair<std::string, std::string>>;
using namespace std::chrono_literals;

inline const char* const kDocument = R"json({
  "partners": [
    {"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks42",
     "allowed_domains": ["tailscale.com"], "extra_params": {"utm_medium": "affiliate"}},
    {"slug": "kagi", "name": "Kagi Search", "ref_param": "via", "ref_code": "picks",
     "allowed_domains": ["kagi.com"]}
  ],
  "disclosures": [{"key": "general", "locale": "en", "text": "Paid picks & more."}]
})json";

inline const std::string kBaseUrl = "https://picks.example.com";

inline Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

inline Headers json_write(const std::string& token, const std::string& etag = "") {
    Headers h = bearer(token);
    h.emplace_back("Content-Type", "application/json");
    if (!etag.empty()) h.emplace_back("If-Match", etag);
    return h;
}

struct Fixture {
    explicit Fixture(EnvPairs env = {{"REFGATE_PUBLIC_BASE_URL", kBaseUrl}})
        : service({.database_url = db.url(), .env = with_defaults(std::move(env))}) {}

    TestDatabase db;
    bool loaded = import_json(db.url(), kDocument).exit_code == 0;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    std::string editor = create_api_token(db.url(), "eddie", "editor");
    std::string viewer = create_api_token(db.url(), "vera", "viewer");
    ServiceProcess service;

    HttpResponse call(const std::string& method, const std::string& target, const Headers& headers,
                      const std::string& body = "") {
        return http_request(service.admin_port(), method, target, headers, body);
    }
    HttpResponse get(const std::string& target, const std::string& token) {
        return call("GET", target, bearer(token));
    }
    HttpResponse post(const std::string& target, const Json& body, const std::string& token) {
        return call("POST", target, json_write(token), body.dump());
    }
    HttpResponse create_link(const Json& link) { return post("/api/v1/links", link, editor); }

    // Polls /go/<slug> until it redirects (the snapshot follows within a second).
    HttpResponse redirect_of(const std::string& slug) {
        HttpResponse r;
        for (auto start = std::chrono::steady_clock::now();
             std::chrono::steady_clock::now() - start < 5s; std::this_thread::sleep_for(20ms)) {
            r = http_get(service.port(), "/go/" + slug);
            if (r.status != 404) break;
        }
        return r;
    }

  private:
    static EnvPairs with_defaults(EnvPairs env) {
        env.emplace_back("REFGATE_RELOAD_INTERVAL_MS", "60000");
        return env;
    }
};

inline Json link_json(const std::string& slug, const std::string& partner = "tailscale",
                      const std::string& destination = "https://tailscale.com/pricing") {
    return {{"slug", slug}, {"partner", partner}, {"destination", destination}};
}

// The `field`s of a 422 problem's errors.
inline std::vector<std::string> error_fields(const HttpResponse& r) {
    std::vector<std::string> fields;
    auto body = Json::parse(r.body, nullptr, false);
    if (body.is_object() && body.contains("errors"))
        for (const auto& e : body["errors"]) fields.push_back(e.value("field", ""));
    return fields;
}

}  // namespace refgate::test::console
