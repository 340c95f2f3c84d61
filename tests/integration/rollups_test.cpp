// The stats roll-ups (sql/014_rollups.sql) end to end: every answer reads them and answers what
// the base table answers (the same service while they are not complete), over a year of counts,
// moved and deleted links; their build in batches while counts are flushed; their rebuild after
// a write that skipped them; retention of old base rows. `refgate rollups check` after each.

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace rollups_test {

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
    {"slug": "delta", "partner": "tailscale", "destination": "https://tailscale.com/delta"},
    {"slug": "search", "partner": "kagi", "destination": "https://kagi.com/pricing"}
  ]
})json";

// Counts of `days` days up to today for the links `links` selects (of refgate_links l), on two or
// three channels, every class, and unique estimates, as SQL that writes the base tables directly
// (as counts stored before the roll-ups existed).
std::string counts_sql(int days, const std::string& links = "true") {
    std::string n = std::to_string(days - 1);
    return "INSERT INTO refgate_click_counts (link_id, day, channel, human, bot, prefetch, "
           "scanner) SELECT l.id, current_date - n, c, (l.id * 7 + n * 3 + length(c)) % 11, n % "
           "3, (l.id + n) % 2, CASE WHEN n % 17 = 0 THEN 1 ELSE 0 END FROM refgate_links l, "
           "generate_series(0, " +
           n +
           ") n, unnest(ARRAY['direct', 'news', 'blog']) c WHERE (c <> 'blog' OR l.id % 2 = 0)"
           " AND " +
           links +
           "; INSERT INTO refgate_uniques (link_id, day, unique_estimate) SELECT l.id, "
           "current_date - n, 1 + (l.id + n) % 5 FROM refgate_links l, generate_series(0, " +
           n + ") n WHERE " + links;
}

struct Fixture {
    TestDatabase db;
    PrivateRedis redis;
    std::string viewer = create_api_token(db.url(), "dashboards", "viewer");
    bool imported = import_document(db.url(), kDocument);
    EnvPairs env = {{"REFGATE_DATABASE_URL", db.url()}, {"REFGATE_REDIS_URL", redis.url()}};
    std::unique_ptr<ServiceProcess> service;
    std::string today = utc_today();

