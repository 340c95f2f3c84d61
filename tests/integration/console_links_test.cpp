// The admin API's additions for the editors' console around links: preview, share, filters.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "console_fixture.hpp"
#include "refgate/domain/time.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace console_links_test {

using namespace refgate::test;
using namespace refgate::test::console;

TEST_CASE("a link preview shows exactly the Location /go/<slug> redirects to once it is created",
          "[console][pg]") {
    Fixture f;
    Json link = link_json("ts-preview", "tailscale", "https://TailScale.com/pricing?plan=team#faq");
    link["fallback"] = "https://tailscale.com/";
    auto preview = f.post("/api/v1/links/preview", link, f.viewer);
    REQUIRE(preview.status == 200);
    auto body = Json::parse(preview.body);
    CHECK(body["public_url"] == kBaseUrl + "/go/ts-preview");
    CHECK(body["location"] ==
          "https://tailscale.com/pricing?plan=team&ref=picks42&utm_medium=affiliate#faq");
    // Nothing was stored.
    CHECK(f.get("/api/v1/links/ts-preview", f.viewer).status == 404);

    REQUIRE(f.create_link(link).status == 201);
    auto redirect = f.redirect_of("ts-preview");
    CHECK(redirect.status == 302);
    CHECK(redirect.header("Location") == body["location"].get<std::string>());

    // Without a slug there is no public URL yet; a disabled link's reader gets its fallback.
    link.erase("slug");
    link["status"] = "disabled";
    auto disabled = Json::parse(f.post("/api/v1/links/preview", link, f.viewer).body);
    CHECK(disabled["public_url"].is_null());
    CHECK(disabled["location"] == "https://tailscale.com/");
}

TEST_CASE("a link preview refuses what create refuses, with the same 422 and fields",
          "[console][pg]") {
    Fixture f;
    Json bad = link_json("ts-bad", "tailscale", "https://evil.example.com/");
    auto preview = f.post("/api/v1/links/preview", bad, f.viewer);
    auto create = f.create_link(bad);
    CHECK(preview.status == 422);
    CHECK(create.status == 422);
    CHECK(error_fields(preview) == std::vector<std::string>{"destination"});
    CHECK(Json::parse(preview.body)["errors"] == Json::parse(create.body)["errors"]);

    auto unknown = f.post("/api/v1/links/preview", link_json("x", "nobody"), f.viewer);
    CHECK(unknown.status == 422);
    CHECK(error_fields(unknown) == error_fields(f.create_link(link_json("x", "nobody"))));
    CHECK(f.call("POST", "/api/v1/links/preview", bearer(f.viewer), "{}").status == 415);
}

TEST_CASE("sharing a link gives its public URL and the snippet /snippet/<slug> serves",
          "[console][pg]") {
    Fixture f;
    REQUIRE(f.create_link(link_json("ts-share")).status == 201);
    auto share = f.get("/api/v1/links/ts-share/share", f.viewer);
    REQUIRE(share.status == 200);
    auto body = Json::parse(share.body);
    CHECK(body["public_url"] == kBaseUrl + "/go/ts-share");
    f.redirect_of("ts-share");
    auto snippet = http_get(f.service.port(), "/snippet/ts-share");
    REQUIRE(snippet.status == 200);
    CHECK(body["html_snippet"].get<std::string>() + "\n" == snippet.body);
    CHECK(snippet.body.find("Paid picks &amp; more.") != std::string::npos);

    CHECK(f.get("/api/v1/links/nobody/share", f.viewer).status == 404);
}

TEST_CASE(
    "a snippet and a share made for a channel carry its src, and a src the redirect would not "
    "count as itself is refused",
    "[console][pg][placements]") {
    Fixture f;
    REQUIRE(f.create_link(link_json("ts-nl")).status == 201);
    f.redirect_of("ts-nl");
    const std::string href = kBaseUrl + "/go/ts-nl?src=newsletter";
    auto snippet = http_get(f.service.port(), "/snippet/ts-nl?src=newsletter");
    REQUIRE(snippet.status == 200);
    CHECK(snippet.body.find("href=\"" + href + "\"") != std::string::npos);
    auto json = http_get(f.service.port(), "/snippet/ts-nl?src=newsletter&format=json");
    REQUIRE(json.status == 200);
    CHECK(Json::parse(json.body)["href"] == href);

    auto share = f.get("/api/v1/links/ts-nl/share?src=newsletter", f.viewer);
    REQUIRE(share.status == 200);
    auto body = Json::parse(share.body);
    CHECK(body["public_url"] == href);
    CHECK(body["html_snippet"].get<std::string>() + "\n" == snippet.body);

    // Not a channel, or one the redirect would count as "other" (an identifier).
    for (const char* bad : {"Bad", "a%20b", "ab12cd34ef56gh78ij", "jane%40example.com"}) {
        INFO(bad);
        CHECK(http_get(f.service.port(), std::string("/snippet/ts-nl?src=") + bad).status == 400);
        auto refused = f.get(std::string("/api/v1/links/ts-nl/share?src=") + bad, f.viewer);
        CHECK(refused.status == 422);
        CHECK(error_fields(refused) == std::vector<std::string>{"src"});
        CHECK(f.get(std::string("/api/v1/links/ts-nl/qr.svg?src=") + bad, f.viewer).status == 422);
    }
}

