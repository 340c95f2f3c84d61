// Several branded domains (issue 46), the stored side: /api/v1/domains (audited, exactly one
// default), a slug unique per domain through the API and the import, the export and import of
// domains, and migration 022 on a database that already has links.

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "refgate/admin/qr_code.hpp"
#include "stats_fixture.hpp"
#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace domains_test {

using namespace refgate::test;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

struct Fixture {
    TestDatabase db;
    PrivateRedis redis;
    bool imported = import_demo_links(db.url(), {{"deal"}});
    ServiceProcess service{ServiceOptions{.database_url = db.url(), .redis_url = redis.url()}};
    std::string admin = create_api_token(db.url(), "ada", "admin");

    HttpResponse api(const std::string& method, const std::string& target, const Json& body = {},
                     Headers extra = {}, const std::string& token = {}) {
        extra.emplace_back("Authorization", "Bearer " + (token.empty() ? admin : token));
        if (body.is_null()) return http_request(service.admin_port(), method, target, extra);
        extra.emplace_back("Content-Type", "application/json");
        return http_request(service.admin_port(), method, target, extra, body.dump());
    }
    Json get(const std::string& target) { return Json::parse(api("GET", target).body); }
};

Json link(const std::string& slug, const std::string& path, const Json& domain = nullptr) {
    Json l = {
        {"slug", slug}, {"partner", "tailscale"}, {"destination", "https://tailscale.com/" + path}};
    if (!domain.is_null()) l["domain"] = domain;
    return l;
}

TEST_CASE(
    "domains are created, replaced and deleted through /api/v1/domains by admins, audited, and "
    "exactly one of them is the default",
    "[domains][pg][admin]") {
    Fixture f;
    CHECK(f.get("/api/v1/domains")["items"] == Json::array());
    // The first domain must be the default.
    auto refused = f.api("PUT", "/api/v1/domains/go.example.com", {{"default", false}});
    CHECK(refused.status == 422);
    CHECK(Json::parse(refused.body)["errors"][0]["field"] == "default");
    // Hosts are checked as destinations' hosts are.
    auto bad_host = f.api("PUT", "/api/v1/domains/go.example.com",
                          {{"default", true}, {"host", "other.example.com"}});
    CHECK(bad_host.status == 422);
    CHECK(f.api("PUT", "/api/v1/domains/go_example..com", {{"default", true}}).status == 404);
    auto bad_url = f.api("PUT", "/api/v1/domains/go.example.com",
                         {{"default", true}, {"not_found", "http://example.com/"}});
    CHECK(bad_url.status == 422);
    CHECK(Json::parse(bad_url.body)["errors"][0]["field"] == "not_found");
    std::string editor = create_api_token(f.db.url(), "eddie", "editor");
    CHECK(f.api("PUT", "/api/v1/domains/go.example.com", {{"default", true}}, {}, editor).status ==
          403);

    auto created = f.api("PUT", "/api/v1/domains/go.example.com", {{"default", true}});
    REQUIRE(created.status == 201);
    CHECK(created.header("Location") == "/api/v1/domains/go.example.com");
    Json de = {{"default", false}, {"not_found", "https://de.example.com/hallo"}};
    REQUIRE(f.api("PUT", "/api/v1/domains/de.example.com", de).status == 201);
    auto both = f.get("/api/v1/domains")["items"];
    REQUIRE(both.size() == 2);
    CHECK(both[0]["host"] == "de.example.com");
    CHECK(both[0]["default"] == false);
    CHECK(both[0]["not_found"] == "https://de.example.com/hallo");
    CHECK(both[1]["host"] == "go.example.com");
    CHECK(both[1]["default"] == true);
    CHECK(both[1]["not_found"] == nullptr);
    // Viewers read them.
    std::string viewer = create_api_token(f.db.url(), "vera", "viewer");
    CHECK(f.api("GET", "/api/v1/domains/de.example.com", {}, {}, viewer).status == 200);

    // The default cannot step down by itself, nor be deleted while another domain exists.
    auto etag = f.api("GET", "/api/v1/domains/go.example.com").header("ETag");
    CHECK(f.api("PUT", "/api/v1/domains/go.example.com", {{"default", false}}, {{"If-Match", etag}})
              .status == 422);
    CHECK(f.api("DELETE", "/api/v1/domains/go.example.com", {}, {{"If-Match", etag}}).status ==
          409);
    // Another domain takes over as the default: the old one steps down in the same change.
    de["default"] = true;
    CHECK(f.api("PUT", "/api/v1/domains/de.example.com", de).status == 428);
    auto de_etag = f.api("GET", "/api/v1/domains/de.example.com").header("ETag");
    CHECK(f.api("PUT", "/api/v1/domains/de.example.com", de, {{"If-Match", de_etag}}).status ==
          200);
    CHECK(f.get("/api/v1/domains/de.example.com")["default"] == true);
    CHECK(f.get("/api/v1/domains/go.example.com")["default"] == false);
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_domains WHERE is_default") == "1");

    etag = f.api("GET", "/api/v1/domains/go.example.com").header("ETag");
    CHECK(f.api("DELETE", "/api/v1/domains/go.example.com", {}, {{"If-Match", etag}}).status ==
          204);
    CHECK(f.api("GET", "/api/v1/domains/go.example.com").status == 404);

    auto audit = f.get("/api/v1/audit?entity=domain")["items"];
    REQUIRE(audit.size() == 5);  // newest first
    CHECK(audit[0]["action"] == "delete");
    CHECK(audit[0]["slug"] == "go.example.com");
    CHECK(audit[1]["slug"] == "de.example.com");
    CHECK(audit[1]["after"]["default"] == true);
    CHECK(audit[2]["slug"] == "go.example.com");  // stepped down
    CHECK(audit[2]["before"]["default"] == true);
    CHECK(audit[2]["after"]["default"] == false);
    CHECK(audit[3]["action"] == "create");
    CHECK(audit[4]["action"] == "create");
    CHECK(audit[4]["actor"] == "ada");
}