    // By default the service never flushes by itself: the test flushes with `refgate flush`.
    void serve(const std::string& flush_interval_ms = "3600000") {
        service.reset();
        service = std::make_unique<ServiceProcess>(
            ServiceOptions{.database_url = db.url(),
                           .redis_url = redis.url(),
                           .env = {{"REFGATE_FLUSH_INTERVAL_MS", flush_interval_ms}}});
    }
    HttpResponse get(const std::string& target, Headers headers = {}) {
        headers.emplace_back("Authorization", "Bearer " + viewer);
        auto r = http_get(service->admin_port(), target, headers);
        INFO(target << " -> " << r.status << " " << r.body);
        REQUIRE(r.status == 200);
        return r;
    }
    Json get_json(const std::string& target) { return Json::parse(get(target).body); }
    CommandResult run(const std::vector<std::string>& args, EnvPairs more = {}) {
        EnvPairs all = env;
        all.insert(all.end(), more.begin(), more.end());
        auto r = run_refgate(args, all);
        INFO("refgate " << args[0] << ": " << r.out << r.err);
        return r;
    }
    void flush(EnvPairs more = {}) { REQUIRE(run({"flush"}, std::move(more)).exit_code == 0); }
    void migrate() { REQUIRE(run({"migrate"}).exit_code == 0); }
    void check_rollups() {
        auto r = run({"rollups", "check", "--all"});
        CHECK(r.exit_code == 0);
        CHECK(r.out.find(": 0 difference(s)") != std::string::npos);
    }
    bool complete() { return db.scalar("SELECT complete FROM refgate_rollup_state") == "t"; }
    std::string day(int days_ago) {
        return db.scalar("SELECT (current_date - " + std::to_string(days_ago) + ")::text");
    }
    std::string id(const std::string& slug) {
        return db.scalar("SELECT id FROM refgate_links WHERE slug = '" + slug + "'");
    }
    // Clicks through the service, counted in Redis until the next flush; waits until the
    // overview of today shows `human` more human clicks than it did.
    void click(const std::vector<std::string>& paths) {
        std::string target = "/api/v1/stats/overview?from=" + today + "&to=" + today;
        auto before = get_json(target)["totals"]["human"].get<std::uint64_t>();
        for (const auto& path : paths) {
            REQUIRE(http_request(service->port(), "GET", path, {{"User-Agent", kBrowser}}).status ==
                    302);
        }
        auto deadline = std::chrono::steady_clock::now() + 15s;
        while (get_json(target)["totals"]["human"].get<std::uint64_t>() < before + paths.size() &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(100ms);
        REQUIRE(get_json(target)["totals"]["human"].get<std::uint64_t>() == before + paths.size());
    }
};

// Every stats answer (JSON, and CSV where the console offers it) over ranges of a day, 30 days,
// a year, 400 days, 100 days in the past and whole months, by target.
std::map<std::string, std::string> answers(Fixture& f) {
    std::vector<std::string> ranges = {
        "from=" + f.today + "&to=" + f.today,
        "",
        "from=" + f.day(364) + "&to=" + f.today,
        "from=" + f.day(399) + "&to=" + f.today,
        // Ending in a month that has ended, near its end: read as its sum less the days after.
        "from=" + f.day(200) + "&to=" + f.day(100),
        "from=" +
            f.db.scalar("SELECT date_trunc('month', (current_date - 200)::timestamp)::date::text") +
            "&to=" +
            f.db.scalar(
                "SELECT (date_trunc('month', (current_date - 100)::timestamp) - interval '1 day')"
                "::date::text"),
    };
    std::map<std::string, std::string> out;
    for (const auto& range : ranges) {
        for (std::string path : {"links/alpha", "links/beta", "links/search", "partners/tailscale",
                                 "partners/kagi", "top?limit=100", "top?by=partner", "overview"}) {
            std::string separator = path.find('?') == std::string::npos ? "?" : "&";
            std::string target = "/api/v1/stats/" + path + (range.empty() ? "" : separator + range);
            for (const char* accept : {"application/json", "text/csv"}) {
                auto r = http_get(f.service->admin_port(), target,
                                  {{"Authorization", "Bearer " + f.viewer}, {"Accept", accept}});
                out[std::string(accept) + " " + target] = std::to_string(r.status) + " " + r.body;
            }
        }
    }
    return out;
}

// The answers from the roll-ups, then from the base table (as before the roll-ups): the same.
void check_same_answers(Fixture& f) {
    REQUIRE(f.complete());
    auto from_rollups = answers(f);
    f.db.exec("UPDATE refgate_rollup_state SET complete = false");
    auto from_base = answers(f);
    f.db.exec("UPDATE refgate_rollup_state SET complete = true");
    REQUIRE(from_rollups.size() == from_base.size());
    for (const auto& [target, body] : from_base) {
        INFO(target);
        CHECK(from_rollups[target] == body);
    }
}

}  // namespace

