// Placements (issue 42) end to end: the refgate binary, PostgreSQL and Redis. Sub-ID tokens and
// per-channel codes in every Location of a partner that has them, the same for every reader;
// the locking cases; readable tokens refused at save time when they could collide; the
// placements API and `refgate placements`.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "refgate/domain/placement.hpp"
#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace placements_test {

using namespace refgate::test;
using namespace std::chrono_literals;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

// Impact-like: sub-ID parameter subId1 and codes per channel; a French storefront with its own
// sub-ID parameter (CJ's sid) and code; a partner without placements.
const char* const kDocument = R"json({
  "partners": [
    {"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks42",
     "allowed_domains": ["tailscale.com"], "extra_params": {"utm_medium": "affiliate"},
     "subid_param": "subId1",
     "channel_codes": [{"channel": "newsletter", "ref_code": "picks-nl"},
                       {"channel": "blog-*", "ref_code": "picks-blog"}]},
    {"slug": "tailscale-fr", "name": "Tailscale FR", "ref_param": "aff", "ref_code": "fr42",
     "allowed_domains": ["tailscale.com"], "subid_param": "sid",
     "channel_codes": [{"channel": "newsletter", "ref_code": "fr-nl"}]},
    {"slug": "plain", "name": "Plain", "ref_param": "ref", "ref_code": "plain1",
     "allowed_domains": ["tailscale.com"]}
  ],
  "links": [
    {"slug": "tailscale", "partner": "tailscale",
     "destination": "https://tailscale.com/pricing?plan=pro#teams",
     "rules": [{"language": ["fr"], "partner": "tailscale-fr",
                "destination": "https://tailscale.com/fr?SID=stored"},
               {"language": ["de"], "split": [
                  {"weight": 1, "destination": "https://tailscale.com/de-a"},
                  {"weight": 1, "destination": "https://tailscale.com/de-b", "partner": "plain"}]}]},
    {"slug": "named", "partner": "tailscale",
     "destination": "https://tailscale.com/x?subid1=stored&a=1"},
    {"slug": "campaign", "partner": "tailscale", "destination": "https://tailscale.com/blog",
     "utm_passthrough": true}
  ]
})json";

std::string browser(int reader) {
    return "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128." +
           std::to_string(reader);
}

// Every value of parameter `name` (exact, case-sensitive) in the query of `location`.
std::vector<std::string> values_of(const std::string& location, const std::string& name) {
    std::string query = location.substr(0, location.find('#'));
    auto q = query.find('?');
    std::vector<std::string> out;
    if (q == std::string::npos) return out;
    query = query.substr(q + 1);
    std::size_t start = 0;
    while (start <= query.size()) {
        std::size_t end = std::min(query.find('&', start), query.size());
        std::string param = query.substr(start, end - start);
        auto eq = param.find('=');
        if (param.substr(0, eq) == name)
            out.push_back(eq == std::string::npos ? "" : param.substr(eq + 1));
        start = end + 1;
    }
    return out;
}

// How many parameters of the Location's query are named `name` in any case, however encoded
// ('%49' is 'I').
int spellings_of(const std::string& location, const std::string& name) {
    std::string query = location.substr(0, location.find('#'));
    auto q = query.find('?');
    if (q == std::string::npos) return 0;
    query = query.substr(q + 1);
    int n = 0;
    std::size_t start = 0;
    while (start <= query.size()) {
        std::size_t end = std::min(query.find_first_of("&;", start), query.size());
        std::string key = query.substr(start, end - start);
        key = key.substr(0, key.find('='));
        std::string decoded;
        for (std::size_t i = 0; i < key.size(); ++i) {
            if (key[i] == '%' && i + 2 < key.size() &&
                std::isxdigit(static_cast<unsigned char>(key[i + 1])) &&
                std::isxdigit(static_cast<unsigned char>(key[i + 2]))) {
                decoded.push_back(static_cast<char>(std::stoi(key.substr(i + 1, 2), nullptr, 16)));
                i += 2;
            } else {
                decoded.push_back(key[i]);
            }
        }
        if (decoded.size() == name.size() &&
            std::equal(decoded.begin(), decoded.end(), name.begin(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) ==
                       std::tolower(static_cast<unsigned char>(b));
            }))
            ++n;
        start = end + 1;
    }
    return n;
}

