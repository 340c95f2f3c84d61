#include "refgate/domain/link_health.hpp"

#include <catch2/catch.hpp>

#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace link_health_test {

using namespace refgate;
using refgate::testing::shop;

namespace {

const std::string kDestination = "https://shop.example/p/widget";

domain::Hop redirect(std::string url, std::string location) {
    return domain::Hop{.url = std::move(url), .status = 302, .location = std::move(location)};
}

domain::Hop answer(std::string url, int status = 200) {
    return domain::Hop{.url = std::move(url), .status = status};
}

domain::Verdict judge(std::vector<domain::Hop> hops, std::string body = "") {
    domain::Chain chain{.hops = std::move(hops), .body = std::move(body)};
    return judge_chain(chain, kDestination, shop());
}

}  // namespace

TEST_CASE("a chain that keeps the referral code to a product page is ok", "[linkhealth]") {
    auto v = judge({redirect("https://shop.example/p/widget?ref=picks42",
                             "https://www.shop.example/p/widget?ref=picks42&lang=en"),
                    answer("https://www.shop.example/p/widget?ref=picks42&lang=en")});
    CHECK(v == domain::Verdict{domain::Finding::ok, ""});
}

TEST_CASE("a final URL without the referral parameter, or with another code, is code_dropped",
          "[linkhealth]") {
    CHECK(judge({redirect("https://shop.example/p/widget?ref=picks42",
                          "https://shop.example/p/widget"),
                 answer("https://shop.example/p/widget")}) ==
          domain::Verdict{domain::Finding::code_dropped, "missing"});
    CHECK(judge({answer("https://shop.example/p/widget?ref=someone-else")}) ==
          domain::Verdict{domain::Finding::code_dropped, "other_code"});
    CHECK(judge({answer("https://shop.example/p/widget?ref")}) ==
          domain::Verdict{domain::Finding::code_dropped, "other_code"});
}

TEST_CASE(
    "a partner with a sub-ID parameter: a chain that drops it is code_dropped subid_missing, and "
    "the code checked is the one of the click's channel",
    "[linkhealth][placements]") {
    domain::Partner partner = shop();
    partner.subid_param = "subId1";
    partner.channel_codes = {{"direct", "picks-direct"}, {"nl-*", "picks-nl"}};
    auto seen = [&](std::string final_url, std::string_view channel = domain::kDirectChannel) {
        domain::Chain chain{.hops = {answer(std::move(final_url))}};
        return judge_chain(chain, kDestination, partner, channel);
    };
    CHECK(seen("https://shop.example/p/widget?ref=picks-direct&subId1=1ns405ocv") ==
          domain::Verdict{domain::Finding::ok, ""});
    // Networks may write the parameter's name in another case; its value is theirs to keep.
    CHECK(seen("https://shop.example/p/widget?ref=picks-direct&subid1=x").finding ==
          domain::Finding::ok);
    CHECK(seen("https://shop.example/p/widget?ref=picks-direct") ==
          domain::Verdict{domain::Finding::code_dropped, "subid_missing"});
    CHECK(seen("https://shop.example/p/widget?ref=picks-direct&subId1=") ==
          domain::Verdict{domain::Finding::code_dropped, "subid_missing"});
    // The code comes first: a chain that drops both lost the code.
    CHECK(seen("https://shop.example/p/widget") ==
          domain::Verdict{domain::Finding::code_dropped, "missing"});
    // The partner's ref_code is another channel's code, not this click's.
    CHECK(seen("https://shop.example/p/widget?ref=picks42&subId1=x") ==
          domain::Verdict{domain::Finding::code_dropped, "other_code"});
    CHECK(seen("https://shop.example/p/widget?ref=picks-nl&subId1=x", "nl-2026").finding ==
          domain::Finding::ok);
}

TEST_CASE("a product link that lands on the site root is homepage", "[linkhealth]") {
    CHECK(judge({redirect("https://shop.example/p/widget?ref=picks42",
                          "https://shop.example/?ref=picks42"),
                 answer("https://shop.example/?ref=picks42")}) ==
          domain::Verdict{domain::Finding::homepage, ""});
    // A link to the root itself is not.
    domain::Chain root{.hops = {answer("https://shop.example/?ref=picks42")}};
    CHECK(judge_chain(root, "https://shop.example/", shop()).finding == domain::Finding::ok);
}

TEST_CASE("a final host outside the partner's domains is moved", "[linkhealth]") {
    CHECK(judge({redirect("https://shop.example/p/widget?ref=picks42",
                          "https://other.example/p/widget?ref=picks42"),
                 answer("https://other.example/p/widget?ref=picks42")}) ==
          domain::Verdict{domain::Finding::moved, "other.example"});
}