TEST_CASE("without a public base URL a shared link has no public URL and no snippet",
          "[console][pg]") {
    Fixture f(EnvPairs{});
    REQUIRE(f.create_link(link_json("ts-share")).status == 201);
    auto body = Json::parse(f.get("/api/v1/links/ts-share/share", f.viewer).body);
    CHECK(body["public_url"].is_null());
    CHECK(body["html_snippet"].is_null());
}

namespace {

std::vector<std::string> slugs(const HttpResponse& r) {
    INFO(r.status << " " << r.body);
    REQUIRE(r.status == 200);
    std::vector<std::string> out;
    Json body = Json::parse(r.body);
    for (const auto& item : body["items"]) out.push_back(item["slug"].get<std::string>());
    return out;
}

std::string in_days(int days) {
    auto t = std::chrono::system_clock::now() + std::chrono::hours(24 * days);
    return refgate::domain::format_rfc3339(std::chrono::floor<std::chrono::seconds>(t));
}

}  // namespace

TEST_CASE("partners and links are filtered by text, partner, status and coming expiry",
          "[console][pg]") {
    Fixture f;
    CHECK(slugs(f.get("/api/v1/partners?q=SEARCH", f.viewer)) == std::vector<std::string>{"kagi"});
    CHECK(slugs(f.get("/api/v1/partners?q=tail", f.viewer)) ==
          std::vector<std::string>{"tailscale"});
    CHECK(slugs(f.get("/api/v1/partners?q=", f.viewer)).size() == 2);

    Json soon = link_json("ts-soon", "tailscale", "https://tailscale.com/Soon");
    soon["expires_at"] = in_days(3);
    Json later = link_json("ts-later", "tailscale", "https://tailscale.com/later");
    later["expires_at"] = in_days(40);
    Json past = link_json("ts-past", "tailscale", "https://tailscale.com/past");
    past["expires_at"] = in_days(-2);
    Json off = link_json("kg-off", "kagi", "https://kagi.com/soon");
    off["status"] = "disabled";
    for (const Json& l : {soon, later, past, off}) REQUIRE(f.create_link(l).status == 201);

    CHECK(slugs(f.get("/api/v1/links?expiring_within_days=7", f.viewer)) ==
          std::vector<std::string>{"ts-soon"});
    CHECK(slugs(f.get("/api/v1/links?expiring_within_days=60", f.viewer)) ==
          std::vector<std::string>{"ts-later", "ts-soon"});
    CHECK(slugs(f.get("/api/v1/links?q=soon", f.viewer)) ==
          std::vector<std::string>{"kg-off", "ts-soon"});
    CHECK(slugs(f.get("/api/v1/links?q=SOON&partner=kagi", f.viewer)) ==
          std::vector<std::string>{"kg-off"});
    CHECK(slugs(f.get("/api/v1/links?status=active&partner=tailscale&limit=2", f.viewer)) ==
          std::vector<std::string>{"ts-later", "ts-past"});
    auto bad = f.get("/api/v1/links?expiring_within_days=soon", f.viewer);
    CHECK(bad.status == 422);
    CHECK(error_fields(bad) == std::vector<std::string>{"expiring_within_days"});
}

TEST_CASE("a link's QR code in PNG and SVG encodes its public URL with the src channel",
          "[console][qr][pg]") {
    Fixture f;
    REQUIRE(f.create_link(link_json("ts-qr")).status == 201);
    auto png = f.get("/api/v1/links/ts-qr/qr.png?size=300&src=newsletter&download=1", f.viewer);
    REQUIRE(png.status == 200);
    CHECK(png.header("Content-Type") == "image/png");
    CHECK(png.header("Content-Disposition") == "attachment; filename=\"ts-qr.png\"");
    auto svg = f.get("/api/v1/links/ts-qr/qr.svg", f.viewer);
    REQUIRE(svg.status == 200);
    CHECK(svg.header("Content-Type") == "image/svg+xml");
    CHECK_FALSE(svg.has_header("Content-Disposition"));
    CHECK(svg.body.find("width=\"256\"") != std::string::npos);

    TempDir dir;
    std::string file = dir.file("qr.png");
    std::ofstream(file, std::ios::binary) << png.body;
    std::string out = dir.file("out.txt");
    std::string command = "zbarimg --quiet --raw '" + file + "' > '" + out + "' 2>/dev/null";
    REQUIRE(std::system(command.c_str()) == 0);
    std::ifstream decoded(out);
    std::string text;
    std::getline(decoded, text);
    CHECK(text == kBaseUrl + "/go/ts-qr?src=newsletter");

    CHECK(f.get("/api/v1/links/nobody/qr.png", f.viewer).status == 404);
    CHECK(f.get("/api/v1/links/ts-qr/qr.png?size=10", f.viewer).status == 422);
    CHECK(f.get("/api/v1/links/ts-qr/qr.svg?src=Bad%20Tag", f.viewer).status == 422);
}

TEST_CASE("a QR code needs a public base URL", "[console][qr][pg]") {
    Fixture f(EnvPairs{});
    REQUIRE(f.create_link(link_json("ts-qr")).status == 201);
    CHECK(f.get("/api/v1/links/ts-qr/qr.svg", f.viewer).status == 409);
}

}  // namespace console_links_test
