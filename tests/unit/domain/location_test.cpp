#include "refgate/domain/location.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "refgate/domain/html.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace location_test {

namespace {

using refgate::domain::build_location;
using refgate::domain::Partner;

Partner partner_with_ref(std::string ref_param = "ref", std::string ref_code = "picks42") {
    Partner p;
    p.slug = "acme";
    p.name = "Acme";
    p.ref_param = std::move(ref_param);
    p.ref_code = std::move(ref_code);
    p.allowed_domains = {"a.com"};
    return p;
}

// In a forked child: die quietly on a crash. Catch's own signal handlers would report the crash
// through the parent's reporter (and the sanitizer would print a report the parent repeats).
void quiet_child() {
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE}) std::signal(sig, SIG_DFL);
    if (std::freopen("/dev/null", "w", stdout) == nullptr ||
        std::freopen("/dev/null", "w", stderr) == nullptr) {
        _exit(3);
    }
}

// Runs build_location in a child process, so that a crash inside it fails this test instead of
// taking the whole test binary down. Returns the Location, or nullopt when the child died.
std::optional<std::string> build_location_in_child(const std::string& destination,
                                                   const Partner& partner) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    std::fflush(nullptr);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        quiet_child();
        std::string location = build_location(destination, partner);
        auto written = write(fds[1], location.data(), location.size());
        _exit(written == static_cast<ssize_t>(location.size()) ? 0 : 2);
    }
    close(fds[1]);
    std::string out;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, buf + n);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    return out;
}

}  // namespace

TEST_CASE("the referral code is appended to a destination without a query", "[location]") {
    CHECK(build_location("https://a.com/p", partner_with_ref()) == "https://a.com/p?ref=picks42");
}

TEST_CASE("a destination without a path gets the referral code after its host", "[location]") {
    CHECK(build_location("https://a.com", partner_with_ref()) == "https://a.com?ref=picks42");
    CHECK(build_location("https://a.com/", partner_with_ref()) == "https://a.com/?ref=picks42");
}

TEST_CASE("an existing referral parameter of the same name is replaced in place", "[location]") {
    CHECK(build_location("https://a.com/p?x=1&ref=old&y=2#frag", partner_with_ref()) ==
          "https://a.com/p?x=1&ref=picks42&y=2#frag");
}

TEST_CASE("repeated referral parameters collapse to one carrying the partner's code",
          "[location]") {
    CHECK(build_location("https://a.com/p?ref=1&x=2&ref=2&ref=3", partner_with_ref()) ==
          "https://a.com/p?ref=picks42&x=2");
}

TEST_CASE("repeated keys other than the referral parameter are all kept in order", "[location]") {
    CHECK(build_location("https://a.com/p?a=1&a=2", partner_with_ref()) ==
          "https://a.com/p?a=1&a=2&ref=picks42");
}

TEST_CASE("percent-encoded characters of path and query are kept exactly", "[location]") {
    CHECK(build_location("https://a.com/a%20b/%2F/%C3%BC?q=%20%2F%C3%BC&r=a%2Bb",
                         partner_with_ref()) ==
          "https://a.com/a%20b/%2F/%C3%BC?q=%20%2F%C3%BC&r=a%2Bb&ref=picks42");
}

TEST_CASE("the fragment stays after the query", "[location]") {
    CHECK(build_location("https://a.com/p?x=1#section-2", partner_with_ref()) ==
          "https://a.com/p?x=1&ref=picks42#section-2");
    CHECK(build_location("https://a.com/p#top", partner_with_ref()) ==
          "https://a.com/p?ref=picks42#top");
}

TEST_CASE("explicit ports and IPv6 hosts are kept", "[location]") {
    CHECK(build_location("https://a.com:8443/x", partner_with_ref()) ==
          "https://a.com:8443/x?ref=picks42");
    CHECK(build_location("https://[2001:db8::1]:8443/x", partner_with_ref()) ==
          "https://[2001:db8::1]:8443/x?ref=picks42");
}