TEST_CASE("HTTP errors and transfer failures are broken, naming which", "[linkhealth]") {
    CHECK(judge({answer("https://shop.example/p/widget?ref=picks42", 404)}) ==
          domain::Verdict{domain::Finding::broken, "http_404"});
    CHECK(judge({answer("https://shop.example/p/widget?ref=picks42", 503)}) ==
          domain::Verdict{domain::Finding::broken, "http_503"});
    for (auto failure : {domain::HopFailure::dns, domain::HopFailure::tls,
                         domain::HopFailure::connect, domain::HopFailure::timeout}) {
        domain::Hop hop{.url = "https://shop.example/p/widget?ref=picks42", .failure = failure};
        CHECK(judge({hop}) ==
              domain::Verdict{domain::Finding::broken, std::string(to_string(failure))});
    }
}

TEST_CASE("a hop the checker may not follow is refused, not broken", "[linkhealth]") {
    domain::Hop ssrf{.url = "https://10.0.0.1/admin", .failure = domain::HopFailure::ssrf};
    CHECK(judge({redirect("https://shop.example/p/widget?ref=picks42", ssrf.url), ssrf}) ==
          domain::Verdict{domain::Finding::refused, "ssrf"});
    domain::Hop scheme{.url = "ftp://shop.example/x", .failure = domain::HopFailure::scheme};
    CHECK(judge({scheme}) == domain::Verdict{domain::Finding::refused, "scheme"});
}

TEST_CASE("a repeated URL is a loop; ten redirects without an answer too many hops",
          "[linkhealth]") {
    CHECK(judge({redirect("https://shop.example/a", "https://shop.example/b"),
                 redirect("https://shop.example/b", "https://shop.example/a"),
                 redirect("https://shop.example/a", "https://shop.example/b")}) ==
          domain::Verdict{domain::Finding::redirect_loop, "loop"});
    std::vector<domain::Hop> hops;
    for (int i = 0; i < 10; ++i) {
        hops.push_back(redirect("https://shop.example/" + std::to_string(i),
                                "https://shop.example/" + std::to_string(i + 1)));
    }
    CHECK(judge(hops) == domain::Verdict{domain::Finding::redirect_loop, "too_many_hops"});
}

TEST_CASE("a page the checker read as unavailable is unavailable", "[linkhealth]") {
    domain::Chain chain{.hops = {answer("https://shop.example/p/widget?ref=picks42")},
                        .unavailable = "OutOfStock"};
    CHECK(judge_chain(chain, kDestination, shop()) ==
          domain::Verdict{domain::Finding::unavailable, "OutOfStock"});
}

TEST_CASE("finding names read back as the same finding", "[linkhealth]") {
    for (domain::Finding f : domain::kAllFindings) CHECK(domain::parse_finding(to_string(f)) == f);
    CHECK_FALSE(domain::parse_finding("fine").has_value());
}

}  // namespace link_health_test

namespace link_health_test {

using namespace std::chrono_literals;

TEST_CASE("a finding counts only when a check an hour later sees it again", "[linkhealth]") {
    const domain::SysSeconds t0{std::chrono::seconds{1'800'000'000}};
    const domain::Verdict dropped{domain::Finding::code_dropped, "missing"};
    auto r = domain::next_record(std::nullopt, {domain::Finding::ok, ""}, t0, 1h);
    CHECK(r.state.finding == domain::Finding::ok);
    r = domain::next_record(r, dropped, t0 + 1min, 1h);
    CHECK(r.state.finding == domain::Finding::ok);
    REQUIRE(r.pending == dropped);
    CHECK(r.confirm_at == t0 + 61min);
    // A check before the hour is up does not confirm it.
    r = domain::next_record(r, dropped, t0 + 30min, 1h);
    CHECK(r.state.finding == domain::Finding::ok);
    r = domain::next_record(r, dropped, t0 + 61min, 1h);
    CHECK(r.state == dropped);
    CHECK(r.since == t0 + 61min);
    CHECK_FALSE(r.pending.has_value());
    // One good answer ends it at once.
    r = domain::next_record(r, {domain::Finding::ok, ""}, t0 + 2h, 1h);
    CHECK(r.state.finding == domain::Finding::ok);
}

TEST_CASE("a flaky answer followed by a different one confirms nothing", "[linkhealth]") {
    const domain::SysSeconds t0{std::chrono::seconds{1'800'000'000}};
    auto r = domain::next_record(std::nullopt, {domain::Finding::broken, "timeout"}, t0, 1h);
    CHECK(r.state.finding == domain::Finding::ok);
    r = domain::next_record(r, {domain::Finding::homepage, ""}, t0 + 1h, 1h);
    CHECK(r.state.finding == domain::Finding::ok);
    CHECK(r.pending->finding == domain::Finding::homepage);
    CHECK(r.confirm_at == t0 + 2h);
}

}  // namespace link_health_test