struct Fixture {
    TestDatabase db;
    PrivateRedis redis;
    std::string viewer = create_api_token(db.url(), "dashboards", "viewer");
    std::string editor = create_api_token(db.url(), "editors", "editor");
    bool imported = import_document(db.url(), kDocument);
    ServiceProcess service{{.database_url = db.url(),
                            .redis_url = redis.url(),
                            .env = {{"REFGATE_TRUSTED_PROXIES", "127.0.0.1"},
                                    {"REFGATE_FLUSH_INTERVAL_MS", "3600000"}}}};

    std::int64_t link_id(const std::string& slug) {
        pqxx::connection c(db.url());
        pqxx::work tx(c);
        return tx.exec_params1("SELECT id FROM refgate_links WHERE slug = $1", slug)[0]
            .as<std::int64_t>();
    }
    // The Location a reader (address, agent, language) gets for `target`.
    std::string location(const std::string& target, int reader = 0,
                         const std::string& language = "en-US,en;q=0.8") {
        auto r = http_get(service.port(), target,
                          {{"User-Agent", browser(reader)},
                           {"X-Forwarded-For", "203.0.113." + std::to_string(reader + 1)},
                           {"Accept-Language", language}});
        INFO(target << " -> " << r.status << " " << r.body);
        REQUIRE(r.status == 302);
        return r.header("Location");
    }
    HttpResponse api(const std::string& method, const std::string& target,
                     const std::string& body = {}, const std::string& token = {}) {
        Headers headers{{"Authorization", "Bearer " + (token.empty() ? viewer : token)}};
        if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
        if (method == "PATCH") headers.emplace_back("If-Match", "*");
        return http_request(service.admin_port(), method, target, headers, body);
    }
};

std::string opaque(std::int64_t id, const std::string& channel) {
    char out[refgate::domain::kMaxOpaqueToken];
    return std::string(out, refgate::domain::write_opaque_token(out, id, channel));
}

}  // namespace

TEST_CASE("every reader of a placement gets the same Location: its token and its channel's code",
          "[placements][redirect][pg]") {
    Fixture f;
    std::int64_t id = f.link_id("tailscale");
    // Two readers with different addresses, browsers and languages (both English: the default).
    std::string first = f.location("/go/tailscale?src=newsletter", 0, "en-US,en;q=0.8");
    std::string second = f.location("/go/tailscale?src=newsletter", 7, "en-GB");
    CHECK(first == second);
    CHECK(first ==
          "https://tailscale.com/pricing?plan=pro&ref=picks-nl&utm_medium=affiliate&subId1=" +
              opaque(id, "newsletter") + "#teams");
    // Per-channel codes: first match wins, prefixes included; any other channel keeps ref_code.
    CHECK(values_of(f.location("/go/tailscale?src=blog-tech"), "ref") ==
          std::vector<std::string>{"picks-blog"});
    CHECK(values_of(f.location("/go/tailscale?src=podcast"), "ref") ==
          std::vector<std::string>{"picks42"});
    CHECK(f.location("/go/tailscale") ==
          "https://tailscale.com/pricing?plan=pro&ref=picks42&utm_medium=affiliate&subId1=" +
              opaque(id, "direct") + "#teams");
    // An identifier in src is no channel: "other", the same token for every such reader.
    CHECK(values_of(f.location("/go/tailscale?src=reader%40example.com", 1), "subId1") ==
          std::vector<std::string>{opaque(id, "other")});
    CHECK(values_of(f.location("/go/tailscale?src=a1b2c3d4e5f6a7b8c9d0", 2), "subId1") ==
          std::vector<std::string>{opaque(id, "other")});
}

