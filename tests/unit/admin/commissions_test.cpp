#include "refgate/admin/commissions.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "refgate/admin/tokens.hpp"
#include "support/fake_clock.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace commissions_test {
namespace {

using namespace std::chrono_literals;
using refgate::admin::CommissionSource;
using refgate::admin::OutcomeKind;

// Remembers what it was asked to record; knows one partner.
class FakeStore final : public refgate::admin::CommissionStore {
  public:
    std::optional<refgate::RecordedCommissions> record(
        const std::string& partner, const std::vector<refgate::Commission>& commissions,
        CommissionSource, bool dry_run) override {
        if (partner != "impact-co") return std::nullopt;
        calls.push_back({commissions.size(), dry_run});
        refgate::RecordedCommissions r;
        r.created = commissions.size();
        return r;
    }
    bool set_postback_secret(const std::string& partner, const std::string& hash) override {
        if (partner != "impact-co") return false;
        secret_hash = hash;
        return true;
    }
    std::optional<refgate::EarningsReport> earnings(const refgate::DayRange&,
                                                    refgate::EarningsGroup,
                                                    const refgate::EarningsFilter&) override {
        return refgate::EarningsReport{};
    }
    std::vector<refgate::EpcZeroLink> epc_zero_links(const refgate::DayRange&) override {
        return {};
    }
    refgate::admin::CommissionTotals totals() override { return {}; }
    std::optional<std::string> postback_secret_hash(const std::string&) override {
        return secret_hash;
    }

    std::vector<std::pair<std::size_t, bool>> calls;  // (commissions, dry run)
    std::string secret_hash;
};

const char* const kCsv =
    "order_id,subid,tracking_id,status,amount,currency,occurred_at\n"
    "ORD-1,,picks-nl,approved,12.50,EUR,2026-11-29T16:00:00Z\n"
    "ORD-2,,picks-nl,approved,12.50,EUR,2026-11-29T16:00:00Z\n";

TEST_CASE("an import with a bad row records nothing and names the row's line and field",
          "[commissions]") {
    FakeStore store;
    std::string csv =
        std::string(kCsv) + "ORD-3,,picks-nl,approved,12;50,EUR,2026-11-29T16:00:00Z\n";
    auto o = refgate::admin::import_commissions(
        store, {"impact-co", refgate::parse_commissions_csv(csv), CommissionSource::api, false});
    CHECK(o.kind == OutcomeKind::invalid);
    REQUIRE(o.view.refused.size() == 1);
    CHECK(o.view.refused[0].line == 4);
    CHECK(o.view.refused[0].field == "amount");
    CHECK_FALSE(o.view.applied);
    // The API's 422 shows the report beside the errors.
    CHECK(refgate::view_json(o.view)["refused"][0]["line"] == 4);
    // Counted in a transaction that is rolled back: nothing kept.
    REQUIRE(store.calls.size() == 1);
    CHECK(store.calls[0].second);

    auto good = refgate::admin::import_commissions(
        store, {"impact-co", refgate::parse_commissions_csv(kCsv), CommissionSource::api, false});
    CHECK(good.kind == OutcomeKind::ok);
    CHECK(good.view.recorded.created == 2);
    CHECK(refgate::view_json(good.view)["created"] == 2);
    CHECK_FALSE(store.calls.back().second);

    auto unknown = refgate::admin::import_commissions(
        store, {"nobody", refgate::parse_commissions_csv(kCsv), CommissionSource::api, false});
    CHECK(unknown.kind == OutcomeKind::not_found);
}

TEST_CASE("CSV columns other than the seven are never read, in any order", "[commissions]") {
    auto input = refgate::parse_commissions_csv(
        "\xEF\xBB\xBF"
        "email,currency,amount,status,tracking_id,subid,order_id,occurred_at,ip\n"
        "ada@example.org,EUR,1,paid,picks-nl,,ORD-9,2026-11-29T16:00:00Z,203.0.113.7\n");
    REQUIRE(input.problems.empty());
    REQUIRE(input.rows.size() == 1);
    const auto& f = input.rows[0].fields;
    CHECK(f.order_id == "ORD-9");
    CHECK(f.currency == "EUR");
    CHECK_FALSE(f.subid);
    CHECK(input.rows[0].line == 2);
    auto missing = refgate::parse_commissions_csv("order_id,subid,status\nA,b,paid\n");
    REQUIRE(missing.problems.size() == 1);
    CHECK(missing.problems[0].line == 1);
}

TEST_CASE("the postback limiter lets a burst through, then the partner's rate", "[commissions]") {
    refgate::testing::FakeMonotonicClock clock;
    refgate::admin::PostbackLimiter limiter(2, 4, &clock);
    int allowed = 0;
    for (int i = 0; i < 10; ++i) allowed += limiter.allow("impact-co") ? 1 : 0;
    CHECK(allowed == 4);
    // Another partner has its own bucket.
    CHECK(limiter.allow("awin-co"));
    clock.advance(500ms);
    CHECK(limiter.allow("impact-co"));
    CHECK_FALSE(limiter.allow("impact-co"));
    clock.advance(10s);
    allowed = 0;
    for (int i = 0; i < 10; ++i) allowed += limiter.allow("impact-co") ? 1 : 0;
    CHECK(allowed == 4);
}

TEST_CASE("a new postback secret is shown once and stored as its hash", "[commissions]") {
    FakeStore store;
    auto o = refgate::admin::rotate_postback_secret(store, "impact-co");
    REQUIRE(o.kind == OutcomeKind::ok);
    std::string secret = o.view.secret;
    CHECK(refgate::view_json(o.view)["secret"] == secret);
    CHECK(store.secret_hash == refgate::admin::hash_token(secret));
    CHECK(store.secret_hash.find(secret) == std::string::npos);
    CHECK(refgate::admin::rotate_postback_secret(store, "nobody").kind == OutcomeKind::not_found);
}

}  // namespace
}  // namespace commissions_test
