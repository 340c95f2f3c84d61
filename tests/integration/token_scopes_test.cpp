// Scoped tokens (issue 46) end to end: scopes within the role, partner and domain restrictions,
// expiry, from the CLI and POST /api/v1/tokens; and the authorization matrix over every route
// the registry holds.

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "refgate/admin/admin_handler.hpp"
#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace token_scopes_test {

using namespace refgate::test;
using refgate::admin::Extent;
using refgate::admin::Scopes;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;
namespace scope = refgate::admin::scope;

namespace {

// The default domain's host: links without `domain` are on it.
constexpr const char* kDefaultHost = "go.example.com";

Json partner_json(const std::string& slug) {
    return {{"slug", slug},
            {"name", slug},
            {"ref_param", "ref"},
            {"ref_code", "picks42"},
            {"allowed_domains", {slug + ".com"}}};
}

Json link_json(const std::string& slug, const std::string& partner) {
    return {{"slug", slug}, {"partner", partner}, {"destination", "https://" + partner + ".com/p"}};
}

Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

Headers json_write(const std::string& token, const std::string& etag = "") {
    Headers h = bearer(token);
    h.emplace_back("Content-Type", "application/json");
    if (!etag.empty()) h.emplace_back("If-Match", etag);
    return h;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Two partners, each with a link, and an admin token from the CLI.
struct Fixture {
    TestDatabase db;
    std::string admin = create_api_token(db.url(), "ada", "admin");
    ServiceProcess service{
        {.database_url = db.url(),
         // The matrix's expired calls are failures: each comes from a client of its own through
         // the trusted proxy, so the failure limit does not answer 429.
         .env = {{"REFGATE_RELOAD_INTERVAL_MS", "60000"},
                 {"REFGATE_TRUSTED_PROXIES", "127.0.0.1"},
                 {"REFGATE_PUBLIC_BASE_URL", std::string("https://") + kDefaultHost}}}};

    Fixture() {
        for (const char* p : {"tailscale", "kagi"}) {
            REQUIRE(call("POST", "/api/v1/partners", json_write(admin), partner_json(p).dump())
                        .status == 201);
            REQUIRE(call("POST", "/api/v1/links", json_write(admin),
                         link_json(std::string(p) + "-deal", p).dump())
                        .status == 201);
        }
    }

    HttpResponse call(const std::string& method, const std::string& target, const Headers& headers,
                      const std::string& body = "") {
        return http_request(service.admin_port(), method, target, headers, body);
    }

    // A token made over the API with these fields; its text.
    std::string token(const Json& fields) {
        auto r = call("POST", "/api/v1/tokens", json_write(admin), fields.dump());
        INFO(r.body);
        REQUIRE(r.status == 201);
        return Json::parse(r.body)["token"];
    }
};

std::vector<std::string> slugs(const std::string& body) {
    std::vector<std::string> out;
    Json page = Json::parse(body);
    for (const auto& item : page["items"]) out.push_back(item["slug"]);
    return out;
}

}  // namespace

TEST_CASE("a token does only what its scopes allow, within its role", "[admin][pg][tokens]") {
    Fixture f;
    std::string reader = f.token({{"name", "cms"}, {"role", "editor"}, {"scopes", {"links:read"}}});
    CHECK(f.call("GET", "/api/v1/links", bearer(reader)).status == 200);
    CHECK(f.call("GET", "/api/v1/links/kagi-deal", bearer(reader)).status == 200);
    // Its role allows writing links, its scopes do not.
    auto write =
        f.call("POST", "/api/v1/links", json_write(reader), link_json("new-one", "kagi").dump());
    CHECK(write.status == 403);
    CHECK(contains(write.body, "links:write"));
    CHECK(f.call("GET", "/api/v1/partners", bearer(reader)).status == 403);
    CHECK(f.call("GET", "/api/v1/stats/overview", bearer(reader)).status == 403);

    // No scopes given: everything the role allows, and the list says which.
    f.token({{"name", "plain"}, {"role", "viewer"}});
    auto list = Json::parse(f.call("GET", "/api/v1/tokens", bearer(f.admin)).body)["items"];
    Json plain;
    for (const auto& t : list) {
        if (t["name"] == "plain") plain = t;
    }
    CHECK(plain["scopes"] == Json({"links:read", "partners:read", "stats:read", "earnings:read"}));
    CHECK(plain["partners"] == Json::array());
    CHECK(plain["expires_at"].is_null());

    // A token never exceeds its role: a viewer cannot be given links:write (422, nothing made).
    auto beyond = f.call("POST", "/api/v1/tokens", json_write(f.admin),
                         R"({"name": "sneaky", "role": "viewer", "scopes": ["links:write"]})");
    CHECK(beyond.status == 422);
    CHECK(contains(beyond.body, "does not allow links:write"));
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_api_tokens WHERE name = 'sneaky'") == "0");
    auto unknown = f.call("POST", "/api/v1/tokens", json_write(f.admin),
                          R"({"name": "x", "role": "admin", "scopes": ["links:delete"],
                              "partners": ["no such"], "expires_at": "soon"})");
    REQUIRE(unknown.status == 422);
    std::set<std::string> fields;
    Json problem = Json::parse(unknown.body);
    for (const auto& e : problem["errors"]) fields.insert(e["field"]);
    CHECK(fields == std::set<std::string>{"scopes", "partners", "expires_at"});
    CHECK(f.call("POST", "/api/v1/tokens", json_write(f.admin),
                 R"({"name": "x", "role": "admin", "partners": ["ghost"]})")
              .status == 422);

