#include "refgate/redirect/redirect_handler.hpp"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "refgate/domain/placement.hpp"
#include "refgate/runtime/snapshot_store.hpp"
#include "support/builders.hpp"
#include "support/fake_clock.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace redirect_handler_test {

namespace {

using namespace std::chrono;
using refgate::domain::Link;
using refgate::domain::Partner;
using refgate::redirect::RedirectHandler;
using refgate::runtime::SnapshotStore;
using refgate::testing::FakeClock;
using refgate::testing::make_link;
using refgate::testing::make_snapshot;
using refgate::testing::tailscale;
using refgate::testing::unix_time;
namespace http = refgate::http;

constexpr std::int64_t kNow = 1795968000;  // 2026-11-29T16:00:00Z

constexpr const char* kLocation =
    "https://tailscale.com/pricing?plan=pro&ref=picks42&utm_medium=affiliate#teams";

// The headers of a response as (name, value) pairs, in order.
std::vector<std::pair<std::string, std::string>> header_list(const http::Response& response) {
    std::vector<std::pair<std::string, std::string>> out;
    const std::string& text = response.headers();
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find("\r\n", pos);
        REQUIRE(end != std::string::npos);
        std::string line = text.substr(pos, end - pos);
        std::size_t colon = line.find(": ");
        REQUIRE(colon != std::string::npos);
        out.emplace_back(line.substr(0, colon), line.substr(colon + 2));
        pos = end + 2;
    }
    return out;
}

std::optional<std::string> header(const http::Response& response, std::string_view name) {
    std::optional<std::string> found;
    for (auto& [n, v] : header_list(response)) {
        if (!http::iequals(n, name)) continue;
        REQUIRE_FALSE(found.has_value());  // every header this handler sets appears once
        found = v;
    }
    return found;
}

// A snapshot store with the links given, a fake clock and a handler over both, and a helper that
// sends one request the way the server would.
struct Fixture {
    SnapshotStore store;
    FakeClock clock{unix_time(kNow)};
    RedirectHandler handler{store, clock,
                            refgate::redirect::RedirectOptions{.referrer_policy = "no-referrer"}};

    explicit Fixture(std::vector<Link> links = {make_link("tailscale")},
                     std::vector<Partner> partners = {tailscale()}) {
        auto snapshot = make_snapshot(std::move(partners), std::move(links));
        REQUIRE(snapshot->rejected().empty());
        store.publish(snapshot);
    }

    // `notes`: what prepare() noted for this request (none: the server did not prepare it).
    http::Response send(std::string_view target, http::Method method = http::Method::get,
                        const http::RequestNotes& notes = {}) {
        std::vector<http::HeaderField> fields{{"Host", "picks.example.com"},
                                              {"User-Agent", "test"}};
        http::Request request;
        request.method = method;
        request.method_name = method == http::Method::head   ? "HEAD"
                              : method == http::Method::post ? "POST"
                                                             : "GET";
        request.target = target;
        request.fields = &fields;
        request.notes = notes;
        http::Response response;
        handler.handle(request, response);
        return response;
    }

    // A GET from a reader of its own: these header fields, this peer address (IPv4 192.0.2.x).
    http::Response send_as(std::string_view target, std::vector<http::HeaderField> fields,
                           std::uint8_t address) {
        http::Request request;
        request.method = http::Method::get;
        request.method_name = "GET";
        request.target = target;
        request.fields = &fields;
        request.peer.bytes[10] = request.peer.bytes[11] = 0xff;
        request.peer.bytes[12] = 192;
        request.peer.bytes[14] = 2;
        request.peer.bytes[15] = address;
        http::Response response;
        handler.handle(request, response);
        return response;
    }
};

}  // namespace