TEST_CASE(
    "every stats answer reads the roll-ups and answers as the base table does, over a year, with "
    "unflushed clicks, moved and deleted links",
    "[stats][pg][redis]") {
    Fixture f;
    f.db.exec(counts_sql(420));
    // Written without the roll-ups: `refgate migrate` builds them.
    CHECK_FALSE(f.complete());
    f.migrate();
    REQUIRE(f.complete());
    f.check_rollups();
    f.serve();
    f.click({"/go/alpha", "/go/alpha", "/go/search?src=news"});
    check_same_answers(f);

    // The answers come from the roll-ups: a count added to them shows.
    std::string today = "/api/v1/stats/";
    std::string range = "?from=" + f.today + "&to=" + f.today;
    auto human = [&](const std::string& path) {
        return f.get_json(today + path + range)["totals"]["human"].get<std::int64_t>();
    };
    auto link = human("links/alpha"), partner = human("partners/tailscale"),
         all = human("overview");
    f.db.exec("UPDATE refgate_rollup_link_days SET human = human + 1000 WHERE link_id = " +
              f.id("alpha") + " AND day = current_date");
    f.db.exec(
        "UPDATE refgate_rollup_partner_days SET human = human + 1000 WHERE day = current_date AND "
        "partner_id = (SELECT id FROM refgate_partners WHERE slug = 'tailscale')");
    CHECK(human("links/alpha") == link + 1000);
    CHECK(human("partners/tailscale") == partner + 1000);
    CHECK(human("overview") == all + 1000);
    CHECK(f.get_json(today + "top" + range)["items"][0]["human"] == link + 1000);
    CHECK(f.run({"rollups", "check", "--all"}).exit_code == 1);
    f.db.exec("UPDATE refgate_rollup_link_days SET human = human - 1000 WHERE link_id = " +
              f.id("alpha") + " AND day = current_date");
    f.db.exec(
        "UPDATE refgate_rollup_partner_days SET human = human - 1000 WHERE day = current_date AND "
        "partner_id = (SELECT id FROM refgate_partners WHERE slug = 'tailscale')");

    // A link moved to another partner takes its counts along; a deleted one's leave, as the base
    // table's views join them.
    f.db.exec(
        "UPDATE refgate_links SET partner_id = (SELECT id FROM refgate_partners WHERE slug = "
        "'kagi') WHERE slug = 'delta'");
    f.db.exec("DELETE FROM refgate_links WHERE slug = 'beta'");
    f.flush();
    f.check_rollups();
    check_same_answers(f);
}

TEST_CASE(
    "the roll-ups of stored counts are built while flushes go on, and built again after a write "
    "that skipped them",
    "[stats][pg][redis]") {
    Fixture f;
    // Half built: only the first link is rolled up; the others have counts that are not yet.
    f.db.exec(
        "UPDATE refgate_rollup_state SET complete = false, built_through = (SELECT min(id) FROM "
        "refgate_links)");
    f.db.exec("SELECT set_config('refgate.rollups', 'on', true); " +
              counts_sql(40, "l.id > (SELECT min(id) FROM refgate_links)"));
    f.serve();
    f.click({"/go/alpha", "/go/beta", "/go/search", "/go/search?src=news"});
    std::string year = "/api/v1/stats/top?limit=100&from=" + f.day(364) + "&to=" + f.today;
    auto before = f.get(year).body;

    // The flush rolls up the first link's clicks only; its upkeep builds the rest from the base
    // table.
    f.flush();
    CHECK(f.complete());
    f.check_rollups();
    CHECK(f.get(year).body == before);

    // Counts written by hand (or by a release without roll-ups): answered from the base table
    // until the next flush's upkeep has built the roll-ups again.
    f.db.exec("UPDATE refgate_click_counts SET human = human + 5 WHERE link_id = " +
              f.id("search") + " AND day = current_date - 1 AND channel = 'direct'");
    CHECK_FALSE(f.complete());
    CHECK(f.run({"rollups", "check"}).exit_code == 1);
    auto updated = f.get(year).body;
    CHECK(updated != before);
    // The service's own flusher builds them again, and says so in a metric.
    f.serve("200");
    std::string metrics;
    for (auto deadline = std::chrono::steady_clock::now() + 15s;
         metrics.find("\nrefgate_stats_rollups_complete 1") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(100ms))
        metrics = http_get(f.service->admin_port(), "/metrics").body;
    CHECK(metrics.find("\nrefgate_stats_rollups_complete 1") != std::string::npos);
    CHECK(f.complete());
    f.check_rollups();
    CHECK(f.get(year).body == updated);
}

