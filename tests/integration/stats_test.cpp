// The stats API end to end: figures from the requests the test made, flushed (PostgreSQL) and not
// yet flushed (Redis buckets), in JSON and CSV; a Redis of the test's own, `refgate flush`.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "stats_fixture.hpp"
#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace stats_test {

using namespace refgate::test;
using namespace std::chrono_literals;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

const char* const kDocument = R"json({
  "partners": [
    {"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks42",
     "allowed_domains": ["tailscale.com"]},
    {"slug": "kagi", "name": "Kagi", "ref_param": "via", "ref_code": "picks",
     "allowed_domains": ["kagi.com"]}
  ],
  "links": [
    {"slug": "alpha", "partner": "tailscale", "destination": "https://tailscale.com/alpha"},
    {"slug": "beta", "partner": "tailscale", "destination": "https://tailscale.com/beta"},
    {"slug": "search", "partner": "kagi", "destination": "https://kagi.com/pricing"}
  ]
})json";

// A distinct browser per reader, so that each human click is one unique reader.
std::string browser(int reader) {
    return "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128." +
           std::to_string(reader);
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
}

struct Fixture : stats::StatsService {
    Fixture() : StatsService(kDocument, "dashboards", "viewer") {}

    void click(const std::string& path, Headers headers, const std::string& method = "GET") {
        REQUIRE(http_request(service.port(), method, path, headers).status == 302);
    }
    // The service hands today's salt to its threads shortly after it is in Redis; clicks before
    // that feed no unique estimate.
    void wait_for_salt() {
        std::string key = "refgate:salt:" + today;
        auto deadline = std::chrono::steady_clock::now() + 10s;
        while (trimmed(redis.cli("EXISTS " + key)) != "1" &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(20ms);
        }
        REQUIRE(trimmed(redis.cli("EXISTS " + key)) == "1");
        std::this_thread::sleep_for(500ms);
    }
    // Polls until the day's clicks of the link reach `human` and `bot` (counts reach Redis every
    // aggregation window, each I/O thread's in the window its shard was drained in).
    Json wait_for_link(const std::string& link, std::uint64_t human, std::uint64_t bot = 0) {
        std::string target = "/api/v1/stats/links/" + link + "?from=" + today + "&to=" + today;
        auto deadline = std::chrono::steady_clock::now() + 15s;
        Json body = get_json(target);
        auto done = [&] {
            return body["totals"]["human"] == human && body["totals"]["bot"] == bot;
        };
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(100ms);
            body = get_json(target);
        }
        INFO(body.dump());
        REQUIRE(body["totals"]["human"] == human);
        REQUIRE(body["totals"]["bot"] == bot);
        return body;
    }
};

}  // namespace

TEST_CASE("link stats count flushed and unflushed clicks once each, by day, class and channel",
          "[stats][pg][redis]") {
    Fixture f;
    f.wait_for_salt();

    // Flushed part: 3 direct and 2 newsletter human clicks from 5 readers, a HEAD (bot), a
    // prefetch; 2 human clicks on beta.
    for (int i = 0; i < 3; ++i) f.click("/go/alpha", {{"User-Agent", browser(i)}});
    for (int i = 3; i < 5; ++i) f.click("/go/alpha?src=news", {{"User-Agent", browser(i)}});
    f.click("/go/alpha", {{"User-Agent", browser(0)}}, "HEAD");
    f.click("/go/alpha", {{"User-Agent", browser(9)}, {"Sec-Purpose", "prefetch"}});
    for (int i = 0; i < 2; ++i) f.click("/go/beta", {{"User-Agent", browser(i)}});
    f.wait_for_link("alpha", 5, 1);
    f.wait_for_link("beta", 2);
    f.flush();
    // At least the five human clicks waited for are in PostgreSQL now.
    CHECK(std::stoi(f.db.scalar("SELECT coalesce(sum(clicks), 0) FROM refgate_clicks_daily WHERE "
                                "link = 'alpha' AND class = 'human'")) == 5);

    // Unflushed part: 2 more human clicks (one a new reader, one a reader seen before), a bot.
    f.click("/go/alpha", {{"User-Agent", browser(5)}});
    f.click("/go/alpha", {{"User-Agent", browser(1)}});
    f.click("/go/alpha", {{"User-Agent", "Slackbot-LinkExpanding 1.0"}});
    auto body = f.wait_for_link("alpha", 7, 2);

    CHECK(body["link"] == "alpha");
    CHECK(body["partner"] == "tailscale");
    REQUIRE(body["days"].size() == 1);
    const auto& day = body["days"][0];
    CHECK(day["day"] == f.today);
    CHECK(day["human"] == 7);
    CHECK(day["bot"] == 2);
    CHECK(day["prefetch"] == 1);
    CHECK(day["human_by_channel"] == Json{{"direct", 5}, {"news", 2}});
    CHECK(day["unique_estimate"] == 6);  // readers 0-5
    CHECK(body["totals"]["bot"] == 2);

    // CSV of the same figures, for spreadsheets.
    auto csv = f.get("/api/v1/stats/links/alpha?from=" + f.today + "&to=" + f.today,
                     {{"Accept", "text/csv"}});
    CHECK(csv.status == 200);
    CHECK(csv.header("Content-Type").starts_with("text/csv"));
    CHECK(csv.body == "day,human,bot,prefetch,unique_estimate,human:direct,human:news\r\n" +
                          f.today + ",7,2,1,6,5,2\r\n");

    // A bucket that is already recorded as flushed but still in Redis (a flush between its
    // commit and its DEL, or an AOF replay) is not added again.
    auto bucket = f.db.scalar("SELECT min(bucket) FROM refgate_flushed_buckets");
    REQUIRE_FALSE(bucket.empty());
    f.redis.cli("HSET refgate:bucket:" + bucket + " '" +
                f.db.scalar("SELECT id FROM refgate_links WHERE slug = 'alpha'") + "|" + f.today +
                "|direct|human' 3");
    f.redis.cli("SADD refgate:buckets " + bucket);
    auto again = f.get_json("/api/v1/stats/links/alpha?from=" + f.today + "&to=" + f.today);
    CHECK(again["totals"]["human"] == 7);

    // Ranges: every day is listed, the default is the last 30 days.
    auto month = f.get_json("/api/v1/stats/links/alpha");
    CHECK(month["days"].size() == 30);
    CHECK(month["to"] == f.today);
    CHECK(month["totals"]["human"] == 7);
}