TEST_CASE(
    "a slug is unique per domain: `deal` exists on the default domain and on another one, the "
    "export carries the domains and the links' domain, and imports again as it was",
    "[domains][pg][admin]") {
    Fixture f;
    REQUIRE(f.api("PUT", "/api/v1/domains/go.example.com", {{"default", true}}).status == 201);
    REQUIRE(f.api("PUT", "/api/v1/domains/de.example.com", {{"not_found", nullptr}}).status == 201);

    // `deal` is taken on the default domain (the demo import), by its host or without one.
    CHECK(f.api("POST", "/api/v1/links", link("deal", "other")).status == 409);
    CHECK(f.api("POST", "/api/v1/links", link("deal", "other", "go.example.com")).status == 409);
    auto on_de = f.api("POST", "/api/v1/links", link("deal", "de", "DE.example.com"));
    INFO(on_de.body);
    REQUIRE(on_de.status == 201);
    CHECK(Json::parse(on_de.body)["domain"] == "de.example.com");
    CHECK(f.api("POST", "/api/v1/links", link("deal", "de2", "de.example.com")).status == 409);
    auto unknown = f.api("POST", "/api/v1/links", link("deal", "x", "nl.example.com"));
    CHECK(unknown.status == 422);
    CHECK(Json::parse(unknown.body)["errors"][0]["field"] == "domain");
    // The default domain's link is what /links/deal names; its domain is absent.
    auto deal = f.get("/api/v1/links/deal");
    CHECK(deal["destination"] == "https://tailscale.com/deal");
    CHECK_FALSE(deal.contains("domain"));
    CHECK(f.get("/api/v1/audit?entity=link")["items"][0]["slug"] == "de.example.com/deal");
    // A domain with links cannot go.
    auto etag = f.api("GET", "/api/v1/domains/de.example.com").header("ETag");
    CHECK(f.api("DELETE", "/api/v1/domains/de.example.com", {}, {{"If-Match", etag}}).status ==
          409);

    auto exported = f.get("/api/v1/export");
    REQUIRE(exported["domains"].size() == 2);
    CHECK(exported["domains"][0] ==
          Json{{"host", "de.example.com"}, {"default", false}, {"not_found", nullptr}});
    CHECK(exported["domains"][1]["default"] == true);
    REQUIRE(exported["links"].size() == 2);
    int on_other = 0;
    for (const auto& l : exported["links"]) {
        if (l.contains("domain")) {
            ++on_other;
            CHECK(l["domain"] == "de.example.com");
            CHECK(l["destination"] == "https://tailscale.com/de");
        }
    }
    CHECK(on_other == 1);

    // Into an empty database, and out again: the same document.
    TestDatabase copy;
    auto imported = import_json(copy.url(), exported.dump());
    INFO(imported.err);
    REQUIRE(imported.exit_code == 0);
    auto again = run_refgate({"export"}, {{"REFGATE_DATABASE_URL", copy.url()}});
    REQUIRE(again.exit_code == 0);
    // The same document, the links perhaps in another order (an import inserts them in one
    // statement).
    auto by_destination = [](Json doc) {
        std::sort(doc["links"].begin(), doc["links"].end(),
                  [](const Json& a, const Json& b) { return a["destination"] < b["destination"]; });
        return doc;
    };
    CHECK(by_destination(Json::parse(again.out)) == by_destination(exported));
    // The import refuses a link on a domain nobody defined, and two defaults.
    Json stray = {{"links", Json::array({link("deal", "x", "nl.example.com")})}};
    CHECK(import_json(copy.url(), stray.dump()).exit_code != 0);
    Json two = {{"domains", Json::array({{{"host", "a.example.com"}, {"default", true}},
                                         {{"host", "b.example.com"}, {"default", true}}})}};
    CHECK(import_json(copy.url(), two.dump()).exit_code != 0);
    CHECK(copy.scalar("SELECT count(*) FROM refgate_domains") == "2");
}