TEST_CASE("a known slug redirects with 302 to the destination carrying the referral code",
          "[redirect]") {
    Fixture f;
    auto response = f.send("/go/tailscale");
    CHECK(response.status() == 302);
    CHECK(header(response, "Location") == kLocation);
    CHECK(header(response, "Cache-Control") == "private, no-store");
    CHECK(header(response, "X-Robots-Tag") == "noindex, nofollow");
    CHECK(header(response, "Referrer-Policy") == "no-referrer");
    CHECK(header(response, "Content-Type") == "text/html; charset=utf-8");
    CHECK_THAT(response.body(),
               Catch::Contains("href=\"https://tailscale.com/pricing?plan=pro&amp;ref=picks42&amp;"
                               "utm_medium=affiliate#teams\""));
    CHECK_THAT(response.body(), Catch::Contains("Continue to Tailscale"));
}

TEST_CASE("two readers of one placement get the same Location, whatever else they send",
          "[redirect][placement]") {
    Partner impact = tailscale();
    impact.subid_param = "subId1";
    impact.channel_codes = {{"newsletter", "picks-nl"}};
    Link link = make_link("tailscale");
    link.id = 42;
    Fixture f({link}, {impact});
    auto first = f.send_as("/go/tailscale?src=newsletter",
                           {{"Host", "picks.example.com"},
                            {"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0"},
                            {"Accept-Language", "de-DE"},
                            {"Cookie", "subId1=someone"}},
                           7);
    auto second = f.send_as("/go/tailscale?src=newsletter&subId1=evil",
                            {{"Host", "picks.example.com"},
                             {"User-Agent", "Mozilla/5.0 (iPhone) Safari/604.1"},
                             {"Accept-Language", "fr"},
                             {"Referer", "https://mail.example/?subId1=x"}},
                            200);
    const std::string expected =
        "https://tailscale.com/pricing?plan=pro&ref=picks-nl&utm_medium=affiliate&subId1=" +
        refgate::domain::placement_token(impact, 42, "tailscale", "newsletter") + "#teams";
    CHECK(header(first, "Location") == expected);
    CHECK(header(second, "Location") == expected);
    CHECK(first.body() == second.body());
    // The reused buffer holds no trace of a longer Location before it.
    auto direct = f.send("/go/tailscale");
    CHECK(header(direct, "Location") ==
          "https://tailscale.com/pricing?plan=pro&ref=picks42&utm_medium=affiliate&subId1=" +
              refgate::domain::placement_token(impact, 42, "tailscale", "direct") + "#teams");
}

TEST_CASE("requests prepared before they are handled each go to their own link", "[redirect]") {
    Partner other = tailscale();
    other.id = 2;
    other.slug = "other";
    other.name = "Other";
    other.allowed_domains = {"other.example"};
    Link second = make_link("second", "https://other.example/x", "other");
    Fixture f({make_link("tailscale"), second}, {tailscale(), other});
    // Pipelined requests: both headers read before the first is answered.
    http::RequestNotes first_notes, second_notes, unknown_notes;
    for (auto stage : {http::Handler::Parsed::request_line, http::Handler::Parsed::header}) {
        f.handler.prepare("/go/tailscale", stage, first_notes);
        f.handler.prepare("/go/second/", stage, second_notes);
        f.handler.prepare("/go/nothing", stage, unknown_notes);
    }
    auto answer = f.send("/go/second/", http::Method::get, second_notes);
    CHECK(header(answer, "Location") == "https://other.example/x?ref=picks42&utm_medium=affiliate");
    answer = f.send("/go/tailscale?src=news", http::Method::get, first_notes);
    CHECK(header(answer, "Location") == kLocation);
    CHECK(f.send("/go/nothing", http::Method::get, unknown_notes).status() == 404);
    // A path that names no link notes so, and is answered 404 from the note.
    http::RequestNotes bad_notes;
    f.handler.prepare("/go/Upper", http::Handler::Parsed::request_line, bad_notes);
    CHECK(f.send("/go/Upper", http::Method::get, bad_notes).status() == 404);
}

