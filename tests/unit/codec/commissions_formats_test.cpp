// The networks' own exports read onto the commission model (issue 43's named formats), from the
// fixtures built from the documented columns (tests/data/commissions).

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "refgate/codec/commissions_input.hpp"
#include "refgate/domain/commission.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace commissions_formats_test {
namespace {

std::string fixture(const char* name) {
    std::ifstream in(std::filesystem::path(REFGATE_SOURCE_DIR) / "tests/data/commissions" / name,
                     std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<refgate::domain::Commission> checked(const refgate::codec::CommissionsInput& input) {
    REQUIRE(input.problems.empty());
    std::vector<refgate::domain::Commission> out;
    for (const auto& row : input.rows) {
        auto check = refgate::domain::check_commission(row.fields);
        INFO("line " << row.line);
        REQUIRE(check.problems.empty());
        out.push_back(*check.commission);
    }
    return out;
}

std::string utc(const refgate::domain::Commission& c) {
    return refgate::domain::format_rfc3339(c.occurred_at);
}

TEST_CASE("Impact's Actions as CSV: Id, SubId1, State, Payout, Currency, EventDate in UTC",
          "[commissions]") {
    auto text = fixture("impact_actions.csv");
    auto input =
        refgate::codec::read_commissions(text, refgate::codec::CommissionsFormat::impact, true);
    auto c = checked(input);
    REQUIRE(c.size() == 3);
    CHECK(c[0].order_id == "1000.4636.158133");
    CHECK(c[0].subid == "imp-tok-1");
    CHECK(c[0].tracking_id.empty());
    CHECK(c[0].status == refgate::domain::CommissionStatus::approved);
    CHECK(refgate::domain::to_string(c[0].amount) == "0.88");  // the Payout, not the sale's Amount
    CHECK(c[0].currency == "USD");
    CHECK(utc(c[0]) == "2024-09-10T17:42:38Z");
    // 23:30 at -07:00 is the next UTC day.
    CHECK(utc(c[1]) == "2024-09-11T06:30:00Z");
    CHECK(c[1].status == refgate::domain::CommissionStatus::pending);
    CHECK(c[2].status == refgate::domain::CommissionStatus::reversed);
    CHECK(input.rows[2].line == 4);
    // The customer's city, region and country are never read.
    for (auto row : input.rows) {
        CHECK_FALSE(row.fields.tracking_id);
        for (auto name : refgate::domain::kCommissionFields) {
            const auto* value = row.fields.field(name);
            CHECK((!*value || (*value)->find("California") == std::string::npos));
        }
    }
    // Refgate's own header is not Impact's.
    auto own =
        refgate::codec::read_commissions(text, refgate::codec::CommissionsFormat::refgate, true);
    REQUIRE(own.problems.size() == 1);
    CHECK(own.problems[0].line == 1);
}

TEST_CASE("Impact's Actions as the API's JSON", "[commissions]") {
    auto input = refgate::codec::read_commissions(
        R"({"Actions": [{"Id": "1000.1.2", "State": "PENDING", "Payout": "2.10",
             "Currency": "EUR", "EventDate": "2024-09-10T10:42:38+02:00", "SubId1": "tok-9",
             "CustomerCity": "Utrecht"}]})",
        refgate::codec::CommissionsFormat::impact, false);
    auto c = checked(input);
    REQUIRE(c.size() == 1);
    CHECK(c[0].order_id == "1000.1.2");
    CHECK(utc(c[0]) == "2024-09-10T08:42:38Z");
}

TEST_CASE("Awin's transactions: id, clickRef, status with declined and paid, amount, UTC",
          "[commissions]") {
    auto input = refgate::codec::read_commissions(fixture("awin_transactions.json"),
                                                  refgate::codec::CommissionsFormat::awin, false);
    auto c = checked(input);
    REQUIRE(c.size() == 4);
    CHECK(c[0].order_id == "259630312");
    CHECK(c[0].subid == "awin-tok-1");
    CHECK(c[0].status == refgate::domain::CommissionStatus::pending);
    CHECK(refgate::domain::to_string(c[0].amount) == "5.59");
    CHECK(c[0].currency == "GBP");
    CHECK(utc(c[0]) == "2017-01-23T23:54:00Z");
    CHECK(c[1].status == refgate::domain::CommissionStatus::paid);  // paidToPublisher
    CHECK(refgate::domain::to_string(c[1].amount) == "12");
    CHECK(c[2].status == refgate::domain::CommissionStatus::reversed);  // declined
    CHECK(refgate::domain::to_string(c[2].amount) == "3.1");
    CHECK(c[3].status == refgate::domain::CommissionStatus::approved);
    // Not CSV, not an object, and a number with an exponent is not an amount.
    CHECK_FALSE(
        refgate::codec::read_commissions("id\n1\n", refgate::codec::CommissionsFormat::awin, true)
            .problems.empty());
    CHECK_FALSE(
        refgate::codec::read_commissions("{}", refgate::codec::CommissionsFormat::awin, false)
            .problems.empty());
    auto exponent = refgate::codec::read_commissions(
        R"([{"id": 1, "commissionAmount": {"amount": 1e-9, "currency": "EUR"}}])",
        refgate::codec::CommissionsFormat::awin, false);
    REQUIRE(exponent.problems.size() == 1);
    CHECK(exponent.problems[0].field == "amount");
}

TEST_CASE("the format names", "[commissions]") {
    CHECK(refgate::codec::parse_commissions_format("") ==
          refgate::codec::CommissionsFormat::refgate);
    CHECK(refgate::codec::parse_commissions_format("impact") ==
          refgate::codec::CommissionsFormat::impact);
    CHECK(refgate::codec::parse_commissions_format("awin") ==
          refgate::codec::CommissionsFormat::awin);
    CHECK_FALSE(refgate::codec::parse_commissions_format("cj"));
    CHECK_FALSE(refgate::codec::parse_commissions_format("Impact"));
}

}  // namespace
}  // namespace commissions_formats_test