TEST_CASE(
    "migration 022 on a database with links keeps them on the default domain: nothing about "
    "the single-domain setup changes",
    "[domains][pg][migrate]") {
    TestDatabase db(false);
    // Every migration before 022, then links, then 022.
    db.exec(
        "CREATE TABLE refgate_schema_migrations (name text PRIMARY KEY, applied_at timestamptz "
        "NOT NULL DEFAULT now()); INSERT INTO refgate_schema_migrations (name) VALUES "
        "('022_domains')");
    auto env = EnvPairs{{"REFGATE_DATABASE_URL", db.url()}};
    REQUIRE(run_refgate({"migrate"}, env).exit_code == 0);
    CHECK(db.scalar("SELECT count(*) FROM information_schema.tables WHERE table_name = "
                    "'refgate_domains'") == "0");
    // The links as a pre-022 refgate stored them (its import knew no domain column).
    db.exec(
        "INSERT INTO refgate_partners (slug, name, ref_param, ref_code, allowed_domains) VALUES "
        "('tailscale', 'Tailscale', 'ref', 'picks42', ARRAY['tailscale.com']); "
        "INSERT INTO refgate_links (slug, partner_id, destination) SELECT s, p.id, "
        "'https://tailscale.com/' || s FROM refgate_partners p, unnest(ARRAY['alpha', 'beta']) s");
    db.exec("DELETE FROM refgate_schema_migrations WHERE name = '022_domains'");
    auto migrated = run_refgate({"migrate"}, env);
    INFO(migrated.err);
    REQUIRE(migrated.exit_code == 0);
    CHECK(db.scalar("SELECT count(*) FROM refgate_links WHERE domain IS NULL") == "2");
    // A slug is still taken once on the default domain.
    CHECK_THROWS(
        db.exec("INSERT INTO refgate_links (slug, partner_id, destination) SELECT "
                "'alpha', id, 'https://tailscale.com/x' FROM refgate_partners"));

    PrivateRedis redis;
    ServiceProcess service{ServiceOptions{.database_url = db.url(), .redis_url = redis.url()}};
    auto r = http_get(service.port(), "/go/alpha", {{"User-Agent", kBrowser}});
    CHECK(r.status == 302);
    CHECK(r.header("Location") == "https://tailscale.com/alpha?ref=picks42");
    auto exported = run_refgate({"export"}, env);
    REQUIRE(exported.exit_code == 0);
    auto doc = Json::parse(exported.out);
    CHECK_FALSE(doc.contains("domains"));
    CHECK_FALSE(doc["links"][0].contains("domain"));
}

}  // namespace domains_test

namespace domains_test {

TEST_CASE(
    "share answers a link's URL on its own domain: the default domain's host for a link without "
    "one, the public base URL's scheme and path kept",
    "[domains][pg][admin]") {
    TestDatabase db;
    PrivateRedis redis;
    import_demo_links(db.url(), {{"deal"}});
    ServiceProcess service{
        ServiceOptions{.database_url = db.url(),
                       .redis_url = redis.url(),
                       .env = {{"REFGATE_PUBLIC_BASE_URL", "https://links.example.org/r"}}}};
    std::string admin = create_api_token(db.url(), "ada", "admin");
    Headers auth{{"Authorization", "Bearer " + admin}};
    auto share = [&](const std::string& slug) {
        auto r = http_get(service.admin_port(), "/api/v1/links/" + slug + "/share", auth);
        REQUIRE(r.status == 200);
        return Json::parse(r.body)["public_url"];
    };
    // No domain defined: the public base URL as it was.
    CHECK(share("deal") == "https://links.example.org/r/go/deal");
    Headers json = auth;
    json.emplace_back("Content-Type", "application/json");
    REQUIRE(http_request(service.admin_port(), "PUT", "/api/v1/domains/go.example.com", json,
                         R"({"default": true})")
                .status == 201);
    REQUIRE(http_request(service.admin_port(), "PUT", "/api/v1/domains/de.example.com", json, "{}")
                .status == 201);
    REQUIRE(http_request(service.admin_port(), "POST", "/api/v1/links", json,
                         link("angebot", "de", "de.example.com").dump())
                .status == 201);
    CHECK(share("deal") == "https://go.example.com/r/go/deal");
    CHECK(share("angebot") == "https://de.example.com/r/go/angebot");
    auto qr = http_get(service.admin_port(), "/api/v1/links/angebot/qr.svg", auth);
    CHECK(qr.status == 200);
}

}  // namespace domains_test