TEST_CASE("rule and split branches carry their own partner's sub-ID and channel code",
          "[placements][redirect][pg]") {
    Fixture f;
    std::int64_t id = f.link_id("tailscale");
    // The French storefront: its own parameter and code; the stored SID replaced, not doubled.
    std::string fr = f.location("/go/tailscale?src=newsletter", 0, "fr-FR");
    CHECK(fr == "https://tailscale.com/fr?sid=" + opaque(id, "newsletter") + "&aff=fr-nl");
    CHECK(f.location("/go/tailscale?src=newsletter", 5, "fr-CA") == fr);
    CHECK(f.location("/go/tailscale", 0, "fr") ==
          "https://tailscale.com/fr?sid=" + opaque(id, "direct") + "&aff=fr42");
    // The split: a branch of the link's own partner has the token and the code; the other
    // partner's branch has neither.
    bool seen_own = false, seen_plain = false;
    for (int reader = 0; reader < 40 && !(seen_own && seen_plain); ++reader) {
        std::string de = f.location("/go/tailscale?src=newsletter", reader, "de-DE");
        if (de.starts_with("https://tailscale.com/de-a")) {
            seen_own = true;
            CHECK(de == "https://tailscale.com/de-a?ref=picks-nl&utm_medium=affiliate&subId1=" +
                            opaque(id, "newsletter"));
        } else {
            seen_plain = true;
            CHECK(de == "https://tailscale.com/de-b?ref=plain1");
        }
    }
    CHECK(seen_own);
    CHECK(seen_plain);
}

TEST_CASE("a visitor's own sub-ID never reaches the Location, however it is written",
          "[placements][redirect][pg]") {
    Fixture f;
    std::int64_t named = f.link_id("named");
    std::int64_t campaign = f.link_id("campaign");
    std::string token = opaque(named, "direct");
    for (std::string query :
         {"subId1=evil", "SUBID1=evil", "sub%49d1=evil", "a=1;subId1=evil",
          "subId1=evil&subId1=evil2", "subId1=evil;subId1=evil2", "src=x&subid1=evil"}) {
        CAPTURE(query);
        std::string location = f.location("/go/named?" + query);
        CHECK(location.find("evil") == std::string::npos);
        CHECK(spellings_of(location, "subId1") == 1);
        // The stored destination's subid1=stored is replaced in its place.
        CHECK(location.find("stored") == std::string::npos);
        if (query.starts_with("src=")) continue;
        CHECK(location ==
              "https://tailscale.com/x?subId1=" + token + "&a=1&ref=picks42&utm_medium=affiliate");
    }
    // Through utm passthrough too: a ';' inside a utm value is escaped, a utm key never names
    // the sub-ID parameter (refused at save time), and the token stays the only sub-ID.
    for (std::string query : {"utm_source=a;subId1=evil", "utm_source=x&subId1=evil",
                              "utm_source=x&SubId1=evil&utm_content=subId1%3Devil",
                              "utm_source=news&src=newsletter&subId1=evil"}) {
        CAPTURE(query);
        std::string location = f.location("/go/campaign?" + query);
        CHECK(spellings_of(location, "subId1") == 1);
        auto values = values_of(location, "subId1");
        REQUIRE(values.size() == 1);
        CHECK(values[0] ==
              opaque(campaign,
                     query.find("src=newsletter") != std::string::npos ? "newsletter" : "direct"));
    }
    // A partner whose sub-ID parameter a utm_* key could spell is refused.
    auto r =
        f.api("PATCH", "/api/v1/partners/tailscale", R"({"subid_param": "utm_content"})", f.editor);
    CHECK(r.status == 422);
    CHECK(r.body.find("subid_param") != std::string::npos);
}