// Regression: Boost.URL 1.81 counts the empty query of "p?" as one parameter with an empty key, so
// the Location gets a stray "&": "https://a.com/p?&ref=picks42".
TEST_CASE("an empty query gets the referral code as its only parameter", "[location]") {
    CHECK(build_location("https://a.com/p?", partner_with_ref()) == "https://a.com/p?ref=picks42");
}

// Regression: Boost.URL 1.81 reads "?#" as two parameters (boostorg/url#864) and params().set()
// reads out of bounds: build_location segfaults. check_destination accepts this destination, so one
// such stored link crashes Snapshot::build in every instance.
TEST_CASE("an empty query followed by a fragment gets the referral code without crashing",
          "[location]") {
    auto location = build_location_in_child("https://a.com/p?#f", partner_with_ref());
    REQUIRE(location.has_value());
    CHECK(*location == "https://a.com/p?ref=picks42#f");
}

TEST_CASE("a referral code that needs encoding cannot inject a parameter", "[location]") {
    auto location = build_location("https://a.com/p?x=1", partner_with_ref("ref", "a b&c=d"));
    CHECK(location == "https://a.com/p?x=1&ref=a%20b%26c%3Dd");
    CHECK(location.find("&c=") == std::string::npos);
}

TEST_CASE("a referral code with a hash or a percent sign stays inside the parameter",
          "[location]") {
    CHECK(build_location("https://a.com/p#frag", partner_with_ref("ref", "a#b%41")) ==
          "https://a.com/p?ref=a%23b%2541#frag");
}

// Regression: '+' is left as is, and the partner's server (form decoding, as PHP, Rails, Django do)
// reads it as a space: the code "picks+20" arrives as "picks 20".
TEST_CASE("a referral code with a plus sign arrives as a plus sign", "[location]") {
    CHECK(build_location("https://a.com/p", partner_with_ref("ref", "picks+20")) ==
          "https://a.com/p?ref=picks%2B20");
}

TEST_CASE("extra parameters follow the referral code in the partner's order", "[location]") {
    auto partner = partner_with_ref();
    partner.extra_params = {{"utm_medium", "affiliate"}, {"b", "2"}, {"a", "1"}};
    CHECK(build_location("https://a.com/p?z=9", partner) ==
          "https://a.com/p?z=9&ref=picks42&utm_medium=affiliate&b=2&a=1");
}

TEST_CASE("extra parameters replace existing parameters of the same name in place", "[location]") {
    auto partner = partner_with_ref();
    partner.extra_params = {{"utm_medium", "affiliate"}, {"b", "2"}, {"a", "1"}};
    CHECK(build_location("https://a.com/p?a=0&z=9&a=5", partner) ==
          "https://a.com/p?a=1&z=9&ref=picks42&utm_medium=affiliate&b=2");
}

TEST_CASE("utm parameters of the request are ignored when the link does not pass them through",
          "[location][utm]") {
    CHECK(build_location("https://a.com/p", partner_with_ref(), false, "utm_source=news") ==
          "https://a.com/p?ref=picks42");
}

TEST_CASE("utm parameters of the request pass through when the link allows it", "[location][utm]") {
    CHECK(build_location("https://a.com/p?x=1#f", partner_with_ref(), true,
                         "utm_source=news&utm_campaign=spring") ==
          "https://a.com/p?x=1&utm_source=news&utm_campaign=spring&ref=picks42#f");
}

TEST_CASE("a utm value ends where the request's query ends and not in the bytes after it",
          "[location][utm]") {
    // The query is a view into the connection's buffer, where the rest of the request follows.
    std::string buffer = "utm_source=news-and-the-bytes-after-it&x";
    std::string_view query = std::string_view(buffer).substr(0, buffer.find('-'));
    CHECK(build_location("https://a.com/p", partner_with_ref(), true, query) ==
          "https://a.com/p?utm_source=news&ref=picks42");
    // As in "GET /go/x?utm_source=news HTTP/1.1\r\n": the value is not lost to the CR LF after it.
    buffer = "utm_source=news HTTP/1.1\r\nHost: picks.example.com\r\n";
    query = std::string_view(buffer).substr(0, buffer.find(' '));
    CHECK(build_location("https://a.com/p", partner_with_ref(), true, query) ==
          "https://a.com/p?utm_source=news&ref=picks42");
}