namespace domains_test {

// `deal` on the default domain go.example.com and on de.example.com; `angebot` on de alone.
// `subids`: the partner writes (opaque) placement tokens into sub-ID parameter subId1.
std::string two_domains_document(bool subids = false) {
    Json partner = {{"slug", "tailscale"},
                    {"name", "Tailscale"},
                    {"ref_param", "ref"},
                    {"ref_code", "picks42"},
                    {"allowed_domains", {"tailscale.com"}}};
    if (subids) partner["subid_param"] = "subId1";
    Json domains = Json::array({{{"host", "go.example.com"}, {"default", true}},
                                {{"host", "de.example.com"}, {"default", false}}});
    Json links = Json::array({link("deal", "deal"), link("deal", "angebot", "de.example.com"),
                              link("angebot", "angebot", "de.example.com")});
    return Json{{"domains", domains}, {"partners", {partner}}, {"links", links}}.dump();
}

// One GET with exactly this Host field.
HttpResponse get_on(int port, const std::string& target, const std::string& host) {
    RawConnection c(port);
    REQUIRE(
        c.send("GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n"));
    auto r = c.read_response();
    REQUIRE(r);
    return *r;
}

struct TwoDomains {
    TestDatabase db;
    PrivateRedis redis;
    bool imported = import_document(db.url(), two_domains_document());
    ServiceProcess service{
        ServiceOptions{.database_url = db.url(),
                       .redis_url = redis.url(),
                       .env = {{"REFGATE_PUBLIC_BASE_URL", "https://links.example.org/r"}}}};
    std::string admin = create_api_token(db.url(), "ada", "admin");

    // The href of /snippet/<target>'s JSON answer on `host` ("status N" when it is not 200).
    std::string snippet_href(const std::string& target, const std::string& host) {
        auto r = get_on(service.port(), "/snippet/" + target, host);
        INFO(target << " on " << host << ": " << r.status << " " << r.body);
        if (r.status != 200) return "status " + std::to_string(r.status);
        return Json::parse(r.body)["href"];
    }
};

TEST_CASE(
    "snippets and QR codes on the link's domain: /snippet/ picks the link by ?domain= or the "
    "request's host and prints its URL on that domain, as the share answer and its QR code do",
    "[domains][pg][snippet]") {
    TwoDomains f;
    REQUIRE(f.imported);
    // By the request's host, as the redirect picks the link.
    CHECK(f.snippet_href("deal?format=json", "de.example.com") ==
          "https://de.example.com/r/go/deal");
    CHECK(f.snippet_href("deal?format=json", "GO.example.com:8080") ==
          "https://go.example.com/r/go/deal");
    CHECK(f.snippet_href("angebot?format=json&src=newsletter", "de.example.com") ==
          "https://de.example.com/r/go/angebot?src=newsletter");
    // An unknown host: the default domain's links.
    CHECK(f.snippet_href("deal?format=json", "127.0.0.1") == "https://go.example.com/r/go/deal");
    CHECK(f.snippet_href("angebot?format=json", "127.0.0.1") == "status 404");
    // ?domain= names the domain whatever the host; an unknown one is 404.
    CHECK(f.snippet_href("angebot?format=json&domain=de.example.com", "127.0.0.1") ==
          "https://de.example.com/r/go/angebot");
    CHECK(f.snippet_href("deal?format=json&domain=go.example.com", "de.example.com") ==
          "https://go.example.com/r/go/deal");
    CHECK(f.snippet_href("deal?format=json&domain=nl.example.com", "de.example.com") ==
          "status 404");
    // The HTML answer links there.
    auto html = get_on(f.service.port(), "/snippet/angebot", "de.example.com");
    REQUIRE(html.status == 200);
    CHECK(html.body.find("href=\"https://de.example.com/r/go/angebot\"") != std::string::npos);

    // The share answer's snippet and the QR code encode the same URL.
    Headers auth{{"Authorization", "Bearer " + f.admin}};
    auto share = http_get(f.service.admin_port(), "/api/v1/links/angebot/share", auth);
    REQUIRE(share.status == 200);
    auto shared = Json::parse(share.body);
    CHECK(shared["public_url"] == "https://de.example.com/r/go/angebot");
    CHECK(shared["html_snippet"].get<std::string>() + "\n" == html.body);
    for (const auto& [slug, url] : {std::pair{"angebot", "https://de.example.com/r/go/angebot"},
                                    std::pair{"deal", "https://go.example.com/r/go/deal"}}) {
        auto qr = http_get(f.service.admin_port(),
                           "/api/v1/links/" + std::string(slug) + "/qr.svg?size=256", auth);
        REQUIRE(qr.status == 200);
        auto matrix = refgate::admin::encode_qr(url);
        REQUIRE(matrix);
        CHECK(qr.body == refgate::admin::qr_svg(*matrix, 256));
    }
}

TEST_CASE(
    "a domain-restricted token takes links without a domain as on the stored default domain, "
    "not on the public base URL's host",
    "[domains][pg][tokens]") {
    TwoDomains f;
    REQUIRE(f.imported);
    Headers json{{"Authorization", "Bearer " + f.admin}, {"Content-Type", "application/json"}};
    auto token = [&](const std::string& name, const std::string& host) {
        Json fields = {{"name", name}, {"role", "editor"}, {"domains", {host}}};
        auto r =
            http_request(f.service.admin_port(), "POST", "/api/v1/tokens", json, fields.dump());
        INFO(r.body);
        REQUIRE(r.status == 201);
        return Headers{
            {"Authorization", "Bearer " + Json::parse(r.body)["token"].get<std::string>()}};
    };
    auto home = token("home", "go.example.com");
    auto base = token("base", "links.example.org");
    CHECK(http_get(f.service.admin_port(), "/api/v1/links/deal", home).status == 200);
    CHECK(http_get(f.service.admin_port(), "/api/v1/links/deal", base).status == 404);
    auto listed = Json::parse(http_get(f.service.admin_port(), "/api/v1/links", home).body);
    REQUIRE(listed["items"].size() == 1);
    CHECK(listed["items"][0]["slug"] == "deal");
    CHECK(
        Json::parse(http_get(f.service.admin_port(), "/api/v1/links", base).body)["items"].empty());
}

}  // namespace domains_test