TEST_CASE(
    "the flush keeps no month sum of the current month, and months that have ended are closed into "
    "month sums by the upkeep, and the answers stay the same",
    "[stats][pg][redis]") {
    Fixture f;
    f.db.exec(counts_sql(420));
    f.migrate();
    REQUIRE(f.complete());
    std::string this_month =
        f.db.scalar("SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date::text");
    CHECK(f.db.scalar("SELECT months_through::text FROM refgate_rollup_state") == this_month);
    auto months_from_current = [&] {
        return f.db.scalar(
            "SELECT count(*) FROM refgate_rollup_link_months WHERE month >= (SELECT "
            "months_through FROM refgate_rollup_state)");
    };
    CHECK(months_from_current() == "0");
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_rollup_link_months") != "0");
    f.serve();
    f.click({"/go/alpha", "/go/search?src=news"});
    f.flush();
    CHECK(months_from_current() == "0");
    f.check_rollups();

    // As after three month ends that no upkeep saw: the answers read those months by day.
    f.db.exec(
        "UPDATE refgate_rollup_state SET months_through = months_through - interval '3 months'; "
        "DELETE FROM refgate_rollup_link_months WHERE month >= (SELECT months_through FROM "
        "refgate_rollup_state)");
    f.check_rollups();
    check_same_answers(f);
    auto year = f.get("/api/v1/stats/top?limit=100&from=" + f.day(364) + "&to=" + f.today).body;

    // The flushes' upkeep closes them, month by month (for at most a second a flush).
    f.click({"/go/beta"});
    auto months_through = [&] {
        return f.db.scalar("SELECT months_through::text FROM refgate_rollup_state");
    };
    for (int i = 0; i < 10 && months_through() != this_month; ++i) f.flush();
    CHECK(months_through() == this_month);
    CHECK(f.db.scalar("SELECT months_closed_through FROM refgate_rollup_state") == "-1");
    CHECK(f.db.scalar("SELECT count(DISTINCT month) FROM refgate_rollup_link_months WHERE month >= "
                      "date_trunc('month', now() AT TIME ZONE 'UTC') - interval '3 months'") ==
          "3");
    CHECK(months_from_current() == "0");
    f.check_rollups();
    check_same_answers(f);
    auto beta_year = f.get("/api/v1/stats/top?limit=100&from=" + f.day(364) + "&to=" + f.today);
    CHECK(beta_year.body != year);
}