TEST_CASE("the referrer policy comes from the handler's options", "[redirect]") {
    SnapshotStore store;
    store.publish(make_snapshot({tailscale()}, {make_link("tailscale")}));
    FakeClock clock{unix_time(kNow)};
    RedirectHandler handler(store, clock, refgate::redirect::RedirectOptions{});
    std::vector<http::HeaderField> fields;
    http::Request request;
    request.method = http::Method::get;
    request.target = "/go/tailscale";
    request.fields = &fields;
    http::Response response;
    handler.handle(request, response);
    CHECK(header(response, "Referrer-Policy") == "strict-origin-when-cross-origin");
}

TEST_CASE("HEAD answers with the same status and headers as GET", "[redirect]") {
    Fixture f;
    auto get = f.send("/go/tailscale");
    auto head = f.send("/go/tailscale", http::Method::head);
    CHECK(head.status() == 302);
    CHECK(head.headers() == get.headers());
}

TEST_CASE("one trailing slash after the slug is tolerated", "[redirect]") {
    Fixture f;
    auto response = f.send("/go/tailscale/");
    CHECK(response.status() == 302);
    CHECK(header(response, "Location") == kLocation);
    CHECK(f.send("/go/tailscale//").status() == 404);
}

TEST_CASE("an unknown slug is answered 404 and kept out of search engines", "[redirect]") {
    Fixture f;
    auto response = f.send("/go/unknown");
    CHECK(response.status() == 404);
    CHECK_FALSE(header(response, "Location").has_value());
    CHECK(header(response, "X-Robots-Tag") == "noindex, nofollow");
}

TEST_CASE("a path that can name no link is answered 404", "[redirect]") {
    Fixture f;
    std::string target = GENERATE(
        as<std::string>{}, "/go/Tailscale", "/go/TAILSCALE", "/go/tail%2Fscale", "/go/tailscale%2F",
        "/go/..", "/go/../go", "/go/./tailscale", "/go/tailscale/x", "/go/a/b", "/go/",
        "/go//tailscale", "/go", "/goo/tailscale", "/GO/tailscale", "/go/tail\rscale",
        "/go/tail\nscale", "/go/tail\x01scale", "/go/tailscale\x7f", "/go/tail scale",
        "/go/tail_scale", "/go/-tailscale", "/go/" + std::string(65, 'a'));
    INFO(target);
    auto response = f.send(target);
    CHECK(response.status() == 404);
    CHECK_FALSE(header(response, "Location").has_value());
}

TEST_CASE("a slug of 64 characters is served", "[redirect]") {
    std::string slug(64, 'a');
    Fixture f({make_link(slug)});
    CHECK(f.send("/go/" + slug).status() == 302);
}

TEST_CASE("a disabled link is gone", "[redirect]") {
    auto l = make_link("tailscale");
    l.status = refgate::domain::LinkStatus::disabled;
    Fixture f({l});
    auto response = f.send("/go/tailscale");
    CHECK(response.status() == 410);
    CHECK_FALSE(header(response, "Location").has_value());
    CHECK(header(response, "X-Robots-Tag") == "noindex, nofollow");
}

