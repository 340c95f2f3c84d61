// The earnings answer (issue 43, GET /api/v1/stats/earnings) through the refgate binary and a real
// PostgreSQL, against a table computed by hand: two partners, two currencies and a third, a
// reversal, an unknown sub-ID, a commission just outside the range, and human clicks from the
// roll-ups (and, per placement, the base table).

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "earnings_fixture.hpp"
#include "support/http_client.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace earnings_test {

using namespace refgate::test;
using Json = nlohmann::json;

namespace {

constexpr const char* kD1 = "2026-11-10";
constexpr const char* kD2 = "2026-11-11";

using Fixture = EarningsFixture;  // earnings_fixture.hpp

Json commission(const std::string& order, const std::string& subid, const std::string& status,
                const std::string& amount, const std::string& currency, const std::string& at) {
    return {{"order_id", order}, {"subid", subid},       {"status", status},
            {"amount", amount},  {"currency", currency}, {"occurred_at", at}};
}

// The item of `answer` whose `field` is `value`.
Json item(const Json& answer, const std::string& field, const std::string& value,
          const std::string& placement = "") {
    for (const auto& i : answer["items"]) {
        if (i[field] == value && (placement.empty() || i["placement"] == placement)) return i;
    }
    FAIL("no item with " << field << " " << value << " " << placement << " in " << answer.dump());
    return {};
}

Json figures(std::uint64_t pending, std::uint64_t approved, std::uint64_t reversed,
             std::uint64_t paid) {
    return {{"pending", pending}, {"approved", approved}, {"reversed", reversed}, {"paid", paid}};
}

Json sums(const char* pending, const char* approved, const char* reversed, const char* paid) {
    return {{"pending", pending}, {"approved", approved}, {"reversed", reversed}, {"paid", paid}};
}

}  // namespace