TEST_CASE("partner and top stats add up the links' clicks, unflushed ones included",
          "[stats][pg][redis]") {
    Fixture f;
    for (int i = 0; i < 4; ++i) f.click("/go/search", {{"User-Agent", browser(i)}});
    for (int i = 0; i < 2; ++i) f.click("/go/alpha", {{"User-Agent", browser(i)}});
    f.wait_for_link("search", 4);
    f.flush();
    f.click("/go/beta", {{"User-Agent", browser(1)}});
    f.click("/go/beta", {{"User-Agent", browser(2)}});
    f.click("/go/beta", {{"User-Agent", browser(3)}});
    f.click("/go/beta", {{"User-Agent", browser(4)}}, "HEAD");
    f.wait_for_link("beta", 3, 1);

    auto partner =
        f.get_json("/api/v1/stats/partners/tailscale?from=" + f.today + "&to=" + f.today);
    CHECK(partner["partner"] == "tailscale");
    CHECK(partner["totals"] == Json{{"human", 5}, {"bot", 1}, {"prefetch", 0}});
    CHECK(partner["days"][0]["human"] == 5);
    REQUIRE(partner["links"].size() == 2);
    CHECK(partner["links"][0] ==
          Json{{"link", "alpha"}, {"human", 2}, {"bot", 0}, {"prefetch", 0}});
    CHECK(partner["links"][1] == Json{{"link", "beta"}, {"human", 3}, {"bot", 1}, {"prefetch", 0}});

    auto top = f.get_json("/api/v1/stats/top?from=" + f.today + "&to=" + f.today + "&limit=2");
    REQUIRE(top["items"].size() == 2);
    CHECK(top["items"][0]["link"] == "search");
    CHECK(top["items"][0]["partner"] == "kagi");
    CHECK(top["items"][0]["human"] == 4);
    CHECK(top["items"][1]["link"] == "beta");
    CHECK(top["items"][1]["human"] == 3);

    auto csv =
        f.get("/api/v1/stats/top?from=" + f.today + "&to=" + f.today, {{"Accept", "text/csv"}});
    CHECK(csv.body ==
          "rank,link,partner,human,bot,prefetch,domain\r\n1,search,kagi,4,0,0,\r\n"
          "2,beta,tailscale,3,1,0,\r\n3,alpha,tailscale,2,0,0,\r\n");
    auto partner_csv = f.get("/api/v1/stats/partners/kagi?from=" + f.today + "&to=" + f.today,
                             {{"Accept", "text/csv"}});
    CHECK(partner_csv.body == "day,human,bot,prefetch\r\n" + f.today + ",4,0,0\r\n");
}

TEST_CASE(
    "the stats API answers 422 for bad dates and ranges, 404 for unknown slugs, 401 without "
    "a token",
    "[stats][pg]") {
    Fixture f;
    auto problem = [&](const std::string& target, const std::string& field) {
        auto r = f.get(target);
        INFO(target << " -> " << r.body);
        CHECK(r.status == 422);
        CHECK(r.header("Content-Type") == "application/problem+json");
        auto body = Json::parse(r.body, nullptr, false);
        REQUIRE_FALSE(body.is_discarded());
        REQUIRE(body["errors"].size() >= 1);
        CHECK(body["errors"][0]["field"] == field);
    };
    problem("/api/v1/stats/links/alpha?from=2026-02-30", "from");
    problem("/api/v1/stats/links/alpha?to=29.11.2026", "to");
    problem("/api/v1/stats/links/alpha?from=2026-11-02&to=2026-11-01", "from");
    problem("/api/v1/stats/partners/kagi?from=2025-01-01&to=2026-11-01", "to");
    problem("/api/v1/stats/top?limit=0", "limit");
    problem("/api/v1/stats/top?limit=101", "limit");
    CHECK(f.get("/api/v1/stats/top?from=2025-10-01&to=2026-11-04").status == 200);  // 400 days

    CHECK(f.get("/api/v1/stats/links/nope").status == 404);
    CHECK(f.get("/api/v1/stats/partners/nope").status == 404);
    CHECK(http_get(f.service.admin_port(), "/api/v1/stats/top").status == 401);
    auto empty = f.get_json("/api/v1/stats/top");
    CHECK(empty["items"].empty());
}