namespace domains_test {

// Issue 46: "Stats and metrics can be filtered by domain", and a link of another domain named by
// slug with ?domain=.
struct StatsOnDomains : stats::StatsService {
    explicit StatsOnDomains(bool subids = false)
        : StatsService(two_domains_document(subids), "ada", "admin") {}

    void click(const std::string& slug, const std::string& host, int reader) {
        RawConnection c(service.port());
        REQUIRE(c.send("GET /go/" + slug + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: " +
                       kBrowser + std::to_string(reader) + "\r\nConnection: close\r\n\r\n"));
        auto r = c.read_response();
        REQUIRE(r);
        REQUIRE(r->status == 302);
    }
    std::string range() const { return "from=" + today + "&to=" + today; }
    void wait_for_human(std::uint64_t human) {
        std::string target = "/api/v1/stats/overview?" + range();
        Json body = get_json(target);
        for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
             body["totals"]["human"] != human && std::chrono::steady_clock::now() < deadline;
             body = get_json(target))
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        REQUIRE(body["totals"]["human"] == human);
    }
};

TEST_CASE(
    "stats are filtered by domain with ?domain=HOST: the top links and partners and a partner's "
    "figures count only the links on that domain, flushed and unflushed, in JSON and CSV",
    "[domains][stats][pg][redis]") {
    StatsOnDomains f;
    REQUIRE(f.imported);
    for (int i = 0; i < 3; ++i) f.click("deal", "go.example.com", i);
    f.click("deal", "de.example.com", 3);
    f.wait_for_human(4);
    f.flush();
    f.click("deal", "de.example.com", 4);
    f.click("angebot", "de.example.com", 5);
    f.wait_for_human(6);

    auto de = f.get_json("/api/v1/stats/top?domain=de.example.com&" + f.range());
    REQUIRE(de["items"].size() == 2);
    CHECK(de["items"][0]["link"] == "deal");
    CHECK(de["items"][0]["human"] == 2);
    CHECK(de["items"][1]["link"] == "angebot");
    CHECK(de["items"][1]["human"] == 1);
    // The default domain: links without a domain; the host in any case.
    auto go = f.get_json("/api/v1/stats/top?domain=GO.example.com&" + f.range());
    REQUIRE(go["items"].size() == 1);
    CHECK(go["items"][0]["link"] == "deal");
    CHECK(go["items"][0]["human"] == 3);
    auto partners = f.get_json("/api/v1/stats/top?by=partner&domain=de.example.com&" + f.range());
    REQUIRE(partners["items"].size() == 1);
    CHECK(partners["items"][0]["human"] == 3);
    auto csv =
        f.get("/api/v1/stats/top?domain=de.example.com&" + f.range(), {{"Accept", "text/csv"}});
    CHECK(csv.body ==
          "rank,link,partner,human,bot,prefetch,domain\r\n1,deal,tailscale,2,0,0,de.example.com\r\n"
          "2,angebot,tailscale,1,0,0,de.example.com\r\n");

    auto partner =
        f.get_json("/api/v1/stats/partners/tailscale?domain=de.example.com&" + f.range());
    CHECK(partner["totals"]["human"] == 3);
    CHECK(partner["days"][0]["human"] == 3);
    REQUIRE(partner["links"].size() == 2);
    CHECK(partner["links"][0]["link"] == "angebot");
    CHECK(partner["links"][1] == Json{{"link", "deal"},
                                      {"domain", "de.example.com"},
                                      {"human", 2},
                                      {"bot", 0},
                                      {"prefetch", 0}});
    auto partner_csv = f.get("/api/v1/stats/partners/tailscale?domain=go.example.com&" + f.range(),
                             {{"Accept", "text/csv"}});
    CHECK(partner_csv.body == "day,human,bot,prefetch\r\n" + f.today + ",3,0,0\r\n");
    // Unfiltered: every domain, a slug taken on two domains listed once per link, each with its
    // domain (absent on the default domain).
    auto all = f.get_json("/api/v1/stats/partners/tailscale?" + f.range());
    CHECK(all["totals"]["human"] == 6);
    CHECK(all["links"] == Json::parse(R"([
        {"link": "angebot", "domain": "de.example.com", "human": 1, "bot": 0, "prefetch": 0},
        {"link": "deal", "human": 3, "bot": 0, "prefetch": 0},
        {"link": "deal", "domain": "de.example.com", "human": 2, "bot": 0, "prefetch": 0}])"));
    auto top = f.get_json("/api/v1/stats/top?" + f.range());
    CHECK(top["items"] == Json::parse(R"([
        {"link": "deal", "partner": "tailscale", "human": 3, "bot": 0, "prefetch": 0},
        {"link": "deal", "partner": "tailscale", "domain": "de.example.com", "human": 2, "bot": 0,
         "prefetch": 0},
        {"link": "angebot", "partner": "tailscale", "domain": "de.example.com", "human": 1,
         "bot": 0, "prefetch": 0}])"));
    CHECK(f.get("/api/v1/stats/top?" + f.range(), {{"Accept", "text/csv"}}).body ==
          "rank,link,partner,human,bot,prefetch,domain\r\n1,deal,tailscale,3,0,0,\r\n"
          "2,deal,tailscale,2,0,0,de.example.com\r\n3,angebot,tailscale,1,0,0,de.example.com\r\n");

    // A domain nobody defined is 404.
    CHECK(f.get("/api/v1/stats/top?domain=nl.example.com").status == 404);
    CHECK(f.get("/api/v1/stats/partners/tailscale?domain=nl.example.com").status == 404);
    CHECK(f.get("/api/v1/stats/top?domain=not%20a%20host").status == 404);
}