TEST_CASE(
    "the earnings answer matches the table computed by hand, per link, placement, partner "
    "and day",
    "[commissions][pg]") {
    Fixture f;
    REQUIRE(f.imported);
    // Clicks: shop 30 direct + 10 newsletter on D1 (and bots, which never count), 20 direct on
    // D2; shop-pro 40 direct on D2; gear 25 direct on D1.
    f.clicks("shop", kD1, "direct", 30, 99);
    f.clicks("shop", kD1, "newsletter", 10);
    f.clicks("shop", kD2, "direct", 20);
    f.clicks("shop-pro", kD2, "direct", 40);
    f.clicks("gear", kD1, "direct", 25);
    f.db.exec("UPDATE refgate_rollup_state SET complete = true");

    ServiceProcess service{{.database_url = f.db.url()}};
    auto post = [&](const std::string& partner, const Json& items) {
        auto r = http_request(service.admin_port(), "POST",
                              "/api/v1/partners/" + partner + "/commissions",
                              with_token(f.editor, "application/json"), items.dump());
        INFO(r.body);
        REQUIRE(r.status == 200);
    };
    const std::string shop_direct = f.token("shop", "direct");
    post("impact-co",
         Json::array(
             {commission("I-1", shop_direct, "approved", "10.00", "EUR", "2026-11-10T10:00:00Z"),
              // 23:30 at -02:00 is D2 in UTC: it counts on D2.
              commission("I-2", f.token("shop", "newsletter"), "pending", "2.50", "EUR",
                         "2026-11-10T23:30:00-02:00"),
              commission("I-3", shop_direct, "approved", "4.00", "EUR", "2026-11-11T09:00:00Z"),
              commission("I-4", f.token("shop-pro", "direct"), "approved", "3.00", "USD",
                         "2026-11-11T12:00:00Z"),
              commission("I-5", "nosuchtoken99", "pending", "7.25", "GBP", "2026-11-10T08:00:00Z"),
              // The first second after the range.
              commission("I-6", shop_direct, "approved", "100", "EUR", "2026-11-12T00:00:00Z")}));
    // I-3 is reversed later.
    post("impact-co", Json::array({commission("I-3", shop_direct, "reversed", "4.00", "EUR",
                                              "2026-11-11T09:00:00Z")}));
    const std::string gear_direct = f.token("gear", "direct");
    post("awin-co",
         Json::array(
             {commission("A-1", gear_direct, "paid", "5.00", "EUR", "2026-11-10T15:00:00Z"),
              commission("A-2", gear_direct, "approved", "1.50", "USD", "2026-11-11T15:00:00Z")}));

    auto get = [&](const std::string& query, const Headers& extra = {}) {
        Headers h = with_token(f.viewer);
        h.insert(h.end(), extra.begin(), extra.end());
        return http_get(service.admin_port(),
                        "/api/v1/stats/earnings?from=" + std::string(kD1) + "&to=" + kD2 + query,
                        h);
    };
    auto answer = [&](const std::string& group) {
        auto r = get("&group=" + group);
        INFO(r.body);
        REQUIRE(r.status == 200);
        return Json::parse(r.body);
    };

    const Json unattributed = {{"conversions", figures(1, 0, 0, 0)},
                               {"amount", {{"GBP", sums("7.25", "0", "0", "0")}}}};

    SECTION("per link") {
        auto a = answer("link");
        CHECK(a["from"] == kD1);
        CHECK(a["to"] == kD2);
        CHECK(a["group"] == "link");
        REQUIRE(a["items"].size() == 3);
        auto shop = item(a, "link", "shop");
        CHECK(shop["partner"] == "impact-co");
        CHECK(shop["human_clicks"] == 60);
        CHECK(shop["conversions"] == figures(1, 1, 1, 0));
        CHECK(shop["amount"] == Json{{"EUR", sums("2.50", "10.00", "4.00", "0")}});
        // (2.50 + 10.00) / 60 = 0.208333...: the reversal earns nothing.
        CHECK(shop["epc"] == Json{{"EUR", "0.2083"}});
        CHECK_FALSE(shop.contains("placement"));
        CHECK_FALSE(shop.contains("day"));
        auto pro = item(a, "link", "shop-pro");
        CHECK(pro["human_clicks"] == 40);
        CHECK(pro["amount"] == Json{{"USD", sums("0", "3.00", "0", "0")}});
        CHECK(pro["epc"] == Json{{"USD", "0.0750"}});
        auto gear = item(a, "link", "gear");
        CHECK(gear["partner"] == "awin-co");
        CHECK(gear["human_clicks"] == 25);
        CHECK(gear["conversions"] == figures(0, 1, 0, 1));
        CHECK(gear["amount"] ==
              Json{{"EUR", sums("0", "0", "0", "5.00")}, {"USD", sums("0", "1.50", "0", "0")}});
        CHECK(gear["epc"] == Json{{"EUR", "0.2000"}, {"USD", "0.0600"}});
        CHECK(a["unattributed"] == unattributed);
    }
    SECTION("per placement") {
        auto a = answer("placement");
        REQUIRE(a["items"].size() == 4);
        auto direct = item(a, "link", "shop", "direct");
        CHECK(direct["human_clicks"] == 50);
        CHECK(direct["amount"] == Json{{"EUR", sums("0", "10.00", "4.00", "0")}});
        CHECK(direct["epc"] == Json{{"EUR", "0.2000"}});
        auto news = item(a, "link", "shop", "newsletter");
        CHECK(news["human_clicks"] == 10);
        CHECK(news["amount"] == Json{{"EUR", sums("2.50", "0", "0", "0")}});
        CHECK(news["epc"] == Json{{"EUR", "0.2500"}});
        CHECK(item(a, "link", "shop-pro", "direct")["epc"] == Json{{"USD", "0.0750"}});
        CHECK(item(a, "link", "gear", "direct")["human_clicks"] == 25);
        CHECK(a["unattributed"] == unattributed);
    }
    SECTION("per partner") {
        auto a = answer("partner");
        REQUIRE(a["items"].size() == 2);
        auto impact = item(a, "partner", "impact-co");
        CHECK_FALSE(impact.contains("link"));
        CHECK(impact["human_clicks"] == 100);
        CHECK(impact["conversions"] == figures(1, 2, 1, 0));
        CHECK(impact["amount"] == Json{{"EUR", sums("2.50", "10.00", "4.00", "0")},
                                       {"USD", sums("0", "3.00", "0", "0")}});
        CHECK(impact["epc"] == Json{{"EUR", "0.1250"}, {"USD", "0.0300"}});
        auto awin = item(a, "partner", "awin-co");
        CHECK(awin["human_clicks"] == 25);
        CHECK(awin["epc"] == Json{{"EUR", "0.2000"}, {"USD", "0.0600"}});
        CHECK(a["unattributed"] == unattributed);
    }
    SECTION("per day: a commission counts on its occurred_at UTC day") {
        auto a = answer("day");
        REQUIRE(a["items"].size() == 2);
        auto d1 = item(a, "day", kD1);
        CHECK_FALSE(d1.contains("partner"));
        CHECK(d1["human_clicks"] == 65);
        CHECK(d1["amount"] == Json{{"EUR", sums("0", "10.00", "0", "5.00")}});
        // (10.00 + 5.00) / 65 = 0.230769...
        CHECK(d1["epc"] == Json{{"EUR", "0.2308"}});
        auto d2 = item(a, "day", kD2);
        CHECK(d2["human_clicks"] == 60);
        CHECK(d2["conversions"] == figures(1, 2, 1, 0));
        CHECK(d2["amount"] ==
              Json{{"EUR", sums("2.50", "0", "4.00", "0")}, {"USD", sums("0", "4.50", "0", "0")}});
        CHECK(d2["epc"] == Json{{"EUR", "0.0417"}, {"USD", "0.0750"}});
    }
    SECTION("narrowed to one link or one partner, as a link's and a partner's page ask") {
        auto one = [&](const std::string& query) {
            auto r = get(query);
            INFO(r.body);
            REQUIRE(r.status == 200);
            return Json::parse(r.body);
        };
        auto a = one("&group=link&link=shop");
        CHECK(a["link"] == "shop");
        REQUIRE(a["items"].size() == 1);
        CHECK(a["items"][0]["human_clicks"] == 60);
        CHECK(a["items"][0]["amount"] == Json{{"EUR", sums("2.50", "10.00", "4.00", "0")}});
        // Commissions that name no link belong to no link.
        CHECK(a["unattributed"] ==
              Json{{"conversions", figures(0, 0, 0, 0)}, {"amount", Json::object()}});
        auto placements = one("&group=placement&link=shop");
        CHECK(placements["items"].size() == 2);
        auto p = one("&group=partner&partner=awin-co");
        CHECK(p["partner"] == "awin-co");
        REQUIRE(p["items"].size() == 1);
        CHECK(p["items"][0]["human_clicks"] == 25);
        CHECK(p["items"][0]["epc"] == Json{{"EUR", "0.2000"}, {"USD", "0.0600"}});
        // The partner's own unattributed commissions stay with it.
        CHECK(one("&group=partner&partner=impact-co")["unattributed"] == unattributed);
        CHECK(one("&group=link&partner=awin-co")["items"].size() == 1);
        // A link of another partner: nothing matches both.
        CHECK(one("&group=link&link=shop&partner=awin-co")["items"].empty());
        CHECK(get("&link=nosuchlink").status == 404);
        CHECK(get("&partner=nosuchpartner").status == 404);
    }
    SECTION("CSV, and the query's rules") {
        auto csv = get("&group=link", {{"Accept", "text/csv"}});
        REQUIRE(csv.status == 200);
        CHECK(csv.body.find("link,partner,placement,day,human_clicks,currency,pending,approved,"
                            "reversed,paid,pending_amount,approved_amount,reversed_amount,"
                            "paid_amount,epc\r\n") == 0);
        CHECK(csv.body.find("shop,impact-co,,,60,EUR,1,1,1,0,2.50,10.00,4.00,0,0.2083\r\n") !=
              std::string::npos);
        CHECK(csv.body.find(",,,,,GBP,1,0,0,0,7.25,0,0,0,\r\n") != std::string::npos);
        CHECK(get("&group=channel").status == 422);
        CHECK(http_get(service.admin_port(), "/api/v1/stats/earnings?from=2026-11-12&to=2026-11-10",
                       with_token(f.viewer))
                  .status == 422);
        // The default group is link; the range's last second is included, the next one not.
        auto r = get("");
        REQUIRE(r.status == 200);
        CHECK(Json::parse(r.body)["group"] == "link");
        auto later =
            http_get(service.admin_port(), "/api/v1/stats/earnings?from=2026-11-12&to=2026-11-12",
                     with_token(f.viewer));
        REQUIRE(later.status == 200);
        CHECK(item(Json::parse(later.body), "link", "shop")["amount"] ==
              Json{{"EUR", sums("0", "100", "0", "0")}});
    }
}

}  // namespace earnings_test
