#include "refgate/domain/commission.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "refgate/domain/placement.hpp"
#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace commission_test {
namespace {

using refgate::domain::Amount;
using refgate::domain::check_commission;
using refgate::domain::CommissionFields;
using refgate::domain::CommissionStatus;
using refgate::domain::parse_amount;

CommissionFields good() {
    CommissionFields f;
    f.order_id = "ORD-1001";
    f.subid = "3k9x2ab4cd";
    f.status = "approved";
    f.amount = "12.50";
    f.currency = "EUR";
    f.occurred_at = "2026-11-29T16:00:00Z";
    return f;
}

// The fields the problems name, in order.
std::string fields_of(const refgate::domain::CommissionCheck& check) {
    std::string out;
    for (const auto& p : check.problems) out += (out.empty() ? "" : ",") + p.field;
    return out;
}

TEST_CASE("amounts are exact decimals: units and the scale written, never a float",
          "[commission]") {
    CHECK(parse_amount("12.50") == Amount{1250, 2});
    CHECK(parse_amount("0.1") == Amount{1, 1});
    CHECK(parse_amount("7") == Amount{7, 0});
    CHECK(parse_amount("999999999999.999999") == Amount{999'999'999'999'999'999, 6});
    CHECK(to_string(*parse_amount("12.50")) == "12.50");
    CHECK(to_string(*parse_amount("0.05")) == "0.05");
    CHECK(to_string(*parse_amount("0")) == "0");
    for (const char* bad : {"", ".5", "5.", "-1", "+1", "1e3", "1,000.00", "1 000", "12.5000001",
                            "1000000000000", "NaN", "0x10", "1.2.3"}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_amount(bad));
    }
}

TEST_CASE("a valid commission reads into one value", "[commission]") {
    auto check = refgate::domain::check_commission(good());
    REQUIRE(check.problems.empty());
    REQUIRE(check.commission);
    CHECK(check.commission->order_id == "ORD-1001");
    CHECK(check.commission->status == CommissionStatus::approved);
    CHECK(check.commission->amount == Amount{1250, 2});
    CHECK(check.commission->currency == "EUR");
    CHECK(refgate::domain::format_rfc3339(check.commission->occurred_at) == "2026-11-29T16:00:00Z");
    auto tracking = good();
    tracking.subid.reset();
    tracking.tracking_id = "picks-nl-20";
    CHECK(check_commission(tracking).commission);
}

TEST_CASE("occurred_at: RFC 3339, and the networks' times without an offset read as UTC",
          "[commission]") {
    auto utc = [](const char* text) {
        auto t = refgate::domain::parse_commission_time(text);
        return t ? refgate::domain::format_rfc3339(*t) : std::string("refused");
    };
    CHECK(utc("2026-11-29T17:00:00+01:00") == "2026-11-29T16:00:00Z");
    // Awin's transaction notifications (documented as UTC) and ShareASale's transDate.
    CHECK(utc("2026-11-29 16:00:00") == "2026-11-29T16:00:00Z");
    CHECK(utc("2026-11-29T23:59:59") == "2026-11-29T23:59:59Z");
    // An offset after the networks' form, as a template may add one.
    CHECK(utc("2026-11-29 23:30:00-05:00") == "2026-11-30T04:30:00Z");
    for (const char* bad :
         {"2026-11-29", "2026-11-29 16:00", "29/11/2026 16:00:00", "2026-11-29 16:00:60",
          "2026-02-30 10:00:00", "2026-11-29 16:00:00 ", "2026-11-29 16:00:00Q"}) {
        INFO(bad);
        CHECK(utc(bad) == "refused");
    }
    auto f = good();
    f.occurred_at = "2026-11-29 16:00:00";
    REQUIRE(refgate::domain::check_commission(f).commission);
    CHECK(refgate::domain::format_rfc3339(check_commission(f).commission->occurred_at) ==
          "2026-11-29T16:00:00Z");
}

TEST_CASE("every problem names its field, and none repeats the value", "[commission]") {
    CommissionFields f;
    f.order_id = "=HYPERLINK(\"http://evil\")";
    f.status = "confirmed";
    f.amount = "12,50";
    f.currency = "usd";
    f.occurred_at = "yesterday";
    auto check = refgate::domain::check_commission(f);
    CHECK_FALSE(check.commission);
    CHECK(fields_of(check) == "order_id,subid,status,amount,currency,occurred_at");
    for (const auto& p : check.problems) {
        CHECK(p.message.find("HYPERLINK") == std::string::npos);
        CHECK(p.message.find("yesterday") == std::string::npos);
    }
    CHECK(fields_of(check_commission(CommissionFields{})) ==
          "order_id,subid,status,amount,currency,occurred_at");
}

TEST_CASE("subid and tracking_id: exactly one, each of its own characters", "[commission]") {
    auto both = good();
    both.tracking_id = "picks-20";
    CHECK(fields_of(refgate::domain::check_commission(both)) == "tracking_id");
    auto bad_token = good();
    bad_token.subid = "a b";
    CHECK(fields_of(check_commission(bad_token)) == "subid");
    auto e_mail = good();
    e_mail.subid.reset();
    e_mail.tracking_id = "someone@example.com";
    CHECK(fields_of(check_commission(e_mail)) == "tracking_id");
}

TEST_CASE("currencies come from ISO 4217's list, upper case", "[commission]") {
    for (const char* ok : {"USD", "EUR", "GBP", "JPY", "CHF", "SEK", "XOF"})
        CHECK(refgate::domain::valid_currency(ok));
    for (const char* bad : {"usd", "US", "USDX", "ABC", "XAU", "XXX", "XTS", ""})
        CHECK_FALSE(refgate::domain::valid_currency(bad));
}

TEST_CASE("order ids: no formula prefix, no spaces, at most 128 characters", "[commission]") {
    for (const char* bad : {"=1+1", "+1", "-1", "@SUM(A1)", " 1", "a b", "a\tb", "a,b", "é1"}) {
        auto f = good();
        f.order_id = bad;
        CAPTURE(bad);
        CHECK(fields_of(refgate::domain::check_commission(f)) == "order_id");
    }
    auto longest = good();
    longest.order_id = std::string(128, 'a');
    CHECK(refgate::domain::check_commission(longest).commission);
    longest.order_id->push_back('a');
    CHECK(fields_of(check_commission(longest)) == "order_id");
}

TEST_CASE("statuses are the four names, and field() knows only the listed names", "[commission]") {
    for (const char* s : {"pending", "approved", "reversed", "paid"})
        CHECK(to_string(*refgate::domain::parse_commission_status(s)) == s);
    CHECK_FALSE(refgate::domain::parse_commission_status("Approved"));
    // A network's upper-case status is the same status.
    auto upper = good();
    upper.status = "REVERSED";
    CHECK(refgate::domain::check_commission(upper).commission->status ==
          CommissionStatus::reversed);
    CommissionFields f;
    for (auto name : refgate::domain::kCommissionFields) CHECK(f.field(name) != nullptr);
    CHECK(f.field("email") == nullptr);
    CHECK(f.field("ip") == nullptr);
}

TEST_CASE("a subid names its link and channel as the redirect wrote it", "[commission]") {
    refgate::domain::Partner p = refgate::testing::tailscale();
    p.subid_param = "subId1";
    std::string token = refgate::domain::placement_token(p, 42, "ts-pro", "newsletter");
    REQUIRE(refgate::domain::opaque_token_link(token) == 42);
    std::vector<std::string> channels{"direct", "other", "blog", "newsletter"};
    CHECK(refgate::domain::token_channel(p, 42, "ts-pro", token, channels) == "newsletter");
    // Clicks of a channel never seen: the link is known, the channel is not.
    CHECK_FALSE(
        refgate::domain::token_channel(p, 42, "ts-pro", token, std::vector<std::string>{"blog"}));

    p.subid_style = refgate::domain::SubidStyle::readable;
    std::string readable = refgate::domain::placement_token(p, 7, "ts-pro", "newsletter");
    std::vector<std::string> slugs{"ts-free", "ts-pro"};
    CHECK(refgate::domain::readable_token_link(p, readable, slugs) == 1u);
    CHECK(refgate::domain::token_channel(p, 7, "ts-pro", readable, channels) == "newsletter");
    CHECK_FALSE(refgate::domain::readable_token_link(p, "zz-unknown", slugs));
}

TEST_CASE("a tracking id names the channel whose code it is, not a pattern's", "[commission]") {
    refgate::domain::Partner p = refgate::testing::tailscale();
    p.channel_codes = {{"newsletter", "picks-nl"}, {"blog-*", "picks-blog"}};
    CHECK(refgate::domain::tracking_id_channel(p, "picks-nl") == "newsletter");
    CHECK_FALSE(refgate::domain::tracking_id_channel(p, "picks-blog"));
    CHECK_FALSE(refgate::domain::tracking_id_channel(p, "someone-else"));
}

}  // namespace
}  // namespace commission_test