namespace {

std::string range(const Fixture& f) { return "from=" + f.today + "&to=" + f.today; }

// Polls the overview of today until its human clicks reach `human`.
Json wait_for_overview(Fixture& f, std::uint64_t human) {
    std::string target = "/api/v1/stats/overview?" + range(f);
    Json body = f.get_json(target);
    for (auto deadline = std::chrono::steady_clock::now() + 15s;
         body["totals"]["human"] != human && std::chrono::steady_clock::now() < deadline;
         body = f.get_json(target))
        std::this_thread::sleep_for(100ms);
    REQUIRE(body["totals"]["human"] == human);
    return body;
}

}  // namespace

TEST_CASE("the stats overview sums every link's figures per day, flushed and unflushed",
          "[console][stats][pg][redis]") {
    Fixture f;
    f.wait_for_salt();
    for (int i = 0; i < 3; ++i) f.click("/go/alpha", {{"User-Agent", browser(i)}});
    f.click("/go/alpha?src=news", {{"User-Agent", browser(3)}});
    f.click("/go/alpha", {{"User-Agent", "Slackbot-LinkExpanding 1.0"}});
    wait_for_overview(f, 4);
    f.flush();
    for (int i = 0; i < 2; ++i) f.click("/go/beta", {{"User-Agent", browser(i)}});
    f.click("/go/search?src=news", {{"User-Agent", browser(7)}});
    Json overview = wait_for_overview(f, 7);

    REQUIRE(overview["days"].size() == 1);
    Json sum = {{"human", 0}, {"bot", 0}, {"prefetch", 0}, {"unique_estimate", 0}};
    Json channels = Json::object();
    for (const char* link : {"alpha", "beta", "search"}) {
        Json day =
            f.get_json(std::string("/api/v1/stats/links/") + link + "?" + range(f))["days"][0];
        for (const char* k : {"human", "bot", "prefetch", "unique_estimate"})
            sum[k] = sum[k].get<int>() + day[k].get<int>();
        for (auto& [channel, n] : day["human_by_channel"].items())
            channels[channel] = channels.value(channel, 0) + n.get<int>();
    }
    const Json& day = overview["days"][0];
    CHECK(day["day"] == f.today);
    CHECK(day["human"] == sum["human"]);
    CHECK(day["bot"] == sum["bot"]);
    CHECK(day["prefetch"] == sum["prefetch"]);
    CHECK(day["unique_estimate"] == sum["unique_estimate"]);
    CHECK(day["unique_estimate"] == 7);  // readers 0-3 on alpha, 0-1 on beta, 7 on search
    CHECK(day["human_by_channel"] == channels);
    CHECK(day["human_by_channel"] == Json{{"direct", 5}, {"news", 2}});
    CHECK(day["bot"] == 1);
    CHECK_FALSE(overview.contains("link"));

    auto csv = f.get("/api/v1/stats/overview?" + range(f), {{"Accept", "text/csv"}});
    CHECK(csv.header("Content-Type").starts_with("text/csv"));
    CHECK(csv.body == "day,human,bot,prefetch,unique_estimate,human:direct,human:news\r\n" +
                          f.today + ",7,1,0,7,5,2\r\n");
}

TEST_CASE("top partners rank partners by their links' human clicks",
          "[console][stats][pg][redis]") {
    Fixture f;
    for (int i = 0; i < 3; ++i) f.click("/go/alpha", {{"User-Agent", browser(i)}});
    f.click("/go/beta", {{"User-Agent", browser(1)}});
    f.click("/go/search", {{"User-Agent", browser(2)}});
    wait_for_overview(f, 5);
    auto top = f.get_json("/api/v1/stats/top?by=partner&" + range(f));
    CHECK(top["by"] == "partner");
    CHECK(top["items"] ==
          Json::array({{{"partner", "tailscale"}, {"human", 4}, {"bot", 0}, {"prefetch", 0}},
                       {{"partner", "kagi"}, {"human", 1}, {"bot", 0}, {"prefetch", 0}}}));
    auto csv = f.get("/api/v1/stats/top?by=partner&limit=1&" + range(f), {{"Accept", "text/csv"}});
    CHECK(csv.body == "partner,human,bot,prefetch\r\ntailscale,4,0,0\r\n");
    CHECK(f.get("/api/v1/stats/top?by=channel").status == 422);
}

}  // namespace stats_test