TEST_CASE(
    "a link of another domain is read, changed and deleted by its slug with ?domain=HOST, and "
    "without it the slug names the default domain's link",
    "[domains][pg][admin]") {
    TwoDomains f;
    REQUIRE(f.imported);
    Headers auth{{"Authorization", "Bearer " + f.admin}};
    auto get = [&](const std::string& target) {
        return http_get(f.service.admin_port(), target, auth);
    };
    auto destination = [&](const std::string& target) -> Json {
        auto r = get(target);
        if (r.status != 200) return r.status;
        return Json::parse(r.body)["destination"];
    };
    CHECK(destination("/api/v1/links/deal") == "https://tailscale.com/deal");
    CHECK(destination("/api/v1/links/deal?domain=go.example.com") == "https://tailscale.com/deal");
    CHECK(destination("/api/v1/links/deal?domain=DE.example.com") ==
          "https://tailscale.com/angebot");
    CHECK(destination("/api/v1/links/deal?domain=nl.example.com") == 404);
    CHECK(destination("/api/v1/links/angebot?domain=go.example.com") == 404);
    auto share = get("/api/v1/links/deal/share?domain=de.example.com");
    REQUIRE(share.status == 200);
    CHECK(Json::parse(share.body)["public_url"] == "https://de.example.com/r/go/deal");
    auto qr = get("/api/v1/links/deal/qr.svg?size=256&domain=de.example.com");
    REQUIRE(qr.status == 200);
    CHECK(qr.body == refgate::admin::qr_svg(
                         *refgate::admin::encode_qr("https://de.example.com/r/go/deal"), 256));

    // PATCH and DELETE change the link on that domain only.
    Headers write = auth;
    write.emplace_back("Content-Type", "application/merge-patch+json");
    write.emplace_back("If-Match", get("/api/v1/links/deal?domain=de.example.com").header("ETag"));
    auto patched =
        http_request(f.service.admin_port(), "PATCH", "/api/v1/links/deal?domain=de.example.com",
                     write, R"({"destination": "https://tailscale.com/neu"})");
    INFO(patched.body);
    REQUIRE(patched.status == 200);
    CHECK(destination("/api/v1/links/deal?domain=de.example.com") == "https://tailscale.com/neu");
    CHECK(destination("/api/v1/links/deal") == "https://tailscale.com/deal");
    Headers del = auth;
    del.emplace_back("If-Match", get("/api/v1/links/deal?domain=de.example.com").header("ETag"));
    CHECK(http_request(f.service.admin_port(), "DELETE", "/api/v1/links/deal?domain=de.example.com",
                       del)
              .status == 204);
    CHECK(destination("/api/v1/links/deal?domain=de.example.com") == 404);
    CHECK(destination("/api/v1/links/deal") == "https://tailscale.com/deal");
}

TEST_CASE(
    "a slug taken on two domains: its stats, placements and placement tokens are those of the link "
    "?domain=HOST names, and a bare slug the default domain's link, as GET /links/{slug} does",
    "[domains][stats][placements][pg][redis]") {
    StatsOnDomains f(true);
    REQUIRE(f.imported);
    for (int i = 0; i < 3; ++i) f.click("deal", "go.example.com", i);
    f.click("deal?src=newsletter", "de.example.com", 3);
    f.wait_for_human(4);
    f.flush();
    f.click("deal?src=newsletter", "de.example.com", 4);
    f.wait_for_human(5);

    // Each link's own figures, flushed and still in Redis.
    auto de = f.get_json("/api/v1/stats/links/deal?domain=de.example.com&" + f.range());
    CHECK(de["link"] == "deal");
    CHECK(de["domain"] == "de.example.com");
    CHECK(de["totals"]["human"] == 2);
    CHECK(de["totals"]["human_by_channel"] == Json{{"newsletter", 2}});
    auto go = f.get_json("/api/v1/stats/links/deal?domain=GO.example.com&" + f.range());
    CHECK_FALSE(go.contains("domain"));
    CHECK(go["totals"]["human"] == 3);
    CHECK(go["totals"]["human_by_channel"] == Json{{"direct", 3}});
    // A bare slug: the default domain's link; a slug on one other domain only: that link.
    CHECK(f.get_json("/api/v1/stats/links/deal?" + f.range()) == go);
    auto angebot = f.get_json("/api/v1/stats/links/angebot?" + f.range());
    CHECK(angebot["domain"] == "de.example.com");
    CHECK(angebot["totals"]["human"] == 0);
    CHECK(f.get("/api/v1/stats/links/angebot?domain=go.example.com").status == 404);
    CHECK(f.get("/api/v1/stats/links/deal?domain=nl.example.com").status == 404);
    auto csv = f.get("/api/v1/stats/links/deal?domain=de.example.com&" + f.range(),
                     {{"Accept", "text/csv"}});
    CHECK(csv.body.starts_with("day,human,bot,prefetch,unique_estimate,human:newsletter\r\n" +
                               f.today + ",2,0,0,"));

    // The placements: the link's own channels and tokens (its id makes them).
    auto placements =
        f.get_json("/api/v1/links/deal/placements?domain=de.example.com&" + f.range());
    REQUIRE(placements["items"].size() == 1);
    CHECK(placements["items"][0]["channel"] == "newsletter");
    CHECK(placements["items"][0]["human_clicks"] == 2);
    std::string token = placements["items"][0]["token"];
    REQUIRE(de["placements"].size() == 1);
    CHECK(de["placements"][0]["token"] == token);
    auto home = f.get_json("/api/v1/links/deal/placements?" + f.range());
    REQUIRE(home["items"].size() == 1);
    CHECK(home["items"][0]["channel"] == "direct");
    CHECK(home["items"][0]["human_clicks"] == 3);
    CHECK(home["items"][0]["token"] != token);
    CHECK(f.get("/api/v1/links/deal/placements?domain=nl.example.com").status == 404);
    // A token names its link by id: the answer says which domain's, and finds its channel among
    // that link's clicks.
    CHECK(f.get_json("/api/v1/placements/" + token + "?" + f.range()) ==
          Json{{"token", token},
               {"link", "deal"},
               {"channel", "newsletter"},
               {"domain", "de.example.com"}});
    std::string home_token = home["items"][0]["token"];
    CHECK(f.get_json("/api/v1/placements/" + home_token + "?" + f.range()) ==
          Json{{"token", home_token}, {"link", "deal"}, {"channel", "direct"}});
}

TEST_CASE(
    "a link's audit entries have one key however it was addressed: `slug` on the default domain "
    "with or without ?domain=, `host/slug` on another",
    "[domains][audit][pg][admin]") {
    TwoDomains f;
    REQUIRE(f.imported);
    Headers auth{{"Authorization", "Bearer " + f.admin}};
    auto etag = [&](const std::string& target) {
        return http_get(f.service.admin_port(), target, auth).header("ETag");
    };
    auto patch = [&](const std::string& target, const std::string& path) {
        Headers write = auth;
        write.emplace_back("Content-Type", "application/merge-patch+json");
        write.emplace_back("If-Match", etag(target));
        auto r = http_request(f.service.admin_port(), "PATCH", target, write,
                              Json{{"destination", "https://tailscale.com/" + path}}.dump());
        INFO(target << " -> " << r.body);
        REQUIRE(r.status == 200);
    };
    patch("/api/v1/links/deal", "one");
    patch("/api/v1/links/deal?domain=go.example.com", "two");
    patch("/api/v1/links/deal?domain=GO.example.com", "three");
    patch("/api/v1/links/deal?domain=de.example.com", "vier");
    Headers del = auth;
    del.emplace_back("If-Match", etag("/api/v1/links/deal?domain=go.example.com"));
    REQUIRE(http_request(f.service.admin_port(), "DELETE",
                         "/api/v1/links/deal?domain=go.example.com", del)
                .status == 204);

    auto audit = Json::parse(
        http_get(f.service.admin_port(), "/api/v1/audit?entity=link", auth).body)["items"];
    REQUIRE(audit.size() == 8);  // newest first, after the import's three creations
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < 5; ++i) keys.push_back(audit[i]["slug"]);
    CHECK(keys == std::vector<std::string>{"deal", "de.example.com/deal", "deal", "deal", "deal"});
    // Filtering by the key finds every change of the default domain's link, its creation too.
    auto home = Json::parse(
        http_get(f.service.admin_port(), "/api/v1/audit?entity=link&slug=deal", auth).body);
    CHECK(home["items"].size() == 5);
}

