// GET /api/v1/stats/earnings/attention (issue 43): the links whose EPC fell to zero while their
// clicks went on, through the refgate binary and a real PostgreSQL, over a hand-made data set
// with days counted back from today (the window is the N full UTC days before today).

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "earnings_fixture.hpp"
#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace earnings_attention_test {

using namespace refgate::test;
using Json = nlohmann::json;

namespace {

// The data set with two API tokens (earnings_fixture.hpp), and days counted back from today.
struct Fixture : EarningsFixture {
    // "YYYY-MM-DD", `back` UTC days before today.
    std::string day(int back) {
        return db.scalar("SELECT to_char((now() AT TIME ZONE 'UTC')::date - " +
                         std::to_string(back) + ", 'YYYY-MM-DD')");
    }
    // Human clicks of a link on the day `back` days ago, as a flush writes them.
    void clicks(const std::string& slug, int back, int human) {
        EarningsData::clicks(slug, day(back), "direct", human);
    }
};

Json commission(const std::string& order, const std::string& subid, const std::string& status,
                const std::string& amount, const std::string& day) {
    return {{"order_id", order}, {"subid", subid},    {"status", status},
            {"amount", amount},  {"currency", "EUR"}, {"occurred_at", day + "T12:00:00Z"}};
}

}  // namespace

TEST_CASE("the attention answer lists the links whose EPC fell to zero while clicks went on",
          "[commissions][pg]") {
    Fixture f;
    REQUIRE(f.imported);
    // shop: clicks on each of the last 3 days; it earned 5 days ago, and in the window only a
    // reversal. shop-pro: clicks each day, and a pending commission 2 days ago: it still earns.
    // shop-new: clicks each day, but never a commission (its EPC never was above zero). gear:
    // earned 10 days ago, clicks 2 and 1 days ago only (not 3 days ago).
    for (int back : {3, 2, 1}) {
        f.clicks("shop", back, 10);
        f.clicks("shop-pro", back, 5);
        f.clicks("shop-new", back, 7);
    }
    f.clicks("gear", 2, 4);
    f.clicks("gear", 1, 4);
    // Clicks of today are not in the window.
    f.clicks("shop", 0, 50);
    f.db.exec("UPDATE refgate_rollup_state SET complete = true");

    ServiceProcess service{{.database_url = f.db.url()}};
    auto post = [&](const std::string& partner, const Json& items) {
        auto r = http_request(service.admin_port(), "POST",
                              "/api/v1/partners/" + partner + "/commissions",
                              with_token(f.editor, "application/json"), items.dump());
        INFO(r.body);
        REQUIRE(r.status == 200);
    };
    const std::string shop = f.token("shop");
    post("impact-co",
         Json::array({commission("I-1", shop, "approved", "12.00", f.day(5)),
                      commission("I-2", shop, "reversed", "3.00", f.day(2)),
                      commission("I-3", f.token("shop-pro"), "approved", "1.00", f.day(6)),
                      commission("I-4", f.token("shop-pro"), "pending", "2.00", f.day(2))}));
    post("awin-co", Json::array({commission("A-1", f.token("gear"), "paid", "8.00", f.day(10))}));

    auto get = [&](const std::string& query) {
        auto r = http_get(service.admin_port(), "/api/v1/stats/earnings/attention" + query,
                          with_token(f.viewer));
        INFO(r.body);
        REQUIRE(r.status == 200);
        return Json::parse(r.body);
    };
    auto three = get("?days=3");
    CHECK(three == Json{{"days", 3},
                        {"from", f.day(3)},
                        {"to", f.day(1)},
                        {"items", Json::array({{{"link", "shop"},
                                                {"partner", "impact-co"},
                                                {"human_clicks", 30},
                                                {"last_earning_day", f.day(5)}}})}});
    // Over the last 2 days, gear's clicks went on too.
    auto two = get("?days=2");
    REQUIRE(two["items"].size() == 2);
    CHECK(two["items"][0] == Json{{"link", "gear"},
                                  {"partner", "awin-co"},
                                  {"human_clicks", 8},
                                  {"last_earning_day", f.day(10)}});
    CHECK(two["items"][1]["link"] == "shop");
    CHECK(two["items"][1]["human_clicks"] == 20);
    // The default is 7 days: no link had clicks on each of them.
    auto seven = get("");
    CHECK(seven["days"] == 7);
    CHECK(seven["from"] == f.day(7));
    CHECK(seven["items"] == Json::array());

    for (const char* bad : {"?days=0", "?days=91", "?days=x", "?days=3d"}) {
        auto r =
            http_get(service.admin_port(), std::string("/api/v1/stats/earnings/attention") + bad,
                     with_token(f.viewer));
        INFO(bad << " " << r.body);
        CHECK(r.status == 422);
        CHECK(r.body.find("days") != std::string::npos);
    }
    CHECK(http_get(service.admin_port(), "/api/v1/stats/earnings/attention").status == 401);
}

}  // namespace earnings_attention_test