TEST_CASE(
    "the flush writes no link days of the open day, the upkeep closes the days that have ended, "
    "and a late bucket of a closed day is rolled up once, and the answers stay the same",
    "[stats][pg][redis]") {
    Fixture f;
    f.db.exec(counts_sql(40));
    f.migrate();
    REQUIRE(f.complete());
    auto state = [&](const char* column) {
        return f.db.scalar(std::string("SELECT ") + column + "::text FROM refgate_rollup_state");
    };
    // Migration 026 starts at tomorrow: the flush wrote the link days of every day until then.
    CHECK(state("days_through") == f.day(-1));
    // As after two day ends that no upkeep saw: today and the two days before are open, their
    // link days are not read (made wrong here, so that reading or keeping them shows).
    f.db.exec(
        "UPDATE refgate_rollup_state SET days_through = current_date - 2, months_through = "
        "least(months_through, date_trunc('month', (current_date - 2)::timestamp)::date); "
        "DELETE FROM refgate_rollup_link_months WHERE month >= (SELECT months_through FROM "
        "refgate_rollup_state); "
        "UPDATE refgate_rollup_link_days SET human = human + 1000 WHERE day >= current_date - 2");
    f.check_rollups();
    f.serve();
    f.click({"/go/alpha", "/go/alpha", "/go/search?src=news"});
    check_same_answers(f);
    auto today_link_days = [&] {
        return f.db.scalar(
            "SELECT count(*) || ' ' || coalesce(sum(human), 0) FROM refgate_rollup_link_days "
            "WHERE day = current_date");
    };
    auto today_rows = today_link_days();

    // The flush adds today's counts and partner sums, no link days of today; its upkeep closes
    // the two days that have ended from the base table.
    for (int i = 0; i < 5 && state("days_through") != f.today; ++i) f.flush();
    CHECK(state("days_through") == f.today);
    CHECK(state("days_closed_through") == "-1");
    CHECK(today_link_days() == today_rows);
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_rollup_link_days WHERE day >= current_date - "
                      "2 AND day < current_date AND human >= 1000") == "0");
    f.check_rollups();
    check_same_answers(f);

    // A late bucket (of yesterday, a closed day): its link days in its own flush.
    auto now = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
    auto cli = [&](const std::string& args) {
        std::string out = f.redis.cli(args);
        while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
        return out;
    };
    auto late_bucket = [&](std::int64_t bucket, int alpha, int search) {
        std::string key = "refgate:bucket:" + std::to_string(bucket);
        REQUIRE(cli("HSET " + key + " '" + f.id("alpha") + "|" + f.day(1) + "|direct|human' " +
                    std::to_string(alpha) + " '" + f.id("search") + "|" + f.day(1) +
                    "|news|human' " + std::to_string(search)) == "2");
        REQUIRE(cli("SADD refgate:buckets " + std::to_string(bucket)) == "1");
    };
    auto alpha_yesterday = [&] {
        return std::stoll(f.db.scalar(
            "SELECT coalesce(sum(human), 0) FROM refgate_rollup_link_days WHERE link_id = " +
            f.id("alpha") + " AND day = current_date - 1"));
    };
    auto alpha_before = alpha_yesterday();
    late_bucket(now - 86'400, 5, 3);
    f.flush();
    CHECK(alpha_yesterday() == alpha_before + 5);
    f.check_rollups();
    check_same_answers(f);

    // While yesterday is being closed (alpha done): alpha's late rows go to its link days, the
    // other links' are closed from the base table afterwards; each count once.
    f.db.exec(
        "UPDATE refgate_rollup_state SET days_through = current_date - 1, "
        "days_closed_through = " +
        f.id("alpha"));
    late_bucket(now - 86'300, 4, 2);
    f.flush();
    CHECK(alpha_yesterday() == alpha_before + 9);
    CHECK(state("days_through") == f.today);
    f.check_rollups();
    check_same_answers(f);
}

TEST_CASE(
    "retention deletes the base rows of old days and the stats answers keep those days from the "
    "roll-ups",
    "[stats][pg][redis]") {
    Fixture f;
    f.db.exec(counts_sql(40));
    f.migrate();
    f.serve();
    std::string range = "?from=" + f.day(39) + "&to=" + f.today;
    auto link = f.get_json("/api/v1/stats/links/alpha" + range);
    auto partner = f.get("/api/v1/stats/partners/tailscale" + range).body;
    auto overview = f.get_json("/api/v1/stats/overview" + range);
    auto top = f.get("/api/v1/stats/top" + range).body;

    f.flush({{"REFGATE_STATS_RETENTION_DAYS", "7"}});
    CHECK(f.db.scalar("SELECT count(*) FROM refgate_click_counts WHERE day < current_date - 6") ==
          "0");
    CHECK(f.db.scalar("SELECT count(DISTINCT day) FROM refgate_click_counts") == "7");
    CHECK(f.db.scalar("SELECT min(day) FROM refgate_clicks_daily") == f.day(6));
    CHECK(f.db.scalar("SELECT min(day) FROM refgate_clicks_daily_totals") == f.day(39));
    f.check_rollups();

    // Every day keeps its classes, unique estimates and totals; only days older than the
    // retention lose their channels.
    CHECK(f.get("/api/v1/stats/partners/tailscale" + range).body == partner);
    CHECK(f.get("/api/v1/stats/top" + range).body == top);
    auto strip_channels = [](Json j, std::size_t old_days) {
        for (std::size_t i = 0; i < old_days; ++i)
            j["days"][i]["human_by_channel"] = Json::object();
        j["totals"].erase("human_by_channel");
        return j;
    };
    auto link_after = f.get_json("/api/v1/stats/links/alpha" + range);
    CHECK(link_after["days"][32]["human_by_channel"].empty());
    CHECK_FALSE(link["days"][32]["human_by_channel"].empty());
    CHECK(link_after["days"][33]["human_by_channel"] == link["days"][33]["human_by_channel"]);
    CHECK(strip_channels(link_after, 33) == strip_channels(link, 33));
    CHECK(strip_channels(f.get_json("/api/v1/stats/overview" + range), 33) ==
          strip_channels(overview, 33));
}

}  // namespace rollups_test
