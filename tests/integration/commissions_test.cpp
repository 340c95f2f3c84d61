// Commissions in (issue 43) through the refgate binary and a real PostgreSQL: the CLI import, the
// API import (CSV and JSON), the public postback, their history, and what they leave behind.

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "earnings_fixture.hpp"
#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace commissions_test {

using namespace refgate::test;
using Json = nlohmann::json;

namespace {

constexpr const char* kHeader = "order_id,subid,tracking_id,status,amount,currency,occurred_at\n";

// The data set imported (earnings_fixture.hpp).
struct Setup : EarningsData {
    Setup() { REQUIRE(imported); }
};

std::string write_file(const TempDir& dir, const std::string& name, const std::string& text) {
    std::string path = dir.file(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

CommandResult import_cli(const std::string& url, const std::string& path, bool dry_run = false) {
    std::vector<std::string> args{"commissions", "import", "--partner", "impact-co", path};
    if (dry_run) args.push_back("--dry-run");
    return run_refgate(args, {{"REFGATE_DATABASE_URL", url}});
}

// The log line of the batcher's test seam when `n` postbacks are queued.
std::string queued_line(int n) {
    return "\"msg\":\"postback_queued\",\"waiting\":" + std::to_string(n);
}

// A postback sent from a thread of its own: the status it was answered with.
std::future<int> postback_async(int port, const std::string& query, const std::string& secret) {
    return std::async(std::launch::async, [port, query, secret] {
        return http_get(port, "/postback/impact-co?" + query + "&secret=" + secret).status;
    });
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("refgate commissions import records a CSV once, resolving link and channel",
          "[commissions][pg]") {
    Setup s;
    TempDir dir;
    std::string csv = std::string(kHeader) + "ORD-1," + s.token("shop-pro", "direct") +
                      ",,pending,12.50,EUR,2026-11-29T16:00:00Z\n" +
                      "ORD-2,,picks-nl,approved,30,USD,2026-11-30T08:15:00+01:00\n";
    auto path = write_file(dir, "commissions.csv", csv);

    auto dry = import_cli(s.db.url(), path, true);
    INFO(dry.out << dry.err);
    REQUIRE(dry.exit_code == 0);
    CHECK(dry.out.find("2 created, 0 updated, 0 unchanged") != std::string::npos);
    CHECK(dry.out.find("dry run") != std::string::npos);
    CHECK(s.count("refgate_commissions") == "0");

    auto first = import_cli(s.db.url(), path);
    INFO(first.out << first.err);
    REQUIRE(first.exit_code == 0);
    CHECK(first.out.find("2 created, 0 updated, 0 unchanged (0 unattributed)") !=
          std::string::npos);
    CHECK(s.db.scalar("SELECT l.slug || ' ' || c.channel || ' ' || c.amount || ' ' || c.currency "
                      "FROM refgate_commissions c JOIN refgate_links l ON l.id = c.link_id "
                      "WHERE order_id = 'ORD-1'") == "shop-pro direct 12.50 EUR");
    // A tracking id names the channel whose code it is; no link.
    CHECK(s.db.scalar("SELECT coalesce(link_id::text, 'none') || ' ' || channel || ' ' || "
                      "to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') FROM "
                      "refgate_commissions WHERE order_id = 'ORD-2'") ==
          "none newsletter 2026-11-30 07:15");
    CHECK(s.count("refgate_commission_history") == "2");

    // The same file again: nothing new, nothing written.
    auto updated_at = s.db.scalar("SELECT max(updated_at) FROM refgate_commissions");
    auto again = import_cli(s.db.url(), path);
    REQUIRE(again.exit_code == 0);
    CHECK(again.out.find("0 created, 0 updated, 2 unchanged") != std::string::npos);
    CHECK(s.count("refgate_commission_history") == "2");
    CHECK(s.db.scalar("SELECT max(updated_at) FROM refgate_commissions") == updated_at);
}

TEST_CASE("a status change and a reversal update the commission and keep every step",
          "[commissions][pg]") {
    Setup s;
    TempDir dir;
    std::string token = s.token("shop", "direct");
    auto step = [&](const std::string& status, const std::string& amount) {
        auto path = write_file(dir, status + ".csv",
                               std::string(kHeader) + "ORD-7," + token + ",," + status + "," +
                                   amount + ",EUR,2026-11-29T16:00:00Z\n");
        auto r = import_cli(s.db.url(), path);
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
        return r.out;
    };
    CHECK(step("pending", "40.00").find("1 created") != std::string::npos);
    CHECK(step("approved", "35.00").find("1 updated") != std::string::npos);
    // 35 and 35.0 are the same amount: nothing new.
    CHECK(step("approved", "35.0").find("1 unchanged") != std::string::npos);
    CHECK(step("reversed", "35.00").find("1 updated") != std::string::npos);
    CHECK(s.db.scalar("SELECT status || ' ' || amount FROM refgate_commissions") ==
          "reversed 35.00");
    CHECK(s.db.scalar("SELECT string_agg(status || ' ' || amount || ' ' || source, ', ' ORDER BY "
                      "id) FROM refgate_commission_history") ==
          "pending 40.00 import, approved 35.00 import, reversed 35.00 import");
}

TEST_CASE("commissions from hostile CSV: every bad row named by line, nothing recorded",
          "[commissions][pg]") {
    Setup s;
    TempDir dir;
    std::string huge(100'000, 'A');
    std::string csv =
        "\xEF\xBB\xBF"
        "order_id,email,subid,tracking_id,status,amount,currency,occurred_at\n"
        "ORD-1,ada@example.org,zzzz-unknown,,pending,1.00,EUR,2026-11-29T16:00:00Z\n"
        "\"=HYPERLINK(\"\"http://evil.example\"\")\",x,,picks-nl,pending,1,EUR,"
        "2026-11-29T16:00:00Z\n"
        "ORD-3,x,," +
        huge +
        ",paid,1,EUR,2026-11-29T16:00:00Z\n"
        "ORD-4,\"a,b\nc\",,picks-nl,paid,1e3,EUR,2026-11-29T16:00:00Z\n"
        "ORD-5,x,,picks-nl,paid,1,eur,yesterday\n"
        "ORD-6,x,,picks-nl,paid,1,EUR\n";
    auto r = import_cli(s.db.url(), write_file(dir, "hostile.csv", csv));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("line 3: order_id:") != std::string::npos);
    CHECK(r.err.find("line 4: tracking_id:") != std::string::npos);
    CHECK(r.err.find("line 5: amount:") != std::string::npos);  // the quoted line break
    CHECK(r.err.find("line 7: currency:") != std::string::npos);
    CHECK(r.err.find("line 7: occurred_at:") != std::string::npos);
    CHECK(r.err.find("line 8: has 7 fields; the header has 8") != std::string::npos);
    CHECK(r.err.find("nothing applied") != std::string::npos);
    // No value is echoed back: not the formula, not the huge field, not the e-mail.
    CHECK(r.err.find("HYPERLINK") == std::string::npos);
    CHECK(r.err.find(huge.substr(0, 100)) == std::string::npos);
    CHECK((r.out + r.err).find("ada@example.org") == std::string::npos);
    CHECK(s.count("refgate_commissions") == "0");
    CHECK(s.count("refgate_commission_history") == "0");
}

TEST_CASE("the API imports commissions as CSV and JSON, unknown sub-IDs kept, currencies apart",
          "[commissions][pg]") {
    Setup s;
    std::string editor = create_api_token(s.db.url(), "eddie", "editor");
    std::string viewer = create_api_token(s.db.url(), "vera", "viewer");
    ServiceProcess service{{.database_url = s.db.url()}};
    const std::string path = "/api/v1/partners/impact-co/commissions";

    std::string csv = std::string(kHeader) + "A-1," + s.token("shop", "direct") +
                      ",,approved,10.00,EUR,2026-11-29T10:00:00Z\n"
                      "A-2,unknowntoken123,,pending,7.25,GBP,2026-11-29T11:00:00Z\n";
    auto denied =
        http_request(service.admin_port(), "POST", path, with_token(viewer, "text/csv"), csv);
    CHECK(denied.status == 403);

    auto r = http_request(service.admin_port(), "POST", path, with_token(editor, "text/csv"), csv);
    INFO(r.body);
    REQUIRE(r.status == 200);
    auto body = Json::parse(r.body);
    CHECK(body["created"] == 2);
    CHECK(body["unattributed"] == 1);
    CHECK(body["applied"] == true);
    CHECK(s.db.scalar("SELECT coalesce(link_id::text, 'unattributed') FROM refgate_commissions "
                      "WHERE order_id = 'A-2'") == "unattributed");

    Json items = {{"items",
                   {{{"order_id", "A-3"},
                     {"tracking_id", "picks-nl"},
                     {"status", "paid"},
                     {"amount", "99.999"},
                     {"currency", "JPY"},
                     {"occurred_at", "2026-11-29T12:00:00Z"},
                     {"customer_email", "someone@example.org"}},
                    {{"order_id", "A-1"},
                     {"subid", s.token("shop", "direct")},
                     {"status", "paid"},
                     {"amount", "10.00"},
                     {"currency", "EUR"},
                     {"occurred_at", "2026-11-29T10:00:00Z"}}}}};
    r = http_request(service.admin_port(), "POST", path, with_token(editor, "application/json"),
                     items.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    body = Json::parse(r.body);
    CHECK(body["created"] == 1);
    CHECK(body["updated"] == 1);
    // Each currency its own: nothing is converted or added across them.
    CHECK(s.db.scalar("SELECT string_agg(currency || '=' || total, ',' ORDER BY currency) FROM "
                      "(SELECT currency, sum(amount) AS total FROM refgate_commissions GROUP BY "
                      "currency) t") == "EUR=10.00,GBP=7.25,JPY=99.999");

    // A JSON number is not an exact amount; one bad item refuses the whole request.
    Json bad = Json::array({{{"order_id", "A-4"},
                             {"tracking_id", "picks-nl"},
                             {"status", "paid"},
                             {"amount", 5.1},
                             {"currency", "EUR"},
                             {"occurred_at", "2026-11-29T12:00:00Z"}},
                            {{"order_id", "A-5"},
                             {"tracking_id", "picks-nl"},
                             {"status", "paid"},
                             {"amount", "5"},
                             {"currency", "EUR"},
                             {"occurred_at", "2026-11-29T12:00:00Z"}}});
    r = http_request(service.admin_port(), "POST", path, with_token(editor, "application/json"),
                     bad.dump());
    INFO(r.body);
    CHECK(r.status == 422);
    body = Json::parse(r.body);
    REQUIRE(body["refused"].size() == 1);
    CHECK(body["refused"][0]["line"] == 1);
    CHECK(body["refused"][0]["field"] == "amount");
    CHECK(body["applied"] == false);
    CHECK(s.count("refgate_commissions") == "3");

    auto unknown = http_request(service.admin_port(), "POST", "/api/v1/partners/nobody/commissions",
                                with_token(editor, "text/csv"), csv);
    CHECK(unknown.status == 404);
}

TEST_CASE("named formats: Impact's Actions by the CLI, Awin's transactions by the API",
          "[commissions][pg]") {
    Setup s;
    const std::string data = std::string(REFGATE_SOURCE_DIR) + "/tests/data/commissions/";
    auto bad = run_refgate({"commissions", "import", "--partner", "impact-co", "--format", "cj",
                            data + "impact_actions.csv"},
                           {{"REFGATE_DATABASE_URL", s.db.url()}});
    CHECK(bad.exit_code == 2);
    auto impact = run_refgate({"commissions", "import", "--partner", "impact-co", "--format",
                               "impact", data + "impact_actions.csv"},
                              {{"REFGATE_DATABASE_URL", s.db.url()}});
    INFO(impact.err);
    REQUIRE(impact.exit_code == 0);
    CHECK(impact.out.find("3 created") != std::string::npos);
    CHECK(s.db.scalar("SELECT string_agg(status || ' ' || amount || ' ' || currency || ' ' || "
                      "to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), '; ' ORDER "
                      "BY order_id) FROM refgate_commissions") ==
          "approved 0.88 USD 2024-09-10 17:42; pending 4.50 USD 2024-09-11 06:30; "
          "reversed 1.20 USD 2024-09-11 15:00");
    // Refgate's own format does not take Impact's header: nothing more is recorded.
    auto own = run_refgate(
        {"commissions", "import", "--partner", "impact-co", data + "impact_actions.csv"},
        {{"REFGATE_DATABASE_URL", s.db.url()}});
    CHECK(own.exit_code == 1);
    CHECK(s.count("refgate_commissions") == "3");

    std::string editor = create_api_token(s.db.url(), "eddie", "editor");
    ServiceProcess service{{.database_url = s.db.url()}};
    const std::string path = "/api/v1/partners/impact-co/commissions";
    auto awin = read_text(data + "awin_transactions.json");
    CHECK(http_request(service.admin_port(), "POST", path + "?format=awin",
                       with_token(editor, "text/csv"), awin)
              .status == 415);
    CHECK(http_request(service.admin_port(), "POST", path + "?format=zanox",
                       with_token(editor, "application/json"), awin)
              .status == 422);
    auto r = http_request(service.admin_port(), "POST", path + "?format=awin",
                          with_token(editor, "application/json"), awin);
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(Json::parse(r.body)["created"] == 4);
    CHECK(s.db.scalar("SELECT string_agg(status || ' ' || amount || ' ' || currency, '; ' ORDER BY "
                      "order_id) FROM refgate_commissions WHERE order_id LIKE '2596303%'") ==
          "pending 5.59 GBP; paid 12 EUR; reversed 3.1 EUR; approved 7.25 EUR");
    // The customer's parameters and IP hash of Awin's record are nowhere.
    CHECK(s.db.scalar("SELECT count(*) FROM refgate_commissions WHERE order_id || "
                      "coalesce(subid, '') LIKE '%ada@%'") == "0");
}

TEST_CASE("a commission postback records with the secret, 401 and 400 write nothing",
          "[commissions][pg]") {
    Setup s;
    std::string admin = create_api_token(s.db.url(), "ada", "admin");
    std::string editor = create_api_token(s.db.url(), "eddie", "editor");
    ServiceProcess service{{.database_url = s.db.url()}};
    const std::string secret_path = "/api/v1/partners/impact-co/postback-secret";

    CHECK(http_request(service.admin_port(), "POST", secret_path, with_token(editor)).status ==
          403);
    auto made = http_request(service.admin_port(), "POST", secret_path, with_token(admin));
    REQUIRE(made.status == 200);
    std::string secret = Json::parse(made.body)["secret"].get<std::string>();
    // Stored hashed only.
    CHECK(s.db.scalar("SELECT count(*) FROM refgate_postback_secrets WHERE secret_hash = "
                      "sha256(convert_to('" +
                      secret + "', 'UTF8'))") == "1");

    std::string params =
        "order_id=PB-1&subid=" + s.token("shop", "direct") +
        "&status=approved&amount=4.20&currency=USD&occurred_at=2026-11-29T10%3A00%3A00Z";
    auto good = http_get(service.port(), "/postback/impact-co?" + params + "&secret=" + secret);
    CHECK(good.status == 204);
    CHECK(s.count("refgate_commissions") == "1");
    CHECK(s.db.scalar("SELECT source FROM refgate_commission_history") == "postback");

    // The header works too, and POST; a repeat with nothing new adds no history.
    auto repeat = http_request(service.port(), "POST", "/postback/impact-co?" + params,
                               {{"X-Refgate-Secret", secret}});
    CHECK(repeat.status == 204);
    CHECK(s.count("refgate_commission_history") == "1");

    // The public listener takes no request body: parameters sent as a form are refused before
    // any handler runs (413), and nothing is written, even with the right secret.
    auto form = http_request(
        service.port(), "POST", "/postback/impact-co",
        {{"X-Refgate-Secret", secret}, {"Content-Type", "application/x-www-form-urlencoded"}},
        "order_id=PB-9&tracking_id=picks-nl&status=approved&amount=1&currency=USD&"
        "occurred_at=2026-11-29T10%3A00%3A00Z");
    CHECK(form.status == 413);
    CHECK(s.count("refgate_commissions") == "1");

    // A wrong secret, an unknown partner, no secret: 401 with nothing to read, nothing written.
    for (const std::string& target :
         {"/postback/impact-co?" + params + "&secret=wrong",
          "/postback/nobody?" + params + "&secret=" + secret, "/postback/impact-co?" + params}) {
        auto refused = http_get(service.port(), target);
        INFO(target);
        CHECK(refused.status == 401);
        CHECK(refused.body.empty());
    }
    // Bad input: 400 naming the parameter, nothing written.
    auto bad = http_get(service.port(),
                        "/postback/impact-co?order_id=PB-2&tracking_id=picks-nl&"
                        "status=approved&amount=4%2C20&currency=USD&"
                        "occurred_at=2026-11-29T10%3A00%3A00Z&secret=" +
                            secret);
    CHECK(bad.status == 400);
    CHECK(bad.body.find("amount") != std::string::npos);
    CHECK(s.count("refgate_commissions") == "1");
    CHECK(s.count("refgate_commission_history") == "1");

    // A new secret: the old one stops working.
    auto rotated = http_request(service.admin_port(), "POST", secret_path, with_token(admin));
    REQUIRE(rotated.status == 200);
    CHECK(http_get(service.port(), "/postback/impact-co?" + params + "&secret=" + secret).status ==
          401);
    std::string fresh = Json::parse(rotated.body)["secret"].get<std::string>();
    CHECK(http_get(service.port(), "/postback/impact-co?" + params + "&secret=" + fresh).status ==
          204);
}

TEST_CASE("a postback secret is kept for the cache lifetime: one set elsewhere applies within it",
          "[commissions][pg]") {
    Setup s;
    std::string admin = create_api_token(s.db.url(), "ada", "admin");
    ServiceProcess service{
        {.database_url = s.db.url(), .env = {{"REFGATE_AUTH_CACHE_SECONDS", "4"}}}};
    auto made = http_request(service.admin_port(), "POST",
                             "/api/v1/partners/impact-co/postback-secret", with_token(admin));
    REQUIRE(made.status == 200);
    std::string old_secret = Json::parse(made.body)["secret"].get<std::string>();
    int order = 0;
    auto postback = [&](const std::string& secret) {
        return http_get(service.port(), "/postback/impact-co?order_id=PK-" +
                                            std::to_string(++order) +
                                            "&tracking_id=picks-nl&status=pending&amount=1.00&"
                                            "currency=USD&occurred_at=2026-11-29T10%3A00%3A00Z&"
                                            "secret=" +
                                            secret)
            .status;
    };
    REQUIRE(postback(old_secret) == 204);  // read from the database, and kept from now on

    // Another instance (or the CLI) sets a new secret: this one still takes the old secret for
    // at most its 4 s, then reads the new one and refuses the old.
    const std::string new_secret = "rg_" + std::string(43, 'N');
    auto changed_at = std::chrono::steady_clock::now();
    s.db.exec("UPDATE refgate_postback_secrets SET secret_hash = sha256(convert_to('" + new_secret +
              "', 'UTF8'))");
    CHECK(postback(old_secret) == 204);
    int status = 204;
    while (status == 204 &&
           std::chrono::steady_clock::now() - changed_at < std::chrono::seconds{8}) {
        std::this_thread::sleep_for(std::chrono::milliseconds{100});
        status = postback(old_secret);
    }
    CHECK(status == 401);
    CHECK(std::chrono::steady_clock::now() - changed_at < std::chrono::seconds{6});
    CHECK(postback(new_secret) == 204);
}

namespace {

// The value of a sample line `series` (name and labels) in a /metrics text; -1 when absent.
double metric(int admin_port, const std::string& series) {
    auto metrics = http_get(admin_port, "/metrics").body;
    auto at = metrics.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(metrics.substr(at + series.size() + 2));
}

}  // namespace

TEST_CASE(
    "a postback moves its connection to the blocking lane: postbacks and redirects on it, one "
    "by one or pipelined, are answered in order",
    "[commissions][pg][http]") {
    Setup s;
    std::string admin = create_api_token(s.db.url(), "ada", "admin");
    ServiceProcess service{{.database_url = s.db.url()}};
    auto made = http_request(service.admin_port(), "POST",
                             "/api/v1/partners/impact-co/postback-secret", with_token(admin));
    REQUIRE(made.status == 200);  // a blocking admin call: the admin listener's lane works
    std::string secret = Json::parse(made.body)["secret"].get<std::string>();
    const std::string public_moves =
        "refgate_http_handed_off_connections_total{listener=\"public\"}";
    CHECK(metric(service.admin_port(),
                 "refgate_http_handed_off_connections_total{listener="
                 "\"admin\"}") >= 1);
    const double moved_before = metric(service.admin_port(), public_moves);
    CHECK(moved_before == 0);

    int order = 0;
    auto postback = [&] {
        return "GET /postback/impact-co?order_id=LANE-" + std::to_string(++order) +
               "&tracking_id=picks-nl&status=pending&amount=1&currency=EUR&occurred_at=2026-11-"
               "29T10%3A00%3A00Z&secret=" +
               secret + " HTTP/1.1\r\nHost: t\r\n\r\n";
    };
    const std::string redirect = "GET /go/shop HTTP/1.1\r\nHost: t\r\n\r\n";
    auto status = [](RawConnection& c) {
        return c.read_response(5s).value_or(HttpResponse{}).status;
    };

    // One keep-alive connection: a redirect on its I/O thread, then a postback (the connection
    // moves), then a redirect and a postback on the lane.
    RawConnection one(service.port());
    REQUIRE(one.send(redirect));
    CHECK(status(one) == 302);
    REQUIRE(one.send(postback()));
    CHECK(status(one) == 204);
    REQUIRE(one.send(redirect));
    CHECK(status(one) == 302);
    REQUIRE(one.send(postback()));
    CHECK(status(one) == 204);

    // A postback and a redirect in one send: the bytes after the postback move with it.
    RawConnection two(service.port());
    REQUIRE(two.send(postback() + redirect));
    CHECK(status(two) == 204);
    CHECK(status(two) == 302);

    // A redirect answered before the move: its answer moves too, and goes out first.
    RawConnection three(service.port());
    REQUIRE(three.send(redirect + postback() + redirect));
    CHECK(status(three) == 302);
    CHECK(status(three) == 204);
    CHECK(status(three) == 302);
    CHECK(three.pending().empty());

    // Each connection moved once, at its first postback; the redirect-only one never.
    RawConnection redirects_only(service.port());
    REQUIRE(redirects_only.send(redirect + redirect));
    CHECK(status(redirects_only) == 302);
    CHECK(status(redirects_only) == 302);
    CHECK(metric(service.admin_port(), public_moves) == moved_before + 3);
    CHECK(s.count("refgate_commissions") == std::to_string(order));
}

TEST_CASE("commission postbacks past the partner's rate are answered 429", "[commissions][pg]") {
    Setup s;
    std::string admin = create_api_token(s.db.url(), "ada", "admin");
    ServiceProcess service{{.database_url = s.db.url(), .env = {{"REFGATE_POSTBACK_RATE", "1"}}}};
    auto made = http_request(service.admin_port(), "POST",
                             "/api/v1/partners/impact-co/postback-secret", with_token(admin));
    REQUIRE(made.status == 200);
    std::string secret = Json::parse(made.body)["secret"].get<std::string>();
    int limited = 0;
    for (int i = 0; i < 6; ++i) {
        auto r = http_get(service.port(), "/postback/impact-co?order_id=R-" + std::to_string(i) +
                                              "&tracking_id=picks-nl&status=pending&amount=1&"
                                              "currency=EUR&occurred_at=2026-11-29T10%3A00%3A00Z&"
                                              "secret=" +
                                              secret);
        if (r.status == 429) ++limited;
    }
    // A burst of two, then about one a second: most of six at once are refused.
    CHECK(limited >= 3);
    CHECK(std::stoi(s.count("refgate_commissions")) == 6 - limited);
}

TEST_CASE("guessing a partner's postback secret is rate-limited too: 429 before the secret counts",
          "[commissions][pg]") {
    Setup s;
    std::string admin = create_api_token(s.db.url(), "ada", "admin");
    ServiceProcess service{{.database_url = s.db.url(), .env = {{"REFGATE_POSTBACK_RATE", "1"}}}};
    REQUIRE(http_request(service.admin_port(), "POST", "/api/v1/partners/impact-co/postback-secret",
                         with_token(admin))
                .status == 200);
    int limited = 0;
    int unauthorized = 0;
    for (int i = 0; i < 8; ++i) {
        auto r = http_get(service.port(), "/postback/impact-co?order_id=G-" + std::to_string(i) +
                                              "&tracking_id=picks-nl&status=pending&amount=1&"
                                              "currency=EUR&occurred_at=2026-11-29T10%3A00%3A00Z&"
                                              "secret=guess" +
                                              std::to_string(i));
        if (r.status == 429) ++limited;
        if (r.status == 401) ++unauthorized;
    }
    // A burst of two wrong guesses is answered 401; the rest wait for the partner's rate, whatever
    // their secret, so a guesser learns nothing faster than the rate allows.
    CHECK(unauthorized <= 3);
    CHECK(limited >= 5);
    CHECK(s.count("refgate_commissions") == "0");
}

TEST_CASE("privacy canary: extra fields of commissions are nowhere afterwards",
          "[commissions][pg]") {
    Setup s;
    PrivateRedis redis;
    std::string admin = create_api_token(s.db.url(), "ada", "admin");
    // As sent and as they would read once decoded.
    const std::vector<std::string> probes{"canary.reader@example.org",
                                          "canary.reader%40example.org", "203.0.113.77",
                                          "Ada Canary", "Ada%20Canary"};
    std::string log;
    {
        ServiceProcess service{{.database_url = s.db.url(),
                                .redis_url = redis.url(),
                                .env = {{"REFGATE_LOG_LEVEL", "debug"}}}};
        auto made = http_request(service.admin_port(), "POST",
                                 "/api/v1/partners/impact-co/postback-secret", with_token(admin));
        REQUIRE(made.status == 200);
        std::string secret = Json::parse(made.body)["secret"].get<std::string>();
        auto pb = http_get(service.port(),
                           "/postback/impact-co?order_id=PRIV-1&tracking_id=picks-nl&status="
                           "pending&amount=3&currency=EUR&occurred_at=2026-11-29T10%3A00%3A00Z&"
                           "email=canary.reader%40example.org&ip=203.0.113.77&name=Ada%20Canary&"
                           "secret=" +
                               secret);
        CHECK(pb.status == 204);
        // Also with a bad parameter: its 400 and the log say nothing of the rest.
        auto bad = http_get(service.port(),
                            "/postback/impact-co?order_id=PRIV-2&tracking_id=picks-nl&status=x&"
                            "amount=3&currency=EUR&occurred_at=2026-11-29T10%3A00%3A00Z&"
                            "email=canary.reader%40example.org&secret=" +
                                secret);
        CHECK(bad.status == 400);
        std::string csv =
            "order_id,subid,tracking_id,status,amount,currency,occurred_at,email,ip,name\n"
            "PRIV-3,,picks-nl,approved,5,EUR,2026-11-29T10:00:00Z,canary.reader@example.org,"
            "203.0.113.77,Ada Canary\n";
        auto imported =
            http_request(service.admin_port(), "POST", "/api/v1/partners/impact-co/commissions",
                         with_token(admin, "text/csv"), csv);
        CHECK(imported.status == 200);
        for (const auto& p : probes) CHECK(imported.body.find(p) == std::string::npos);
        service.stop(SIGTERM);
        log = service.log();
    }
    REQUIRE(s.count("refgate_commissions") == "2");

    TempDir dir;
    std::string dump_file = dir.file("dump.sql");
    std::string out;
    REQUIRE(run_shell(require_env("REFGATE_TEST_PG_BINDIR") + "/pg_dump '" + s.db.url() + "' > '" +
                          dump_file + "'",
                      out) == 0);
    std::string dump = read_text(dump_file);
    REQUIRE(dump.find("PRIV-3") != std::string::npos);

    std::string redis_dump;
    std::istringstream keys(redis.cli("--scan"));
    std::string key;
    while (std::getline(keys, key)) {
        if (key.empty()) continue;
        redis_dump += key + "\n" + redis.cli("DUMP " + key) + "\n";
    }
    REQUIRE(!log.empty());
    for (const auto& probe : probes) {
        INFO(probe);
        CHECK(dump.find(probe) == std::string::npos);
        CHECK(redis_dump.find(probe) == std::string::npos);
        CHECK(log.find(probe) == std::string::npos);
    }
}

// Postbacks that arrive together are committed in one transaction (PostbackBatcher). The
// batcher's test seam (REFGATE_TEST_POSTBACK_GATHER, test builds only) holds the batch until the
// postbacks the test sends are all queued, each one's turn seen in the log (postback_queued).
TEST_CASE(
    "two postbacks for one order in one batch: both 204, one commission, both states in "
    "order, counted once",
    "[commissions][pg]") {
    Setup s;
    std::string admin = create_api_token(s.db.url(), "ada", "admin");
    std::string viewer = create_api_token(s.db.url(), "vic", "viewer");
    ServiceProcess service{
        {.database_url = s.db.url(), .env = {{"REFGATE_TEST_POSTBACK_GATHER", "2"}}}};
    auto made = http_request(service.admin_port(), "POST",
                             "/api/v1/partners/impact-co/postback-secret", with_token(admin));
    REQUIRE(made.status == 200);
    std::string secret = Json::parse(made.body)["secret"].get<std::string>();
    std::string order = "order_id=DUP-1&subid=" + s.token("shop", "direct") +
                        "&currency=EUR&occurred_at=2026-11-29T10%3A00%3A00Z";

    // The first leads the batch and waits there for the second, which follows it in the queue.
    auto pending = postback_async(service.port(), order + "&status=pending&amount=40.00", secret);
    REQUIRE(service.wait_for_log(queued_line(1)));
    auto approved = postback_async(service.port(), order + "&status=approved&amount=35.00", secret);
    REQUIRE(pending.wait_for(20s) == std::future_status::ready);
    REQUIRE(approved.wait_for(20s) == std::future_status::ready);
    CHECK(pending.get() == 204);
    CHECK(approved.get() == 204);
    CHECK(service.log().find(queued_line(2)) != std::string::npos);

    // One commission, as the later one left it; its history holds both, in the order they came.
    CHECK(s.count("refgate_commissions") == "1");
    CHECK(s.db.scalar("SELECT status || ' ' || amount FROM refgate_commissions") ==
          "approved 35.00");
    CHECK(s.db.scalar("SELECT string_agg(status || ' ' || amount || ' ' || source, ', ' ORDER BY "
                      "id) FROM refgate_commission_history") ==
          "pending 40.00 postback, approved 35.00 postback");
    // Both written by one transaction (now() is the transaction's start).
    CHECK(s.db.scalar("SELECT count(DISTINCT seen_at) FROM refgate_commission_history") == "1");
    // Counted once: one approved conversion, nothing pending.
    auto r = http_get(service.admin_port(),
                      "/api/v1/stats/earnings?from=2026-11-29&to=2026-11-29&group=link",
                      with_token(viewer));
    INFO(r.body);
    REQUIRE(r.status == 200);
    // Over every item: one conversion in all, approved, on the link the token names.
    std::map<std::string, int> conversions;
    Json shop;
    const Json answer = Json::parse(r.body);
    for (const auto& item : answer["items"]) {
        for (const auto& c : item["conversions"].items())
            conversions[c.key()] += c.value().get<int>();
        if (item["link"] == "shop") shop = item;
    }
    CHECK(conversions == std::map<std::string, int>{
                             {"pending", 0}, {"approved", 1}, {"reversed", 0}, {"paid", 0}});
    REQUIRE(shop.is_object());
    CHECK(shop["amount"]["EUR"]["approved"] == "35.00");
    CHECK(shop["amount"]["EUR"]["pending"] == "0");
}

TEST_CASE("a postback PostgreSQL refuses fails alone: the others of its batch are committed",
          "[commissions][pg]") {
    Setup s;
    std::string admin = create_api_token(s.db.url(), "ada", "admin");
    // A rule of the database's own that this one order breaks; the service's checks pass it.
    s.db.exec(
        "ALTER TABLE refgate_commissions ADD CONSTRAINT test_refuses_one CHECK (order_id "
        "<> 'BAT-BAD')");
    ServiceProcess service{
        {.database_url = s.db.url(), .env = {{"REFGATE_TEST_POSTBACK_GATHER", "3"}}}};
    auto made = http_request(service.admin_port(), "POST",
                             "/api/v1/partners/impact-co/postback-secret", with_token(admin));
    REQUIRE(made.status == 200);
    std::string secret = Json::parse(made.body)["secret"].get<std::string>();
    auto query = [](const std::string& order) {
        return "order_id=" + order +
               "&tracking_id=picks-nl&status=approved&amount=2.50&currency=EUR&"
               "occurred_at=2026-11-29T10%3A00%3A00Z";
    };

    auto first = postback_async(service.port(), query("BAT-1"), secret);
    REQUIRE(service.wait_for_log(queued_line(1)));
    auto bad = postback_async(service.port(), query("BAT-BAD"), secret);
    auto second = postback_async(service.port(), query("BAT-2"), secret);
    for (auto* f : {&first, &bad, &second}) REQUIRE(f->wait_for(20s) == std::future_status::ready);
    // All three were in one batch, which the database refused as a whole.
    CHECK(service.log().find(queued_line(3)) != std::string::npos);
    CHECK(first.get() == 204);
    CHECK(second.get() == 204);
    CHECK(bad.get() == 500);
    CHECK(s.db.scalar("SELECT string_agg(order_id, ', ' ORDER BY order_id) FROM "
                      "refgate_commissions") == "BAT-1, BAT-2");
    CHECK(s.count("refgate_commission_history") == "2");
}

}  // namespace commissions_test