    // The audit records what the token may do.
    auto audit = Json::parse(
        f.call("GET", "/api/v1/audit?entity=token&slug=cms", bearer(f.admin)).body)["items"];
    REQUIRE(audit.size() == 1);
    CHECK(audit[0]["after"]["scopes"] == Json({"links:read"}));
    CHECK(audit[0]["after"]["role"] == "editor");
}

TEST_CASE("a partner-restricted token sees and changes only its partners and their links",
          "[admin][pg][tokens]") {
    Fixture f;
    std::string kagi = f.token({{"name", "kagi-mgr"}, {"role", "editor"}, {"partners", {"kagi"}}});
    CHECK(slugs(f.call("GET", "/api/v1/links", bearer(kagi)).body) ==
          std::vector<std::string>{"kagi-deal"});
    CHECK(slugs(f.call("GET", "/api/v1/partners", bearer(kagi)).body) ==
          std::vector<std::string>{"kagi"});
    CHECK(f.call("GET", "/api/v1/links/kagi-deal", bearer(kagi)).status == 200);
    // Outside: 404, worded as for an object that does not exist.
    auto other = f.call("GET", "/api/v1/links/tailscale-deal", bearer(kagi));
    auto missing = f.call("GET", "/api/v1/links/no-such-link", bearer(kagi));
    CHECK(other.status == 404);
    CHECK(missing.status == 404);
    CHECK(Json::parse(other.body)["title"] == Json::parse(missing.body)["title"]);
    CHECK(f.call("GET", "/api/v1/partners/tailscale", bearer(kagi)).status == 404);
    CHECK(f.call("PATCH", "/api/v1/links/tailscale-deal", json_write(kagi, "*"), "{}").status ==
          404);
    CHECK(f.call("DELETE", "/api/v1/links/tailscale-deal", json_write(kagi, "*")).status == 404);
    // Writes that would put a link outside: 403, and nothing changes.
    CHECK(f.call("POST", "/api/v1/links", json_write(kagi), link_json("t2", "tailscale").dump())
              .status == 403);
    CHECK(f.call("PATCH", "/api/v1/links/kagi-deal", json_write(kagi, "*"),
                 R"({"partner": "tailscale", "destination": "https://tailscale.com/x"})")
              .status == 403);
    CHECK(f.db.scalar("SELECT p.slug FROM refgate_links l JOIN refgate_partners p ON p.id = "
                      "l.partner_id WHERE l.slug = 'kagi-deal'") == "kagi");
    // Inside: allowed.
    CHECK(
        f.call("POST", "/api/v1/links", json_write(kagi), link_json("k2", "kagi").dump()).status ==
        201);
    // Pages hold only its links, and their cursor names none of the others.
    std::string ts = f.token({{"name", "ts-mgr"}, {"role", "viewer"}, {"partners", {"tailscale"}}});
    auto page = Json::parse(f.call("GET", "/api/v1/links?limit=1", bearer(ts)).body);
    CHECK(page["items"].size() == 1);
    CHECK(page["items"][0]["slug"] == "tailscale-deal");
    CHECK(page["next_cursor"].is_null());
    auto first = Json::parse(f.call("GET", "/api/v1/links?limit=1", bearer(kagi)).body);
    CHECK(first["items"][0]["slug"] == "k2");
    CHECK(first["next_cursor"] == "k2");
    auto second = Json::parse(f.call("GET", "/api/v1/links?limit=1&cursor=k2", bearer(kagi)).body);
    CHECK(second["items"][0]["slug"] == "kagi-deal");
    CHECK(second["next_cursor"].is_null());
    // Routes over everything are refused to a restricted token.
    CHECK(f.call("GET", "/api/v1/export", bearer(kagi)).status == 403);
    CHECK(f.call("GET", "/api/v1/stats/top", bearer(kagi)).status == 403);
}

TEST_CASE("a domain-restricted token sees only links on its domains", "[admin][pg][tokens]") {
    Fixture f;
    // Links without `domain` are on the default domain (REFGATE_PUBLIC_BASE_URL's host).
    std::string home = f.token({{"name", "home"}, {"role", "editor"}, {"domains", {kDefaultHost}}});
    std::string away =
        f.token({{"name", "away"}, {"role", "editor"}, {"domains", {"deals.example.org"}}});
    CHECK(slugs(f.call("GET", "/api/v1/links", bearer(home)).body).size() == 2);
    CHECK(f.call("GET", "/api/v1/links/kagi-deal", bearer(home)).status == 200);
    CHECK(slugs(f.call("GET", "/api/v1/links", bearer(away)).body).empty());
    CHECK(f.call("GET", "/api/v1/links/kagi-deal", bearer(away)).status == 404);
    // A new link lands on the default domain: not the away token's.
    CHECK(
        f.call("POST", "/api/v1/links", json_write(away), link_json("k3", "kagi").dump()).status ==
        403);
    CHECK(
        f.call("POST", "/api/v1/links", json_write(home), link_json("k3", "kagi").dump()).status ==
        201);
    // Partners are not on a domain: the away token still reads them.
    CHECK(f.call("GET", "/api/v1/partners/kagi", bearer(away)).status == 200);
    // Hosts are validated.
    CHECK(f.call("POST", "/api/v1/tokens", json_write(f.admin),
                 R"({"name": "bad", "role": "viewer", "domains": ["not a host"]})")
              .status == 422);
}

TEST_CASE("an expired token answers 401 saying so, and the CLI takes every restriction",
          "[admin][pg][tokens]") {
    Fixture f;
    std::string old =
        f.token({{"name", "old"}, {"role", "viewer"}, {"expires_at", "2020-01-01T00:00:00Z"}});
    auto r = f.call("GET", "/api/v1/links", bearer(old));
    CHECK(r.status == 401);
    CHECK(contains(r.body, "expired at 2020-01-01T00:00:00Z"));

    auto made = run_refgate({"token", "create", "--name", "plugin", "--role", "editor", "--scope",
                             "links:read", "--scope", "links:write", "--partner", "kagi",
                             "--domain", kDefaultHost, "--expires", "30d"},
                            {{"REFGATE_DATABASE_URL", f.db.url()}});
    INFO(made.err);
    REQUIRE(made.exit_code == 0);
    std::string text = made.out.substr(made.out.rfind("rg_"), 46);
    CHECK(f.call("GET", "/api/v1/links/kagi-deal", bearer(text)).status == 200);
    CHECK(f.call("GET", "/api/v1/links/tailscale-deal", bearer(text)).status == 404);
    CHECK(f.call("GET", "/api/v1/partners/kagi", bearer(text)).status == 403);
    CHECK(f.db.scalar("SELECT array_to_string(scopes, ',') || ' ' || array_to_string(partners, "
                      "',') || ' ' || array_to_string(domains, ',') || ' ' || "
                      "(expires_at - now() BETWEEN interval '29 days' AND interval '30 days') "
                      "FROM refgate_api_tokens WHERE name = 'plugin'") ==
          std::string("links:read,links:write kagi ") + kDefaultHost + " true");
    auto list = run_refgate({"token", "list"}, {{"REFGATE_DATABASE_URL", f.db.url()}});
    CHECK(contains(list.out, "links:read,links:write\tkagi\tgo.example.com\t20"));
    // Beyond the role, and bad values: refused, nothing made.
    auto beyond = run_refgate(
        {"token", "create", "--name", "v", "--role", "viewer", "--scope", "users:write"},
        {{"REFGATE_DATABASE_URL", f.db.url()}});
    CHECK(beyond.exit_code == 1);
    CHECK(contains(beyond.err, "does not allow users:write"));
    CHECK(run_refgate({"token", "create", "--name", "v", "--role", "viewer", "--expires", "soon"},
                      {{"REFGATE_DATABASE_URL", f.db.url()}})
              .exit_code == 2);
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_api_tokens WHERE name = 'v'") == "0");
}

TEST_CASE("every route's scope is within what its lowest role allows", "[admin][tokens]") {
    // Else a token of that role, given no scopes, could not call the route at all.
    for (const auto& route : refgate::admin::routes()) {
        INFO(route.method_name << " " << route.pattern);
        Scopes needs = refgate::admin::route_access(route.operation).scopes;
        CHECK((refgate::admin::role_scopes(route.min_role) & needs) == needs);
    }
}

// The authorization matrix: every route the registry holds (a new route is in it by being
// registered) against tokens given exactly its scopes, every scope but those, an expired token,
// and tokens restricted to the link's partner and domain or to others. What each must answer
// comes from the route's declared scope and extent; "allowed" is anything but 401 and 403 (the
// bodies are placeholders, so a 404, 412 or 422 past authorization is fine).
TEST_CASE("the authorization matrix: every route x scope x restriction x expiry",
          "[admin][pg][tokens]") {
    Fixture f;
    const std::string partner = "kagi";
    const std::string link = "kagi-deal";

    std::map<Scopes, std::string> exact;  // scopes -> token given only those
    auto token_for = [&](Scopes scopes) {
        auto [it, made] = exact.try_emplace(scopes);
        if (!made) return it->second;
        Json names = Json::array();
        for (auto n : refgate::admin::scope_names(scopes)) names.push_back(std::string(n));
        it->second =
            f.token({{"name", "s" + std::to_string(scopes)}, {"role", "admin"}, {"scopes", names}});
        return it->second;
    };
    std::string expired =
        f.token({{"name", "expired"}, {"role", "admin"}, {"expires_at", "2021-06-01T00:00:00Z"}});
    std::string own_partner =
        f.token({{"name", "own-p"}, {"role", "admin"}, {"partners", {partner}}});
    std::string other_partner =
        f.token({{"name", "other-p"}, {"role", "admin"}, {"partners", {"tailscale"}}});
    std::string own_domain =
        f.token({{"name", "own-d"}, {"role", "admin"}, {"domains", {kDefaultHost}}});
    std::string other_domain =
        f.token({{"name", "other-d"}, {"role", "admin"}, {"domains", {"elsewhere.example"}}});

    int n = 0;
    std::size_t covered = 0;
    for (const auto& route : refgate::admin::routes()) {
        std::string pattern(route.pattern);
        if (pattern.starts_with("/api/v1/session")) continue;  // signing in takes no token
        ++covered;
        auto access = refgate::admin::route_access(route.operation);
        // The path: the {slug} names the partner or link the extent is about.
        std::string path;
        for (std::size_t i = 0; i < pattern.size();) {
            if (pattern[i] != '{') {
                path += pattern[i++];
                continue;
            }
            auto end = pattern.find('}', i);
            std::string name = pattern.substr(i + 1, end - i - 1);
            bool about_partner = access.extent == Extent::partner;
            path += name == "slug"     ? (about_partner ? partner : link)
                    : name == "locale" ? "en"
                    : name == "token"  ? "abc123"
                                       : "nobody";
            i = end + 1;
        }
        std::string method(route.method_name);
        auto call = [&](const std::string& token) {
            ++n;
            std::string client =
                "198.51." + std::to_string(n / 250) + "." + std::to_string(n % 250 + 1);
            std::string body = "{}";
            if (access.extent == Extent::new_link)
                body = link_json("m" + std::to_string(n), partner).dump();
            // The token's own partner: it exists already (409), but gets past authorization.
            if (access.extent == Extent::new_partner) body = partner_json(partner).dump();
            bool writes = method != "GET";
            bool precondition = method == "PATCH" || method == "DELETE" || method == "PUT";
            Headers headers =
                writes ? json_write(token, precondition ? "\"999999\"" : "") : bearer(token);
            headers.emplace_back("X-Forwarded-For", client);
            return f.call(method, path, headers, writes ? body : "");
        };
        auto allowed = [](const HttpResponse& r) { return r.status != 401 && r.status != 403; };
        INFO(method << " " << path);

        // Exactly the route's scopes: through.
        auto given =
            call(token_for(access.scopes == scope::none ? scope::links_read : access.scopes));
        INFO(given.body);
        CHECK(allowed(given));
        // Every scope but the route's: 403.
        if (access.scopes != scope::none) {
            auto without = call(token_for(scope::all & ~access.scopes));
            CHECK(without.status == 403);
            CHECK(contains(without.body, "scope"));
        }
        // Expired: 401.
        auto late = call(expired);
        CHECK(late.status == 401);
        CHECK(contains(late.body, "expired"));

        // Restrictions.
        auto in_partner = call(own_partner);
        auto out_partner = call(other_partner);
        auto in_domain = call(own_domain);
        auto out_domain = call(other_domain);
        switch (access.extent) {
            case Extent::free:
                CHECK(allowed(in_partner));
                CHECK(allowed(out_partner));
                CHECK(allowed(out_domain));
                break;
            case Extent::whole:
                CHECK(in_partner.status == 403);
                CHECK(out_partner.status == 403);
                CHECK(out_domain.status == 403);
                break;
            case Extent::partner:
                CHECK(allowed(in_partner));
                CHECK(!contains(in_partner.body, "no partner '" + partner + "'"));
                CHECK(out_partner.status == 404);
                CHECK(allowed(out_domain));  // partners are on no domain
                break;
            case Extent::link:
                CHECK(allowed(in_partner));
                CHECK(!contains(in_partner.body, "no link '" + link + "'"));
                CHECK(allowed(in_domain));
                CHECK(!contains(in_domain.body, "no link '" + link + "'"));
                CHECK(out_partner.status == 404);
                CHECK(out_domain.status == 404);
                break;
            case Extent::new_partner:
                CHECK(allowed(in_partner));
                CHECK(out_partner.status == 403);
                CHECK(allowed(out_domain));
                break;
            case Extent::new_link:
                CHECK(allowed(in_partner));
                CHECK(allowed(in_domain));
                CHECK(out_partner.status == 403);
                CHECK(out_domain.status == 403);
                break;
            case Extent::partners:
            case Extent::links: {
                REQUIRE(in_partner.status == 200);
                REQUIRE(out_partner.status == 200);
                auto visible = slugs(out_partner.body);
                CHECK(std::find(visible.begin(), visible.end(),
                                access.extent == Extent::links ? link : partner) == visible.end());
                auto own = slugs(in_partner.body);
                CHECK(std::find(own.begin(), own.end(),
                                access.extent == Extent::links ? link : partner) != own.end());
                break;
            }
        }
    }
    // Every route of the API but the session's was tried.
    CHECK(covered + 4 == refgate::admin::routes().size());
}

}  // namespace token_scopes_test
