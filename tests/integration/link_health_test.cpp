// Link health end to end: `refgate check-links` and the scheduled checker against a local HTTPS
// server (tests/linkcheck/scenario_server.py, one scenario per finding, a CA of its own) that
// the checker reaches through REFGATE_LINKCHECK_RESOLVE.

#include <catch2/catch.hpp>
#include <map>
#include <sstream>

#include "linkcheck_fixture.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace link_health_test {

using namespace refgate::test;
using namespace linkcheck_fixture;

namespace {

struct Printed {
    std::string finding, detail, state;
};

// check-links' report lines: "slug<TAB>finding<TAB>detail<TAB>pending|confirmed<TAB>N ms".
std::map<std::string, Printed> findings(const std::string& out) {
    std::map<std::string, Printed> found;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == ' ' || line.find('\t') == std::string::npos) continue;
        std::istringstream fields(line);
        std::string slug;
        Printed p;
        std::getline(fields, slug, '\t');
        std::getline(fields, p.finding, '\t');
        std::getline(fields, p.detail, '\t');
        std::getline(fields, p.state, '\t');
        found[slug] = p;
    }
    return found;
}

// The monotonic times of the requests for `host` in the server's log.
std::vector<double> request_times(const std::string& log, const std::string& host) {
    std::vector<double> times;
    std::istringstream in(log);
    double t = 0;
    std::string h, rest;
    while (in >> t >> h && std::getline(in, rest)) {
        if (h == host) times.push_back(t);
    }
    return times;
}

}  // namespace

TEST_CASE("refgate check-links names each link's finding, with its hop chain and referral code",
          "[linkhealth][pg]") {
    auto& s = server();
    TestDatabase db;
    std::vector<std::string> slugs;
    for (const auto& [slug, url] : kScenarios) slugs.push_back(slug);
    REQUIRE(import_document(db.url(), document(s.port(), slugs)));

    auto r = run_refgate({"check-links"}, checker_env(db, s));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto f = findings(r.out);
    const std::map<std::string, std::pair<std::string, std::string>> expected = {
        {"clean", {"ok", "-"}},
        {"drop", {"code_dropped", "missing"}},
        {"swap", {"code_dropped", "other_code"}},
        {"home", {"homepage", "-"}},
        {"moved", {"moved", "other.test"}},
        {"gone", {"broken", "http_404"}},
        {"fail", {"broken", "http_500"}},
        {"mismatch", {"broken", "tls"}},
        {"expired", {"broken", "tls"}},
        {"loop", {"redirect_loop", "loop"}},
        {"private", {"refused", "ssrf"}},
        {"metadata", {"refused", "ssrf"}},
        {"oos", {"unavailable", "OutOfStock"}},
        {"slow", {"broken", "timeout"}},
        {"big", {"ok", "-"}},
    };
    for (const auto& [slug, want] : expected) {
        INFO(slug);
        CHECK(f[slug].finding == want.first);
        CHECK(f[slug].detail == want.second);
    }
    // The chain shows each hop with the referral code; the 50 MB page was read to the cap only.
    CHECK(r.out.find("  302 https://shop.test:" + std::to_string(s.port()) +
                     "/clean?ref=picks42 -> https://www.shop.test:" + std::to_string(s.port()) +
                     "/p/clean?ref=picks42") != std::string::npos);
    CHECK(r.out.find("body: 524288 bytes read (capped)") != std::string::npos);
    CHECK(r.out.find("  ssrf https://127.0.0.1:") != std::string::npos);
    // A first sighting is pending: only a second check an hour later confirms it.
    CHECK(f["drop"].state == "pending");
    CHECK(db.scalar("SELECT count(*) FROM refgate_link_health") == "15");
    CHECK(db.scalar("SELECT pending_state || '/' || state FROM refgate_link_health h JOIN "
                    "refgate_links l ON l.id = h.link_id WHERE l.slug = 'drop'") ==
          "code_dropped/ok");

    // Nothing reached the private address; every request named refgate and the contact URL,
    // and one host got at most one request per 100 ms.
    std::string log = s.requests();
    CHECK(log.find(" /admin ") == std::string::npos);
    CHECK(log.find("refgate-linkcheck/") != std::string::npos);
    CHECK(log.find("(+https://picks.example.com/contact)") != std::string::npos);
    // The server stamps a request in a Python thread after its TLS handshake and header parsing,
    // so under load a stamp can be late by tens of milliseconds and one gap shrink by as much
    // (39 ms seen at load 15 with ctest -j4). The average pace says the checker waited; a gap
    // of under 20 ms would be two requests sent together (unpaced, they come 2-10 ms apart).
    auto times = request_times(log, "shop.test");
    REQUIRE(times.size() >= 10);
    CHECK(times.back() - times.front() >= 0.095 * static_cast<double>(times.size() - 1));
    for (std::size_t i = 1; i < times.size(); ++i) CHECK(times[i] - times[i - 1] >= 0.02);
}

TEST_CASE("refgate check-links checks one slug or one partner's links when asked",
          "[linkhealth][pg]") {
    auto& s = server();
    TestDatabase db;
    REQUIRE(import_document(db.url(), document(s.port(), {"clean", "drop"})));
    auto r = run_refgate({"check-links", "--slug", "drop"}, checker_env(db, s));
    REQUIRE(r.exit_code == 0);
    CHECK(findings(r.out).size() == 1);
    CHECK(r.out.find("checked: 1 link(s), 1 not ok") != std::string::npos);
    r = run_refgate({"check-links", "--partner", "shop"}, checker_env(db, s));
    CHECK(findings(r.out).size() == 2);
    r = run_refgate({"check-links", "--partner", "nobody"}, checker_env(db, s));
    CHECK(r.exit_code == 1);
    CHECK(db.scalar("SELECT count(*) FROM refgate_link_health_checks") == "3");
}

TEST_CASE("a name whose first address refuses the connection is checked at its next address",
          "[linkhealth][pg]") {
    auto& s = server();
    TestDatabase db;
    REQUIRE(import_document(db.url(), document(s.port(), {"clean"})));
    // shop.test answers 127.0.0.3 first (nothing listens there), then the server's 127.0.0.2.
    const std::string p = std::to_string(s.port());
    EnvPairs env;
    for (auto& [name, value] : checker_env(db, s))
        env.push_back({name, name == "REFGATE_LINKCHECK_RESOLVE"
                                 ? "shop.test:" + p + ":127.0.0.3,shop.test:" + p +
                                       ":127.0.0.2,www.shop.test:" + p + ":127.0.0.2"
                                 : value});
    auto r = run_refgate({"check-links", "--slug", "clean"}, env);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(findings(r.out)["clean"].finding == "ok");
    CHECK(db.scalar("SELECT chain->0->>'address' FROM refgate_link_health") == "127.0.0.2");
}

}  // namespace link_health_test