TEST_CASE("a passed-through utm key that the destination holds keeps one value, the last passed",
          "[location][utm]") {
    refgate::domain::Partner partner = partner_with_ref();
    CHECK(build_location("https://example.com/a?x=1&utm_source=x&utm_source=y#f", partner, true,
                         "utm_source=a%20b&utm_source=c=d(") ==
          "https://example.com/a?x=1&utm_source=c%3Dd%28&ref=picks42#f");
}

TEST_CASE("a destination parameter that decodes to the referral key gives way to the code",
          "[location]") {
    // A partner that decodes r%65f as ref must not see a second, stale code.
    CHECK(build_location("https://a.com/p?r%65f=old&x=1", partner_with_ref()) ==
          "https://a.com/p?ref=picks42&x=1");
}

TEST_CASE("only utm_ keys pass through", "[location][utm]") {
    CHECK(build_location("https://a.com/p", partner_with_ref(), true,
                         "src=x&utm_source=news&b=3&UTM_UP=1&utm_=1&plan=free") ==
          "https://a.com/p?utm_source=news&ref=picks42");
}

TEST_CASE("the request can never pass the referral parameter through", "[location][utm]") {
    SECTION("not as the plain or the percent-encoded name") {
        CHECK(build_location("https://a.com/p", partner_with_ref(), true,
                             "ref=evil&%72ef=evil&utm_source=news&ref=evil2") ==
              "https://a.com/p?utm_source=news&ref=picks42");
    }
    SECTION("not even when the referral parameter is itself a utm_ key") {
        CHECK(build_location("https://a.com/p", partner_with_ref("utm_ref"), true,
                             "utm_ref=evil&utm_source=n&utm%5Fref=evil&utm_r%65f=evil") ==
              "https://a.com/p?utm_source=n&utm_ref=picks42");
    }
    SECTION("not hidden inside an encoded value") {
        CHECK(build_location("https://a.com/p", partner_with_ref(), true,
                             "utm_source=a%26ref%3Devil") ==
              "https://a.com/p?utm_source=a%26ref%3Devil&ref=picks42");
    }
}

TEST_CASE("the request can never override a partner's extra parameter", "[location][utm]") {
    auto partner = partner_with_ref();
    partner.extra_params = {{"utm_medium", "affiliate"}};
    CHECK(build_location("https://a.com/p", partner, true, "utm_medium=evil&utm_source=news") ==
          "https://a.com/p?utm_source=news&ref=picks42&utm_medium=affiliate");
}

TEST_CASE("utm values with encoded control characters are dropped", "[location][utm]") {
    CHECK(build_location("https://a.com/p", partner_with_ref(), true,
                         "utm_x=%0d%0a&utm_y=%00&utm_z=%7F&utm_ok=fine%20one") ==
          "https://a.com/p?utm_ok=fine%20one&ref=picks42");
}

TEST_CASE("at most eight utm parameters pass through", "[location][utm]") {
    CHECK(build_location("https://a.com/p", partner_with_ref(), true,
                         "utm_a=1&utm_b=2&utm_c=3&utm_d=4&utm_e=5&utm_f=6&utm_g=7&utm_h=8&utm_i=9&"
                         "utm_j=10") ==
          "https://a.com/p?utm_a=1&utm_b=2&utm_c=3&utm_d=4&utm_e=5&utm_f=6&utm_g=7&utm_h=8&"
          "ref=picks42");
}

TEST_CASE("a repeated utm key passes through once", "[location][utm]") {
    CHECK(
        build_location("https://a.com/p", partner_with_ref(), true, "utm_source=a&utm_source=b") ==
        "https://a.com/p?utm_source=b&ref=picks42");
}