TEST_CASE(
    "readable placement tokens of one slug on two domains would name two links: the second "
    "link is refused, and opaque tokens let it be saved",
    "[domains][placements][pg][admin]") {
    Fixture f;
    // A change names the version it read (If-Match), as the console sends it.
    auto patch = [&](const std::string& target, const Json& body) {
        auto etag = f.api("GET", target).header("ETag");
        return f.api("PATCH", target, body, {{"If-Match", etag}});
    };
    REQUIRE(f.api("PUT", "/api/v1/domains/go.example.com", {{"default", true}}).status == 201);
    REQUIRE(f.api("PUT", "/api/v1/domains/de.example.com", {{"not_found", nullptr}}).status == 201);
    auto readable =
        patch("/api/v1/partners/tailscale", {{"subid_param", "sid"}, {"subid_style", "readable"}});
    INFO(readable.body);
    REQUIRE(readable.status == 200);
    // `deal` on the default domain (the demo import) and `deal` on de.example.com would both
    // carry sid=deal_<channel>: a network's report could not say which link earned.
    auto refused = f.api("POST", "/api/v1/links", link("deal", "de", "de.example.com"));
    INFO(refused.body);
    CHECK(refused.status == 422);
    CHECK(refused.body.find("'de.example.com/deal' and 'deal' could collide") != std::string::npos);
    // A slug of its own on that domain is fine, and so is changing the default one.
    CHECK(f.api("POST", "/api/v1/links", link("promo", "de", "de.example.com")).status == 201);
    CHECK(patch("/api/v1/links/deal", {{"destination", "https://tailscale.com/new"}}).status ==
          200);
    // With opaque tokens (the link's id) the two links stay apart.
    REQUIRE(patch("/api/v1/partners/tailscale", {{"subid_style", "opaque"}}).status == 200);
    CHECK(f.api("POST", "/api/v1/links", link("deal", "de", "de.example.com")).status == 201);
    // And readable tokens are refused for the partner while both exist.
    auto back = patch("/api/v1/partners/tailscale", {{"subid_style", "readable"}});
    CHECK(back.status == 422);
    CHECK(back.body.find("could collide") != std::string::npos);
}

}  // namespace domains_test
