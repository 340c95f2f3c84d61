// Several branded domains (issue 46), the redirect: a link is picked by the request's host (the
// Host field, or an absolute-form target's authority; port stripped, any case), an unknown host
// is served as the default domain or refused with REFGATE_UNKNOWN_HOST=reject, and a domain's
// not_found answers its unknown slugs.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace domains_redirect_test {

using namespace refgate::test;
using Json = nlohmann::json;

const std::string kDefaultDeal = "https://tailscale.com/deal?ref=picks42";
const std::string kGermanDeal = "https://tailscale.com/angebot?ref=picks42";

// `deal` on the default domain go.example.com and on de.example.com, to other destinations;
// `only-de` on de.example.com alone.
std::string document() {
    Json partner = {{"slug", "tailscale"},
                    {"name", "Tailscale"},
                    {"ref_param", "ref"},
                    {"ref_code", "picks42"},
                    {"allowed_domains", {"tailscale.com"}}};
    Json domains =
        Json::array({{{"host", "go.example.com"}, {"default", true}},
                     {{"host", "de.example.com"}, {"not_found", "https://de.example.com/hallo"}}});
    Json links = Json::array({{{"slug", "deal"},
                               {"partner", "tailscale"},
                               {"destination", "https://tailscale.com/deal"}},
                              {{"slug", "deal"},
                               {"partner", "tailscale"},
                               {"destination", "https://tailscale.com/angebot"},
                               {"domain", "de.example.com"}},
                              {{"slug", "only-de"},
                               {"partner", "tailscale"},
                               {"destination", "https://tailscale.com/nur"},
                               {"domain", "de.example.com"}}});
    return Json{{"domains", domains}, {"partners", {partner}}, {"links", links}}.dump();
}

// One GET with exactly this request line's target and Host field.
HttpResponse get_on(int port, const std::string& target, const std::string& host) {
    RawConnection c(port);
    REQUIRE(c.send("GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: " + kBrowser +
                   "\r\nConnection: close\r\n\r\n"));
    auto r = c.read_response();
    REQUIRE(r);
    return *r;
}

struct Fixture {
    TestDatabase db;
    PrivateRedis redis;
    bool imported;
    ServiceProcess service;

    explicit Fixture(EnvPairs env = {}, const std::string& doc = document())
        : imported(import_document(db.url(), doc)),
          service(ServiceOptions{.database_url = db.url(), .redis_url = redis.url(), .env = env}) {}

    std::string location(const std::string& target, const std::string& host) {
        auto r = get_on(service.port(), target, host);
        INFO(target << " on " << host << ": " << r.status << " " << r.body);
        if (r.status != 302) return "status " + std::to_string(r.status);
        return r.header("Location");
    }
};

TEST_CASE(
    "the same slug on two domains redirects by the Host field, in any case and with a port, and "
    "by an absolute-form target's authority over the Host field",
    "[domains][redirect]") {
    Fixture f;
    CHECK(f.location("/go/deal", "go.example.com") == kDefaultDeal);
    CHECK(f.location("/go/deal", "de.example.com") == kGermanDeal);
    CHECK(f.location("/go/deal", "DE.Example.COM:8080") == kGermanDeal);
    CHECK(f.location("/go/deal", "de.example.com.") == kGermanDeal);
    CHECK(f.location("/go/only-de", "de.example.com") == "https://tailscale.com/nur?ref=picks42");
    // The absolute-form target names the host (RFC 9112 section 3.2.2), whatever Host says.
    CHECK(f.location("http://de.example.com/go/deal", "go.example.com") == kGermanDeal);
    CHECK(f.location("http://GO.example.com:80/go/deal", "de.example.com") == kDefaultDeal);
}

TEST_CASE(
    "an unknown host is served as the default domain, and a domain's not_found takes its unknown "
    "slugs while the default domain's are 404",
    "[domains][redirect]") {
    Fixture f;
    CHECK(f.location("/go/deal", "other.example.net") == kDefaultDeal);
    CHECK(f.location("/go/deal", "127.0.0.1:8080") == kDefaultDeal);
    CHECK(f.location("/go/deal", "[::1]:8080") == kDefaultDeal);
    CHECK(f.location("/go/only-de", "go.example.com") == "status 404");
    CHECK(f.location("/go/nope", "de.example.com") == "https://de.example.com/hallo");
    CHECK(f.location("/go/nope", "go.example.com") == "status 404");
}

TEST_CASE("with REFGATE_UNKNOWN_HOST=reject an unknown host is 404, a known one is served",
          "[domains][redirect]") {
    Fixture f(EnvPairs{{"REFGATE_UNKNOWN_HOST", "reject"}});
    CHECK(f.location("/go/deal", "other.example.net") == "status 404");
    CHECK(f.location("http://other.example.net/go/deal", "go.example.com") == "status 404");
    CHECK(f.location("/go/deal", "Go.Example.com:443") == kDefaultDeal);
    CHECK(f.location("/go/deal", "de.example.com") == kGermanDeal);
}

TEST_CASE(
    "without domains the public base URL's host is the default domain: every host is served, "
    "and with REFGATE_UNKNOWN_HOST=reject only that one",
    "[domains][redirect]") {
    std::string plain = demo_document({{"deal"}});
    {
        Fixture f({}, plain);
        CHECK(f.location("/go/deal", "anything.example") == kDefaultDeal);
    }
    Fixture f(EnvPairs{{"REFGATE_UNKNOWN_HOST", "reject"},
                       {"REFGATE_PUBLIC_BASE_URL", "https://links.example.org"}},
              plain);
    CHECK(f.location("/go/deal", "links.example.org") == kDefaultDeal);
    CHECK(f.location("/go/deal", "anything.example") == "status 404");
}

}  // namespace domains_redirect_test
