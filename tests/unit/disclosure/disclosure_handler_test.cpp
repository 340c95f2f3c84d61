#include "refgate/disclosure/disclosure_handler.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "refgate/domain/html.hpp"
#include "refgate/runtime/snapshot_store.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace disclosure_handler_test {

namespace {

using refgate::disclosure::DisclosureHandler;
using refgate::domain::Disclosure;
using refgate::domain::Snapshot;
using refgate::runtime::SnapshotStore;
namespace http = refgate::http;
using Json = nlohmann::json;
using Fields = std::vector<std::pair<std::string, std::string>>;

refgate::domain::Partner partner(std::string slug, std::string name) {
    refgate::domain::Partner p;
    p.slug = std::move(slug);
    p.name = std::move(name);
    p.ref_param = "ref";
    p.ref_code = "picks42";
    p.allowed_domains = {"tailscale.com"};
    return p;
}

refgate::domain::Link link(std::string slug, std::string partner_slug) {
    refgate::domain::Link l;
    l.slug = std::move(slug);
    l.partner = std::move(partner_slug);
    l.destination = "https://tailscale.com/";
    return l;
}

Disclosure disclosure(std::string key, std::string locale, std::string text,
                      std::int64_t version = 1) {
    Disclosure d;
    d.key = std::move(key);
    d.locale = std::move(locale);
    d.text = std::move(text);
    d.html = refgate::domain::text_to_html(d.text);
    d.version = version;
    d.updated_at = "2026-11-29T12:00:00Z";
    return d;
}

std::optional<std::string> header(const http::Response& response, std::string_view name) {
    const std::string& text = response.headers();
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find("\r\n", pos);
        std::string line = text.substr(pos, end - pos);
        std::size_t colon = line.find(": ");
        if (http::iequals(line.substr(0, colon), name)) return line.substr(colon + 2);
        pos = end + 2;
    }
    return std::nullopt;
}

struct Fixture {
    SnapshotStore store;
    DisclosureHandler handler{store,
                              {.default_locale = "en",
                               .max_age = std::chrono::seconds{120},
                               .public_base_url = "https://picks.example.com"}};

    explicit Fixture(std::vector<Disclosure> disclosures = {
                         disclosure("general", "en", "Links carry a referral code."),
                         disclosure("general", "de", "Links enthalten einen Empfehlungscode."),
                         disclosure("tailscale", "en", "Tailscale pays us.")}) {
        store.publish(Snapshot::build(
            1, {partner("tailscale", "Tailscale"), partner("tom", "Tom & \"Jerry\" <b>")},
            {link("tailscale", "tailscale"), link("tom", "tom")}, {}, "test",
            std::move(disclosures)));
    }

    http::Response send(std::string_view target, const Fields& headers = {},
                        http::Method method = http::Method::get) {
        std::vector<http::HeaderField> fields;
        for (const auto& [n, v] : headers) fields.push_back({n, v});
        http::Request request;
        request.method = method;
        request.method_name = method == http::Method::head ? "HEAD" : "GET";
        request.target = target;
        request.fields = &fields;
        http::Response response;
        handler.handle(request, response);
        return response;
    }
};

}  // namespace

TEST_CASE("GET /disclosure negotiates text, html and json", "[disclosure][handler]") {
    Fixture f;
    auto text = f.send("/disclosure", {{"Accept", "text/plain"}});
    CHECK(text.status() == 200);
    CHECK(header(text, "Content-Type") == "text/plain; charset=utf-8");
    CHECK(text.body() == "Links carry a referral code.\n");
    CHECK(header(text, "Vary") == "Accept, Accept-Language");

    auto html = f.send("/disclosure", {{"Accept", "text/html,*/*;q=0.8"}});
    CHECK(header(html, "Content-Type") == "text/html; charset=utf-8");
    CHECK_THAT(html.body(), Catch::StartsWith("<aside class=\"refgate-disclosure\""));
    CHECK(html.body().find("<script") == std::string::npos);

    auto json = f.send("/disclosure", {{"Accept", "application/json"}});
    CHECK(header(json, "Content-Type") == "application/json");
    auto body = Json::parse(json.body());
    CHECK(body["text"] == "Links carry a referral code.");
    CHECK(body["locale"] == "en");

    auto none = f.send("/disclosure", {{"Accept", "image/png"}});
    CHECK(none.status() == 406);
    CHECK(Json::parse(none.body())["available"] ==
          Json::array({"text/plain", "text/html", "application/json"}));
}

TEST_CASE("the explicit variants ignore Accept", "[disclosure][handler]") {
    Fixture f;
    auto json = f.send("/disclosure.json", {{"Accept", "text/html"}});
    CHECK(header(json, "Content-Type") == "application/json");
    CHECK(header(json, "Vary") == "Accept-Language");
    CHECK(header(f.send("/disclosure.txt", {{"Accept", "image/png"}}), "Content-Type") ==
          "text/plain; charset=utf-8");
    CHECK(header(f.send("/disclosure.html"), "Content-Type") == "text/html; charset=utf-8");
}