TEST_CASE("readable tokens are checked for collisions when links and partners are saved",
          "[placements][admin][pg]") {
    Fixture f;
    // Readable tokens with a separator: the slug, '_', the channel.
    auto r = f.api("PATCH", "/api/v1/partners/tailscale",
                   R"({"subid_style": "readable", "subid_charset": "a-z0-9_"})", f.editor);
    INFO(r.body);
    REQUIRE(r.status == 200);
    std::vector<std::string> token;
    auto deadline = std::chrono::steady_clock::now() + 5s;  // the snapshot follows within 1 s
    do {
        token = values_of(f.location("/go/tailscale?src=blog-tech"), "subId1");
    } while (token != std::vector<std::string>{"tailscale_blogtech"} &&
             std::chrono::steady_clock::now() < deadline);
    CHECK(token == std::vector<std::string>{"tailscale_blogtech"});
    // With the separator "tail_" and "tailscale_" stay apart.
    r = f.api(
        "POST", "/api/v1/links",
        R"({"slug": "tail", "partner": "tailscale", "destination": "https://tailscale.com/t"})",
        f.editor);
    INFO(r.body);
    CHECK(r.status == 201);
    // Without it, "tail" + channel "scalenl" and "tailscale" + "nl" would be one token.
    r = f.api("PATCH", "/api/v1/partners/tailscale", R"({"subid_charset": "a-z0-9"})", f.editor);
    INFO(r.body);
    CHECK(r.status == 422);
    CHECK(r.body.find("'tail' and 'tailscale' could collide") != std::string::npos);
    // '-' is not in the charset: "tail-scale" would write "tailscale_" like "tailscale".
    r = f.api(
        "POST", "/api/v1/links",
        R"({"slug": "tail-scale", "partner": "tailscale", "destination": "https://tailscale.com/t"})",
        f.editor);
    INFO(r.body);
    CHECK(r.status == 422);
    CHECK(r.body.find("'tail-scale' and 'tailscale' could collide") != std::string::npos);
    // An import is checked the same way, and applies nothing.
    auto refused = import_json(f.db.url(), R"json({"links": [
        {"slug": "tailscale-", "partner": "tailscale", "destination": "https://tailscale.com/t"}]})json");
    CHECK(refused.exit_code != 0);
    CHECK((refused.out + refused.err).find("could collide") != std::string::npos);
}