TEST_CASE("an expired link is gone from its expiry second on", "[redirect]") {
    auto l = make_link("tailscale");
    l.expires_at = refgate::domain::SysSeconds{seconds{kNow + 60}};
    Fixture f({l});

    f.clock.set(unix_time(kNow + 59));
    CHECK(f.send("/go/tailscale").status() == 302);
    f.clock.set(unix_time(kNow + 60));
    CHECK(f.send("/go/tailscale").status() == 410);
    f.clock.set(unix_time(kNow + 86'400));
    auto response = f.send("/go/tailscale");
    CHECK(response.status() == 410);
    CHECK_FALSE(header(response, "Location").has_value());
}

TEST_CASE("a link that is gone redirects to its fallback when it has one", "[redirect]") {
    auto disabled = make_link("disabled");
    disabled.status = refgate::domain::LinkStatus::disabled;
    disabled.fallback = "https://tailscale.com/blog";
    auto expired = make_link("expired");
    expired.expires_at = refgate::domain::SysSeconds{seconds{kNow - 1}};
    expired.fallback = "https://login.tailscale.com/";
    Fixture f({disabled, expired});

    auto response = f.send("/go/disabled");
    CHECK(response.status() == 302);
    CHECK(header(response, "Location") == "https://tailscale.com/blog");
    CHECK(header(response, "Cache-Control") == "private, no-store");
    CHECK_THAT(response.body(), Catch::Contains("href=\"https://tailscale.com/blog\""));

    response = f.send("/go/expired");
    CHECK(response.status() == 302);
    CHECK(header(response, "Location") == "https://login.tailscale.com/");
}

TEST_CASE("a link of an inactive partner is gone", "[redirect]") {
    auto partner = tailscale();
    partner.active = false;
    Fixture f({make_link("tailscale")}, {partner});
    CHECK(f.send("/go/tailscale").status() == 410);
}

TEST_CASE("before any snapshot is published redirects answer 503", "[redirect]") {
    SnapshotStore store;
    FakeClock clock{unix_time(kNow)};
    RedirectHandler handler(store, clock, {});
    std::vector<http::HeaderField> fields;
    http::Request request;
    request.method = http::Method::get;
    request.target = "/go/tailscale";
    request.fields = &fields;
    http::Response response;
    handler.handle(request, response);
    CHECK(response.status() == 503);
    CHECK(header(response, "Retry-After") == "1");
    CHECK_FALSE(header(response, "Location").has_value());

    store.publish(make_snapshot({tailscale()}, {make_link("tailscale")}));
    http::Response after;
    handler.handle(request, after);
    CHECK(after.status() == 302);
}

TEST_CASE("a newly published snapshot with a rotated code reaches the next redirect",
          "[redirect]") {
    Fixture f;
    CHECK(header(f.send("/go/tailscale"), "Location") == kLocation);
    auto rotated = tailscale();
    rotated.ref_code = "picks43";
    f.store.publish(make_snapshot({rotated}, {make_link("tailscale")}, 2));
    CHECK(header(f.send("/go/tailscale"), "Location") ==
          "https://tailscale.com/pricing?plan=pro&ref=picks43&utm_medium=affiliate#teams");
}

TEST_CASE("methods other than GET and HEAD are answered 405 with Allow", "[redirect]") {
    Fixture f;
    auto method = GENERATE(http::Method::post, http::Method::put, http::Method::del,
                           http::Method::options, http::Method::other);
    auto response = f.send("/go/tailscale", method);
    CHECK(response.status() == 405);
    CHECK(header(response, "Allow") == "GET, HEAD");
    CHECK_FALSE(header(response, "Location").has_value());
}

TEST_CASE("nothing in the request can change the referral code", "[redirect][utm]") {
    auto passthrough = make_link("passthrough");
    passthrough.utm_passthrough = true;
    Fixture f({make_link("tailscale"), passthrough});

    CHECK(header(f.send("/go/tailscale?ref=evil"), "Location") == kLocation);
    CHECK(header(f.send("/go/tailscale?utm_source=x&ref=evil&%72ef=evil"), "Location") ==
          kLocation);
    CHECK(header(f.send("/go/passthrough?ref=evil"), "Location") == kLocation);
    CHECK(header(f.send("/go/passthrough?utm_source=news&ref=evil&%72ef=evil&utm_medium=evil"),
                 "Location") ==
          "https://tailscale.com/pricing?plan=pro&utm_source=news&ref=picks42&utm_medium=affiliate"
          "#teams");
}

TEST_CASE("utm parameters pass through only on links that allow it", "[redirect][utm]") {
    auto passthrough = make_link("passthrough");
    passthrough.utm_passthrough = true;
    Fixture f({make_link("tailscale"), passthrough});

    auto response = f.send("/go/passthrough?utm_source=news&src=x");
    CHECK(response.status() == 302);
    CHECK(header(response, "Location") ==
          "https://tailscale.com/pricing?plan=pro&utm_source=news&ref=picks42&utm_medium=affiliate"
          "#teams");
    CHECK_THAT(response.body(), Catch::Contains("utm_source=news&amp;ref=picks42"));

    CHECK(header(f.send("/go/tailscale?utm_source=news"), "Location") == kLocation);
}

TEST_CASE("a passthrough redirect after a plain one does not reuse the other's location",
          "[redirect][utm]") {
    auto passthrough = make_link("passthrough");
    passthrough.utm_passthrough = true;
    Fixture f({passthrough});
    CHECK(header(f.send("/go/passthrough?utm_source=a"), "Location") ==
          "https://tailscale.com/pricing?plan=pro&utm_source=a&ref=picks42&utm_medium=affiliate"
          "#teams");
    CHECK(header(f.send("/go/passthrough"), "Location") == kLocation);
    CHECK(header(f.send("/go/passthrough?utm_source=b"), "Location") ==
          "https://tailscale.com/pricing?plan=pro&utm_source=b&ref=picks42&utm_medium=affiliate"
          "#teams");
}

TEST_CASE("a referrer policy with a line break cannot inject a header", "[redirect][security]") {
    SnapshotStore store;
    store.publish(make_snapshot({tailscale()}, {make_link("tailscale")}));
    FakeClock clock{unix_time(kNow)};
    RedirectHandler handler(
        store, clock,
        refgate::redirect::RedirectOptions{.referrer_policy = "no-referrer\r\nSet-Cookie: a=b"});
    std::vector<http::HeaderField> fields;
    http::Request request;
    request.method = http::Method::get;
    request.target = "/go/tailscale";
    request.fields = &fields;
    http::Response response;
    handler.handle(request, response);
    CHECK(response.status() == 500);
    CHECK(response.headers().find("Set-Cookie") == std::string::npos);
    CHECK_FALSE(header(response, "Location").has_value());
}

TEST_CASE("the slug of a /go/ path is its exact lower-case name", "[redirect]") {
    CHECK(RedirectHandler::slug_of("/go/tailscale") == "tailscale");
    CHECK(RedirectHandler::slug_of("/go/tailscale/") == "tailscale");
    CHECK(RedirectHandler::slug_of("/go/a-1") == "a-1");
    CHECK(RedirectHandler::slug_of("/go/Tailscale").empty());
    CHECK(RedirectHandler::slug_of("/disclosure").empty());
}

}  // namespace redirect_handler_test

namespace redirect_handler_test {

TEST_CASE("automatic fallback: a switched-away destination answers with the link's fallback",
          "[redirect][autofallback]") {
    auto care = make_link("care");
    care.fallback = "https://tailscale.com/blog";
    care.auto_fallback = true;
    care.fallback_switches.push_back({"default", "broken", "http_404", kNow});
    // Switched without auto_fallback (an editor turned it off): the destination still serves.
    auto off = care;
    off.slug = "off";
    off.auto_fallback = false;
    Fixture f({care, off});
    auto response = f.send("/go/care");
    CHECK(response.status() == 302);
    CHECK(header(response, "Location") == "https://tailscale.com/blog");
    CHECK(header(f.send("/go/off"), "Location") == kLocation);
}

TEST_CASE(
    "automatic fallback: a switched-away rule branch sends its readers to the link's own "
    "destination while that is healthy, else to the fallback",
    "[redirect][autofallback]") {
    auto care = make_link("care");
    care.fallback = "https://tailscale.com/blog";
    care.auto_fallback = true;
    refgate::domain::LinkRule ios;
    ios.platform = {"ios"};
    ios.destination = "https://tailscale.com/download/ios";
    care.rules = {ios};
    const std::vector<http::HeaderField> iphone{
        {"Host", "picks.example.com"},
        {"User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"}};
    {
        Fixture f({care});
        CHECK(header(f.send_as("/go/care", iphone, 1), "Location") ==
              "https://tailscale.com/download/ios?ref=picks42&utm_medium=affiliate");
    }
    care.fallback_switches.push_back({"rules[0]", "broken", "http_404", kNow});
    {
        Fixture f({care});
        CHECK(header(f.send_as("/go/care", iphone, 1), "Location") == kLocation);
        CHECK(header(f.send("/go/care"), "Location") == kLocation);
    }
    care.fallback_switches.push_back({"default", "code_dropped", "missing", kNow});
    {
        Fixture f({care});
        CHECK(header(f.send_as("/go/care", iphone, 1), "Location") == "https://tailscale.com/blog");
        CHECK(header(f.send("/go/care"), "Location") == "https://tailscale.com/blog");
    }
}

}  // namespace redirect_handler_test

namespace redirect_handler_test {

TEST_CASE("click caps: a link whose cap the fleet reached answers like an expired one",
          "[redirect][caps]") {
    auto deal = make_link("deal");
    deal.id = 1;
    deal.max_human_clicks = 200;
    auto kept = make_link("kept");
    kept.id = 2;
    kept.max_human_clicks = 200;
    kept.fallback = "https://tailscale.com/blog";
    auto plain = make_link("plain");
    plain.id = 3;
    Fixture f({deal, kept, plain});
    const auto& snapshot = *f.store.current();
    REQUIRE(snapshot.caps().size() == 2);
    std::unordered_map<std::int64_t, std::uint64_t> totals{{deal.id, 199}, {kept.id, 150}};
    // The cap worker's flags, published beside the snapshot (runtime/cap_flags.hpp).
    auto flags = std::make_shared<refgate::runtime::CapFlags>(snapshot);
    f.store.cap_flags().publish(flags);

    SECTION("no flags published yet: nothing is capped") {
        f.store.cap_flags().publish(nullptr);
        CHECK(f.send("/go/deal").status() == 302);
    }
    SECTION("below the cap: the destination") {
        CHECK(flags->apply(totals) == 0);
        CHECK(f.send("/go/deal").status() == 302);
        CHECK(header(f.send("/go/deal"), "Location") == kLocation);
        CHECK(header(f.send("/go/kept"), "Location") == kLocation);
    }
    SECTION("at the cap: 410, or the fallback; a link without a cap is untouched") {
        totals[deal.id] = 200;
        totals[kept.id] = 900;
        totals[plain.id] = 5'000;
        CHECK(flags->apply(totals) == 2);
        auto gone = f.send("/go/deal");
        CHECK(gone.status() == 410);
        CHECK_FALSE(header(gone, "Location").has_value());
        CHECK(header(f.send("/go/kept"), "Location") == "https://tailscale.com/blog");
        CHECK(header(f.send("/go/plain"), "Location") == kLocation);
        // A new snapshot published (a scheduled code's moment) keeps the verdicts of its links
        // before the cap worker has published flags of its own: they are keyed by link id.
        f.store.publish(snapshot.at(refgate::domain::SysSeconds{std::chrono::seconds{kNow + 60}}));
        CHECK(f.send("/go/deal").status() == 410);
        CHECK(header(f.send("/go/plain"), "Location") == kLocation);
    }
    SECTION("a cap raised above the count serves again") {
        totals[deal.id] = 300;
        flags->apply(totals);
        CHECK(f.send("/go/deal").status() == 410);
        totals[deal.id] = 100;
        flags->apply(totals);
        CHECK(f.send("/go/deal").status() == 302);
    }
}

}  // namespace redirect_handler_test