TEST_CASE("lang and Accept-Language pick the locale with fallback", "[disclosure][handler]") {
    Fixture f;
    CHECK(f.send("/disclosure.txt?lang=de-AT").body() ==
          "Links enthalten einen Empfehlungscode.\n");
    CHECK(header(f.send("/disclosure.txt?lang=de-AT"), "Content-Language") == "de");
    CHECK(f.send("/disclosure.txt?lang=fr").body() == "Links carry a referral code.\n");
    CHECK(f.send("/disclosure.txt", {{"Accept-Language", "fr, de;q=0.5"}}).body() ==
          "Links enthalten einen Empfehlungscode.\n");
    // lang wins over Accept-Language.
    CHECK(f.send("/disclosure.txt?lang=en", {{"Accept-Language", "de"}}).body() ==
          "Links carry a referral code.\n");
    CHECK(f.send("/disclosure.txt?lang=not_a_tag!").status() == 400);
}

TEST_CASE("a partner's own disclosure replaces the general one", "[disclosure][handler]") {
    Fixture f;
    CHECK(f.send("/disclosure.txt?partner=tailscale").body() == "Tailscale pays us.\n");
    CHECK(f.send("/disclosure.txt?partner=backblaze").body() == "Links carry a referral code.\n");
    CHECK(f.send("/disclosure.txt?partner=Bad%20Slug").status() == 400);
}

TEST_CASE("If-None-Match with the current ETag answers 304 without a body",
          "[disclosure][handler]") {
    Fixture f;
    auto first = f.send("/disclosure.txt");
    auto etag = header(first, "ETag");
    REQUIRE(etag);
    CHECK_FALSE(etag->starts_with("W/"));
    CHECK(header(first, "Cache-Control") == "public, max-age=120");
    CHECK(header(first, "Access-Control-Allow-Origin") == "*");
    CHECK(header(first, "Access-Control-Expose-Headers") == "ETag, Content-Language");
    auto again = f.send("/disclosure.txt", {{"If-None-Match", *etag}});
    CHECK(again.status() == 304);
    CHECK(again.body().empty());
    CHECK(header(again, "ETag") == etag);
    CHECK(header(again, "Cache-Control") == "public, max-age=120");
    CHECK(f.send("/disclosure.txt", {{"If-None-Match", "\"1-0000000000000000\""}}).status() == 200);
    // Another representation has another validator.
    CHECK(f.send("/disclosure.json", {{"If-None-Match", *etag}}).status() == 200);
}

TEST_CASE("no disclosure at all is a 404 problem, not an empty 200", "[disclosure][handler]") {
    Fixture f(std::vector<Disclosure>{});
    auto response = f.send("/disclosure");
    CHECK(response.status() == 404);
    CHECK(header(response, "Content-Type") == "application/problem+json");
}

TEST_CASE("the history lists every version with the time it took effect", "[disclosure][handler]") {
    auto second = disclosure("general", "en", "Second words", 2);
    second.updated_at = "2026-11-30T08:00:00Z";
    Fixture f({disclosure("general", "en", "First words"), second});
    auto response = f.send("/disclosure/history?lang=en-US");
    CHECK(response.status() == 200);
    auto items = Json::parse(response.body())["items"];
    REQUIRE(items.size() == 2);
    CHECK(items[0]["text"] == "First words");
    CHECK(items[0]["effective_at"] == "2026-11-29T12:00:00Z");
    CHECK(items[0]["until"] == "2026-11-30T08:00:00Z");
    CHECK(items[1]["version"] == 2);
}

TEST_CASE("a snippet links through /go/ with the partner's name escaped", "[disclosure][snippet]") {
    Fixture f;
    auto response = f.send("/snippet/tom");
    CHECK(response.status() == 200);
    CHECK(response.body() ==
          "<a href=\"https://picks.example.com/go/tom\" rel=\"sponsored nofollow noopener\">Tom "
          "&amp; &quot;Jerry&quot; &lt;b&gt;</a> <small class=\"refgate-disclosure\">Links carry "
          "a referral code.</small>\n");
    auto json = Json::parse(f.send("/snippet/tailscale?format=json").body());
    CHECK(json["href"] == "https://picks.example.com/go/tailscale");
    CHECK(json["name"] == "Tailscale");
    CHECK(json["disclosure"]["text"] == "Tailscale pays us.");
    CHECK(f.send("/snippet/nope").status() == 404);
    CHECK(f.send("/snippet/tom?format=xml").status() == 400);
}

TEST_CASE("only GET, HEAD and OPTIONS are allowed", "[disclosure][handler]") {
    Fixture f;
    CHECK(f.send("/disclosure", {}, http::Method::post).status() == 405);
    CHECK(f.send("/disclosure", {}, http::Method::head).status() == 200);
    auto preflight = f.send("/disclosure", {}, http::Method::options);
    CHECK(preflight.status() == 204);
    CHECK(header(preflight, "Access-Control-Allow-Origin") == "*");
}

}  // namespace disclosure_handler_test