TEST_CASE("a query has utm parameters only when one of its keys starts with utm_",
          "[location][utm]") {
    CHECK(refgate::domain::query_has_utm("utm_source=news"));
    CHECK(refgate::domain::query_has_utm("a=1&utm_campaign=x"));
    CHECK_FALSE(refgate::domain::query_has_utm(""));
    CHECK_FALSE(refgate::domain::query_has_utm("ref=evil"));
    CHECK_FALSE(refgate::domain::query_has_utm("a=utm_source"));
    CHECK_FALSE(refgate::domain::query_has_utm("xutm_source=1"));
}

TEST_CASE("the redirect page links to the escaped location", "[location][html]") {
    auto page =
        refgate::domain::redirect_page("https://a.com/p?x=1&ref=\"><script>", "Go to <Acme>");
    CHECK_THAT(page,
               Catch::Contains("<a href=\"https://a.com/p?x=1&amp;ref=&quot;&gt;&lt;script&gt;"
                               "\">Go to &lt;Acme&gt;</a>"));
    CHECK_THAT(page, !Catch::Contains("<script>"));
}

TEST_CASE("html escaping covers both quote characters", "[location][html]") {
    std::string out;
    refgate::domain::append_escaped_html(out, "a&b<c>d\"e'f");
    CHECK(out == "a&amp;b&lt;c&gt;d&quot;e&#39;f");
}

TEST_CASE("a referral parameter spelled with percent-encoding is still replaced", "[location]") {
    // Keys compare decoded: the partner decodes "r%65f" as "ref" and sees our code only.
    CHECK(build_location("https://a.com/p?r%65f=old&x=1&ref=older", partner_with_ref()) ==
          "https://a.com/p?ref=picks42&x=1");
}

namespace {

// The query of a Location as a server reads it that splits on '&' alone, or on ';' as well
// (older Python, Go before 1.17, Rack 2): the decoded keys, in order.
std::vector<std::string> keys_read(const std::string& location, bool semicolons) {
    std::size_t start = location.find('?');
    if (start == std::string::npos) return {};
    std::string query = location.substr(start + 1, location.find('#') - start - 1);
    std::vector<std::string> keys;
    std::size_t pos = 0;
    while (pos <= query.size()) {
        std::size_t end = query.find_first_of(semicolons ? "&;" : "&", pos);
        if (end == std::string::npos) end = query.size();
        std::string piece = query.substr(pos, end - pos);
        std::string key = piece.substr(0, piece.find('='));
        std::string decoded;
        for (std::size_t i = 0; i < key.size(); ++i) {
            if (key[i] == '%' && i + 2 < key.size()) {
                decoded.push_back(static_cast<char>(std::stoi(key.substr(i + 1, 2), nullptr, 16)));
                i += 2;
            } else {
                decoded.push_back(key[i] == '+' ? ' ' : key[i]);
            }
        }
        keys.push_back(decoded);
        pos = end + 1;
    }
    return keys;
}

std::size_t times_read(const std::string& location, const std::string& key, bool semicolons) {
    auto keys = keys_read(location, semicolons);
    return static_cast<std::size_t>(std::count(keys.begin(), keys.end(), key));
}

}  // namespace

TEST_CASE("a visitor's utm value cannot start a parameter for a server that splits on ';'",
          "[location][utm]") {
    // The issue's click: /go/tailscale-blog?utm_source=a;ref=evil
    std::string location = build_location("https://tailscale.com/blog", partner_with_ref(), true,
                                          "utm_source=a;ref=evil");
    CHECK(location == "https://tailscale.com/blog?utm_source=a%3Bref%3Devil&ref=picks42");
    CHECK(times_read(location, "ref", false) == 1);
    CHECK(times_read(location, "ref", true) == 1);
}