TEST_CASE("the placements API and `refgate placements` map tokens to links and channels",
          "[placements][admin][pg][redis]") {
    Fixture f;
    std::int64_t id = f.link_id("tailscale");
    for (int reader = 0; reader < 3; ++reader) f.location("/go/tailscale?src=newsletter", reader);
    f.location("/go/tailscale", 9);
    // Not flushed yet: the counts are in Redis, and the answer includes them.
    Json items;
    auto deadline = std::chrono::steady_clock::now() + 15s;
    do {
        std::this_thread::sleep_for(100ms);
        auto r = f.api("GET", "/api/v1/links/tailscale/placements");
        INFO(r.body);
        REQUIRE(r.status == 200);
        items = Json::parse(r.body)["items"];
    } while ((items.size() < 2 || items[0]["human_clicks"] != 3) &&
             std::chrono::steady_clock::now() < deadline);
    INFO(items.dump());
    REQUIRE(items.size() == 2);
    CHECK(items[0] == Json{{"channel", "newsletter"},
                           {"token", opaque(id, "newsletter")},
                           {"human_clicks", 3}});
    CHECK(items[1] ==
          Json{{"channel", "direct"}, {"token", opaque(id, "direct")}, {"human_clicks", 1}});

    auto found = f.api("GET", "/api/v1/placements/" + opaque(id, "newsletter"));
    INFO(found.body);
    REQUIRE(found.status == 200);
    CHECK(Json::parse(found.body) == Json{{"token", opaque(id, "newsletter")},
                                          {"link", "tailscale"},
                                          {"channel", "newsletter"}});
    // A token of the link for a channel without clicks: the link, and no channel.
    auto unknown_channel = f.api("GET", "/api/v1/placements/" + opaque(id, "podcast"));
    REQUIRE(unknown_channel.status == 200);
    CHECK(Json::parse(unknown_channel.body)["channel"].is_null());
    CHECK(Json::parse(unknown_channel.body)["link"] == "tailscale");
    // A token of no link, and text that is no token.
    CHECK(f.api("GET", "/api/v1/placements/" + opaque(999999, "direct")).status == 404);
    CHECK(f.api("GET", "/api/v1/placements/no%20token").status == 404);
    CHECK(f.api("GET", "/api/v1/links/nope/placements").status == 404);

    auto cli =
        run_refgate({"placements", "--slug", "tailscale"},
                    {{"REFGATE_DATABASE_URL", f.db.url()}, {"REFGATE_REDIS_URL", f.redis.url()}});
    INFO(cli.out << cli.err);
    REQUIRE(cli.exit_code == 0);
    CHECK(cli.out ==
          "link\tchannel\ttoken\thuman_clicks\n"
          "tailscale\tnewsletter\t" +
              opaque(id, "newsletter") +
              "\t3\n"
              "tailscale\tdirect\t" +
              opaque(id, "direct") + "\t1\n");
    auto all = run_refgate({"placements"}, {{"REFGATE_DATABASE_URL", f.db.url()},
                                            {"REFGATE_REDIS_URL", f.redis.url()}});
    CHECK(all.exit_code == 0);
    CHECK(all.out.find("tailscale\tnewsletter\t" + opaque(id, "newsletter")) != std::string::npos);
    auto missing =
        run_refgate({"placements", "--slug", "nope"},
                    {{"REFGATE_DATABASE_URL", f.db.url()}, {"REFGATE_REDIS_URL", f.redis.url()}});
    CHECK(missing.exit_code == 1);
}

TEST_CASE("a link's stats answer lists its clicks per placement token, unflushed ones included",
          "[placements][stats][admin][pg][redis]") {
    Fixture f;
    std::int64_t id = f.link_id("tailscale");
    for (int reader = 0; reader < 2; ++reader) f.location("/go/tailscale?src=newsletter", reader);
    f.location("/go/tailscale", 5);
    auto created = f.api("POST", "/api/v1/links",
                         R"({"slug": "plain-pick", "partner": "plain",
                             "destination": "https://tailscale.com/plain"})",
                         f.editor);
    INFO(created.body);
    REQUIRE(created.status == 201);
    // The flush runs hourly here: every count is still in Redis.
    Json answer;
    auto deadline = std::chrono::steady_clock::now() + 15s;
    do {
        std::this_thread::sleep_for(100ms);
        auto r = f.api("GET", "/api/v1/stats/links/tailscale");
        INFO(r.body);
        REQUIRE(r.status == 200);
        answer = Json::parse(r.body);
    } while (answer["totals"]["human"] != 3 && std::chrono::steady_clock::now() < deadline);
    INFO(answer.dump());
    CHECK(answer["placements"] ==
          Json::array(
              {Json{{"channel", "newsletter"},
                    {"token", opaque(id, "newsletter")},
                    {"human_clicks", 2}},
               Json{{"channel", "direct"}, {"token", opaque(id, "direct")}, {"human_clicks", 1}}}));
    // Over the answer's range: none of these clicks fell in January 2020.
    auto old = f.api("GET", "/api/v1/stats/links/tailscale?from=2020-01-01&to=2020-01-31");
    REQUIRE(old.status == 200);
    CHECK(Json::parse(old.body)["placements"] == Json::array());
    // A partner without a sub-ID parameter: its links' Locations carry no token, and their stats
    // answer has no placements (where a partner with one answers [] without clicks).
    auto plain = f.api("GET", "/api/v1/stats/links/plain-pick");
    REQUIRE(plain.status == 200);
    CHECK_FALSE(Json::parse(plain.body).contains("placements"));
}

}  // namespace placements_test