TEST_CASE("a visitor's utm value reaches the partner decoded the same, every separator escaped",
          "[location][utm]") {
    auto passed = [](std::string_view query) {
        return build_location("https://a.com/p", partner_with_ref(), true, query);
    };
    // Escapes are decoded and written again: unreserved bytes plain, the rest upper-case %XX.
    CHECK(passed("utm_source=a%3bref%3devil") ==
          "https://a.com/p?utm_source=a%3Bref%3Devil&ref=picks42");
    CHECK(passed("utm_source=%41b%2dc") == "https://a.com/p?utm_source=Ab-c&ref=picks42");
    CHECK(passed("utm_source=x,y:z/w?v@u!t") ==
          "https://a.com/p?utm_source=x%2Cy%3Az%2Fw%3Fv%40u%21t&ref=picks42");
    CHECK(passed("utm_campaign=caf%C3%A9") == "https://a.com/p?utm_campaign=caf%C3%A9&ref=picks42");
    // A '+' means a space to a form decoder and a plus to others: it is passed as it came, and an
    // escaped plus stays escaped.
    CHECK(passed("utm_campaign=spring+sale") ==
          "https://a.com/p?utm_campaign=spring+sale&ref=picks42");
    CHECK(passed("utm_campaign=1%2B1") == "https://a.com/p?utm_campaign=1%2B1&ref=picks42");
}

TEST_CASE("a destination's ';'-separated referral parameter is kept inside its value",
          "[location]") {
    auto partner = partner_with_ref();
    partner.extra_params = {{"utm_medium", "affiliate"}};
    auto location = [&](const std::string& destination) {
        return build_location(destination, partner);
    };
    // Read splitting on '&' nothing changes ("a" is "1;ref=x" either way); a server splitting on
    // ';' no longer sees a second code.
    CHECK(location("https://a.com/p?a=1;ref=x") ==
          "https://a.com/p?a=1%3Bref=x&ref=picks42&utm_medium=affiliate");
    CHECK(location("https://a.com/p?a;ref=x&b=2") ==
          "https://a.com/p?a%3Bref=x&b=2&ref=picks42&utm_medium=affiliate");
    CHECK(location("https://a.com/p?a=1;r%65f=x;b=2;ref") ==
          "https://a.com/p?a=1%3Br%65f=x;b=2%3Bref&ref=picks42&utm_medium=affiliate");
    // A key holding the name as one of its ';' pieces.
    CHECK(location("https://a.com/p?ref;a=1") ==
          "https://a.com/p?ref%3Ba=1&ref=picks42&utm_medium=affiliate");
    // The partner's extra parameters are locked the same way.
    CHECK(location("https://a.com/p?a=1;utm_medium=x") ==
          "https://a.com/p?a=1%3Butm_medium=x&ref=picks42&utm_medium=affiliate");
    // A ';' before any other key is the destination's own and stays.
    CHECK(location("https://a.com/p?a=1;b=2#f") ==
          "https://a.com/p?a=1;b=2&ref=picks42&utm_medium=affiliate#f");
    // The referral parameter's own value is replaced whole, whatever it held.
    CHECK(location("https://a.com/p?ref=x;ref=y") ==
          "https://a.com/p?ref=picks42&utm_medium=affiliate");
}

TEST_CASE("no Location names the referral or an extra parameter twice, split on '&' or on ';'",
          "[location]") {
    auto partner = partner_with_ref();
    partner.extra_params = {{"utm_medium", "affiliate"}};
    const std::vector<std::string> destinations = {
        "https://a.com/p",         "https://a.com/p?a=1;ref=x",      "https://a.com/p?;ref",
        "https://a.com/p?a;ref;b", "https://a.com/p?x=%3B;ref=1",    "https://a.com/p?a=;;ref=;",
        "https://a.com/p?ref;a=1", "https://a.com/p?a=1;utm_medium", "https://a.com/p?a=b=c;ref=d"};
    const std::vector<std::string> queries = {
        "", "utm_source=a;ref=evil", "utm_source=a;utm_medium=evil",
        "utm_source=;ref;&utm_campaign=%3Bref%3D1", "utm_a=1;ref=2&utm_b=3;;ref&ref=4;ref=5"};
    for (const auto& destination : destinations) {
        for (const auto& query : queries) {
            std::string location = build_location(destination, partner, true, query);
            INFO(destination << " + " << query << " -> " << location);
            for (bool semicolons : {false, true}) {
                CHECK(times_read(location, "ref", semicolons) == 1);
                CHECK(times_read(location, "utm_medium", semicolons) == 1);
            }
        }
    }
}

}  // namespace location_test
