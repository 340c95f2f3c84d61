#include "refgate/domain/snapshot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "refgate/codec/snapshot_file.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/runtime/snapshot_store.hpp"
#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace snapshot_test {

namespace {

using namespace std::chrono;
using refgate::codec::read_snapshot_json;
using refgate::codec::write_snapshot_json;
using refgate::domain::Link;
using refgate::domain::Partner;
using refgate::domain::Snapshot;
using refgate::domain::SysSeconds;

using refgate::testing::make_link;

// Tailscale with two more extra parameters, out of order: a location keeps the partner's order.
Partner tailscale_with_extras() {
    Partner p = refgate::testing::tailscale();
    p.extra_params = {{"utm_medium", "affiliate"}, {"b", "2"}, {"a", "1"}};
    return p;
}

// The snapshot file's text, as the follower writes it.
std::string file_text(const Snapshot& snapshot) {
    std::string text;
    write_snapshot_json(snapshot, [&](std::string_view piece) { text.append(piece); });
    return text;
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

bool rejected_mentions(const Snapshot& snapshot, const std::string& slug) {
    for (const auto& reason : snapshot.rejected()) {
        if (reason.starts_with(slug + ":")) return true;
    }
    return false;
}

}  // namespace

TEST_CASE("a built snapshot finds each link with its precomputed location", "[snapshot]") {
    auto pricing = make_link("tailscale", "https://tailscale.com/pricing?plan=pro#teams");
    pricing.id = 11;
    auto snapshot = Snapshot::build(3, {tailscale_with_extras()}, {pricing}, {}, "test");

    CHECK(snapshot->version() == 3);
    CHECK(snapshot->source() == "test");
    CHECK(snapshot->link_count() == 1);
    CHECK(snapshot->rejected().empty());
    const refgate::domain::LinkEntry* entry = snapshot->find("tailscale");
    REQUIRE(entry != nullptr);
    CHECK(entry->id == 11);
    CHECK(entry->location ==
          "https://tailscale.com/pricing?plan=pro&ref=picks42&utm_medium=affiliate&b=2&a=1#teams");
    CHECK(snapshot->partner(*entry).slug == "tailscale");
    CHECK(entry->expires_at == 0);
    CHECK(entry->fallback.empty());
}

TEST_CASE("a snapshot does not find slugs it does not hold", "[snapshot]") {
    auto snapshot = Snapshot::build(1, {tailscale_with_extras()},
                                    {make_link("tailscale", "https://tailscale.com/")}, {}, "test");
    CHECK(snapshot->find("nope") == nullptr);
    CHECK(snapshot->find("") == nullptr);
    CHECK(snapshot->find("TAILSCALE") == nullptr);
}

TEST_CASE("prefetching slugs stays inside the tables and changes no answer", "[snapshot]") {
    // The prefetches are hints a test cannot see; what it can see (with the sanitizers) is that
    // they read only the table's slots and entries, wherever the probe starts and ends.
    std::vector<Link> links;
    for (int i = 0; i < 300; ++i)
        links.push_back(make_link("pick-" + std::to_string(i), "https://tailscale.com/"));
    auto snapshot = Snapshot::build(1, {tailscale_with_extras()}, links, {}, "test");
    REQUIRE(snapshot->link_count() == 300);
    for (int i = 0; i < 600; ++i) {
        const std::string slug = "pick-" + std::to_string(i);
        const std::size_t hash = Snapshot::hash_of(slug);
        snapshot->prefetch(hash);
        snapshot->prefetch_entry(hash);
        const refgate::domain::LinkEntry* entry = snapshot->find(slug, hash);
        CHECK((entry != nullptr) == (i < 300));
        if (entry != nullptr) CHECK(entry->slug == slug);
        CHECK(entry == snapshot->find(slug));
    }
    // A hash of another slug finds nothing, even where it starts the probe elsewhere.
    CHECK(snapshot->find("pick-1", Snapshot::hash_of("pick-2")) == nullptr);
    auto empty = Snapshot::build(2, {tailscale_with_extras()}, {}, {}, "test");
    empty->prefetch(Snapshot::hash_of("pick-1"));
    empty->prefetch_entry(Snapshot::hash_of("pick-1"));
    CHECK(empty->find("pick-1") == nullptr);
}

TEST_CASE("a link edited by hand to leave the partner's domains is left out and reported",
          "[snapshot]") {
    auto snapshot = Snapshot::build(1, {tailscale_with_extras()},
                                    {make_link("good", "https://tailscale.com/"),
                                     make_link("hijacked", "https://evil.com/phish"),
                                     make_link("sneaky", "https://tailscale.com.evil.com/")},
                                    {}, "test");
    CHECK(snapshot->find("good") != nullptr);
    CHECK(snapshot->find("hijacked") == nullptr);
    CHECK(snapshot->find("sneaky") == nullptr);
    CHECK(snapshot->link_count() == 1);
    CHECK(snapshot->rejected().size() == 2);
    CHECK(rejected_mentions(*snapshot, "hijacked"));
    CHECK(rejected_mentions(*snapshot, "sneaky"));
}

TEST_CASE("a link whose stored data no longer validates is left out and reported", "[snapshot]") {
    auto snapshot = Snapshot::build(1, {tailscale_with_extras()},
                                    {make_link("plain-http", "http://tailscale.com/"),
                                     make_link("upper-case", "https://TAILSCALE.com/"),
                                     make_link("Bad_Slug", "https://tailscale.com/"),
                                     make_link("orphan", "https://tailscale.com/", "nobody"),
                                     make_link("full-width", "https://evil.com／.tailscale.com/")},
                                    {}, "test");
    CHECK(snapshot->link_count() == 0);
    for (const char* slug : {"plain-http", "upper-case", "Bad_Slug", "orphan", "full-width"}) {
        INFO(slug);
        CHECK(rejected_mentions(*snapshot, slug));
        CHECK(snapshot->find(slug) == nullptr);
    }
}

TEST_CASE("an http destination is kept when the policy allows http", "[snapshot]") {
    auto snapshot = Snapshot::build(1, {tailscale_with_extras()},
                                    {make_link("plain-http", "http://tailscale.com/")},
                                    refgate::domain::UrlPolicy{.allow_http = true}, "test");
    REQUIRE(snapshot->find("plain-http") != nullptr);
    CHECK(snapshot->find("plain-http")->location ==
          "http://tailscale.com/?ref=picks42&utm_medium=affiliate&b=2&a=1");
}

TEST_CASE("a fallback outside the partner's domains is dropped but the link is kept",
          "[snapshot]") {
    auto l = make_link("tailscale", "https://tailscale.com/");
    l.fallback = "https://evil.com/";
    auto snapshot = Snapshot::build(1, {tailscale_with_extras()}, {l}, {}, "test");
    REQUIRE(snapshot->find("tailscale") != nullptr);
    CHECK(snapshot->find("tailscale")->fallback.empty());
    CHECK(rejected_mentions(*snapshot, "tailscale"));
}

TEST_CASE("status, expiry, fallback and an inactive partner reach the link entry", "[snapshot]") {
    auto partner = tailscale_with_extras();
    partner.active = false;
    auto l = make_link("tailscale", "https://tailscale.com/");
    l.status = refgate::domain::LinkStatus::disabled;
    l.expires_at = SysSeconds{seconds{1795968000}};
    l.fallback = "https://tailscale.com/blog";
    l.utm_passthrough = true;
    auto snapshot = Snapshot::build(1, {partner}, {l}, {}, "test");
    const refgate::domain::LinkEntry* entry = snapshot->find("tailscale");
    REQUIRE(entry != nullptr);
    CHECK(entry->status == refgate::domain::LinkStatus::disabled);
    CHECK(entry->expires_at == 1795968000);
    CHECK(entry->fallback == "https://tailscale.com/blog");
    CHECK(entry->utm_passthrough);
    CHECK_FALSE(entry->partner_active);
}

TEST_CASE("a snapshot survives a round trip through its file format", "[snapshot]") {
    auto second = tailscale_with_extras();
    second.id = 8;
    second.slug = "mullvad";
    second.name = "Mullvad";
    second.ref_param = "via";
    second.ref_code = "a b&c";
    second.allowed_domains = {"mullvad.net", "xn--bcher-kva.example"};
    second.extra_params = {{"z", "26"}, {"a", "1"}, {"m", "13"}};
    second.active = false;
    auto first_link = make_link("tailscale", "https://tailscale.com/pricing?plan=pro#teams");
    first_link.id = 21;
    auto second_link = make_link("mullvad", "https://mullvad.net/de/", "mullvad");
    second_link.id = 22;
    second_link.status = refgate::domain::LinkStatus::disabled;
    second_link.expires_at = SysSeconds{seconds{1795968000}};
    second_link.fallback = "https://xn--bcher-kva.example/";
    second_link.utm_passthrough = true;

    auto original =
        Snapshot::build(42, {tailscale_with_extras(), second}, {first_link, second_link}, {}, "pg");
    auto doc = file_text(*original);
    auto copy = read_snapshot_json(std::string_view(doc), {});

    CHECK(copy->version() == 42);
    CHECK(copy->source() == "file");
    CHECK(file_text(*copy) == doc);
    REQUIRE(copy->partners().size() == 2);
    const Partner& p = copy->partners()[1];
    CHECK(p.id == 8);
    CHECK(p.slug == "mullvad");
    CHECK(p.ref_param == "via");
    CHECK(p.ref_code == "a b&c");
    CHECK(p.allowed_domains == second.allowed_domains);
    CHECK(p.extra_params == second.extra_params);
    CHECK_FALSE(p.active);
    REQUIRE(copy->entries().size() == 2);
    const Link l = copy->link(copy->entries()[1]);
    CHECK(l.id == 22);
    CHECK(l.partner == "mullvad");
    CHECK(l.destination == "https://mullvad.net/de/");
    CHECK(l.status == refgate::domain::LinkStatus::disabled);
    CHECK(l.expires_at == second_link.expires_at);
    CHECK(l.fallback == second_link.fallback);
    CHECK(l.utm_passthrough);
    REQUIRE(copy->find("mullvad") != nullptr);
    CHECK(copy->find("mullvad")->location == "https://mullvad.net/de/?via=a%20b%26c&z=26&a=1&m=13");
    CHECK(copy->find("tailscale")->location == original->find("tailscale")->location);
}

TEST_CASE("the snapshot file written in pieces is one JSON document that reads back",
          "[snapshot]") {
    auto partner = tailscale_with_extras();
    partner.name = "Tail \"scale\" \u00e9";
    partner.scheduled_codes = {{SysSeconds{seconds{4'102'444'800}}, "in-2100"}};
    std::vector<refgate::domain::Link> links;
    for (int i = 0; i < 6000; ++i) {  // more than one 1 MiB piece
        auto link =
            make_link("link-" + std::to_string(i), "https://tailscale.com/p/" + std::to_string(i) +
                                                       "?q=" + std::string(200, 'x'));
        link.id = i + 1;
        if (i % 2 == 0) link.fallback = "https://tailscale.com/blog";
        links.push_back(link);
    }
    auto snapshot = Snapshot::build(7, {partner}, links, {}, "test");
    std::string text;
    std::size_t pieces = 0;
    write_snapshot_json(*snapshot, [&](std::string_view piece) {
        text.append(piece);
        ++pieces;
    });
    CHECK(pieces > 1);
    auto doc = nlohmann::ordered_json::parse(text);
    CHECK(doc["links"].size() == 6000);
    CHECK(doc["partners"][0]["name"] == "Tail \"scale\" \u00e9");
    CHECK_THAT(text, Catch::Contains("in-2100"));
    CHECK(read_snapshot_json(std::string_view(text), {})->link_count() == 6000);
}

TEST_CASE("the snapshot file read as a stream gives the snapshot that wrote it", "[snapshot]") {
    auto partner = tailscale_with_extras();
    partner.scheduled_codes = {{SysSeconds{seconds{4'102'444'800}}, "in-2100"}};
    std::vector<refgate::domain::Link> links;
    for (int i = 0; i < 3000; ++i) {
        auto link = make_link("link-" + std::to_string(i),
                              "https://tailscale.com/p/" + std::to_string(i) + "?q=%22x%22");
        link.id = i + 1;
        if (i % 2 == 0) link.fallback = "https://tailscale.com/blog";
        if (i % 3 == 0) link.expires_at = SysSeconds{seconds{1795968000}};
        if (i % 5 == 0) link.status = refgate::domain::LinkStatus::disabled;
        link.utm_passthrough = i % 7 == 0;
        links.push_back(link);
    }
    auto written = Snapshot::build(9, {partner}, links, {}, "pg");
    std::string text;
    write_snapshot_json(*written, [&](std::string_view piece) { text.append(piece); });

    std::istringstream in(text);
    auto read = read_snapshot_json(in, {});
    CHECK(read->version() == 9);
    CHECK(read->source() == "file");
    CHECK(read->rejected().empty());
    CHECK(read->link_count() == 3000);
    CHECK(file_text(*read) == file_text(*written));
    CHECK(read->next_change() == written->next_change());
    REQUIRE(read->find("link-2999") != nullptr);
    CHECK(read->find("link-2999")->location == written->find("link-2999")->location);
}

TEST_CASE("a stream that is not a whole snapshot file is refused", "[snapshot]") {
    auto text = file_text(*Snapshot::build(1, {tailscale_with_extras()},
                                           {make_link("x", "https://tailscale.com/")}, {}, "test"));
    auto read = [](const std::string& t) {
        std::istringstream in(t);
        return read_snapshot_json(in, {});
    };
    CHECK(read(text)->find("x") != nullptr);
    auto replace = [&](const std::string& from, const std::string& to) {
        auto copy = text;
        auto at = copy.find(from);
        REQUIRE(at != std::string::npos);
        return copy.replace(at, from.size(), to);
    };
    CHECK_THROWS(read(text.substr(0, text.size() - 3)));
    CHECK_THROWS(read("[]"));
    CHECK_THROWS(read(replace("\"format\":1", "\"format\":2")));
    CHECK_THROWS(read(replace("\"status\":\"active\"", "\"status\":\"paused\"")));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slog\":\"x\"")));
    CHECK_THROWS(read(replace("\"links\"", "\"lynx\"")));
}

TEST_CASE("a snapshot reader sees each newly published snapshot", "[snapshot]") {
    refgate::runtime::SnapshotStore store;
    refgate::runtime::SnapshotReader reader(store);
    CHECK(reader.get() == nullptr);

    auto first = Snapshot::build(1, {tailscale_with_extras()},
                                 {make_link("a", "https://tailscale.com/")}, {}, "t");
    store.publish(first);
    CHECK(reader.get() == first.get());
    CHECK(reader.get()->version() == 1);

    auto second = Snapshot::build(2, {tailscale_with_extras()},
                                  {make_link("b", "https://tailscale.com/")}, {}, "t");
    store.publish(second);
    first.reset();
    REQUIRE(reader.get() == second.get());
    CHECK(reader.get()->find("a") == nullptr);
    CHECK(reader.get()->find("b") != nullptr);
    CHECK(store.current() == second);
}

// Regression: see location_test.cpp. check_destination accepts "https://tailscale.com/p?#f" as
// canonical, and Snapshot::build then segfaults inside build_location (Boost.URL 1.81,
// boostorg/url#864), so one such link in PostgreSQL or in the snapshot file brings down every
// instance at load.
TEST_CASE("a destination with an empty query before its fragment does not crash the snapshot",
          "[snapshot]") {
    std::fflush(nullptr);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        quiet_child();
        auto snapshot =
            Snapshot::build(1, {tailscale_with_extras()},
                            {make_link("tailscale", "https://tailscale.com/p?#f")}, {}, "t");
        const refgate::domain::LinkEntry* entry = snapshot->find("tailscale");
        bool served_right =
            entry == nullptr ||
            entry->location == "https://tailscale.com/p?ref=picks42&utm_medium=affiliate&b=2&a=1#f";
        _exit(served_right ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    INFO("child " << (WIFSIGNALED(status) ? "killed by signal " : "exited with ")
                  << (WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status)));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("scheduled codes take over at their second, and the snapshot file keeps the schedule",
          "[snapshot][schedule]") {
    const SysSeconds t0{seconds{1'800'000'000}};
    Partner partner = tailscale_with_extras();
    partner.scheduled_codes = {{t0 + 60s, "later"}, {t0 + 10s, "soon"}};
    auto pricing = make_link("tailscale", "https://tailscale.com/pricing");

    auto before = Snapshot::build(1, {partner}, {pricing}, {}, "test", {}, t0 + 9s);
    CHECK_THAT(std::string(before->find("tailscale")->location), Catch::Contains("ref=picks42"));
    CHECK(before->next_change() == t0 + 10s);
    CHECK_FALSE(before->schedule_due());

    // Rebuilt from the snapshot alone, as an instance does at that second.
    auto at = before->at(t0 + 10s);
    CHECK_THAT(std::string(at->find("tailscale")->location), Catch::Contains("ref=soon"));
    CHECK(at->partners()[0].ref_code == "soon");
    CHECK(at->next_change() == t0 + 60s);
    CHECK(at->schedule_due());
    CHECK(at->version() == 1);

    auto file = read_snapshot_json(std::string_view(file_text(*before)), {});
    CHECK(file->next_change() == t0 + 10s);
    CHECK(file->partners()[0].scheduled_codes.size() == 2);

    auto last = before->at(t0 + 3600s);
    CHECK_THAT(std::string(last->find("tailscale")->location), Catch::Contains("ref=later"));
    CHECK_FALSE(last->next_change());
    CHECK(last->partners()[0].scheduled_codes.empty());
}

namespace {

// Destinations and fallbacks that the snapshot's fast paths must treat exactly as
// check_destination() and build_location() do: plain ones, and every near miss we could think of.
const std::vector<std::string> kTrickyUrls = {
    "https://tailscale.com/",
    "https://tailscale.com",
    "https://tailscale.com?x=1",
    "https://tailscale.com#top",
    "https://login.tailscale.com/a/b?plan=pro#teams",
    "https://tailscale.com/pricing?plan=pro&seats=5#x?y/z",
    "https://tailscale.com/p?ref=old",
    "https://tailscale.com/p?a=1&ref=old&b=2",
    "https://tailscale.com/p?utm_medium=x",
    "https://tailscale.com/p?b",
    "https://tailscale.com/p?a=1&&b=2",
    "https://tailscale.com/p?a=1&",
    "https://tailscale.com/p?=1",
    "https://tailscale.com/p?",
    "https://tailscale.com/p?#f",
    "https://tailscale.com/p#",
    "https://tailscale.com/p?a=b=c",
    "https://tailscale.com/p?a+b=c",
    "https://tailscale.com/p?r%65f=1",
    "https://tailscale.com/p%20q",
    "https://tailscale.com/p?q=%zz",
    "https://tailscale.com/a b",
    "https://tailscale.com/caf\xc3\xa9",
    "https://tailscale.com/p#a#b",
    "https://tailscale.com/p?x=(1)*2,3;4:5@6!$'",
    "https://tailscale.com/p\\q",
    "https://tailscale.com/p\"q",
    "https://tailscale.com/p<q>",
    "https://tailscale.com/p{q}|^`",
    "https://tailscale.com/p\tq",
    "https://tailscale.com/p\x7fq",
    "https://tailscale.com:443/",
    "https://tailscale.com:/",
    "https://user@tailscale.com/",
    "https://user:pw@tailscale.com/",
    "https://TAILSCALE.com/",
    "HTTPS://tailscale.com/",
    "https://tailscale.com./",
    "https://.tailscale.com/",
    "https://a..tailscale.com/",
    "https://-.tailscale.com/",
    "https://xn--bcher-kva.tailscale.com/",
    "https://b\xc3\xbc"
    "cher.tailscale.com/",
    "https://tailscale.com.evil.com/",
    "https://eviltailscale.com/",
    "https://evil.com/tailscale.com",
    "https://evil.com?tailscale.com",
    "https://evil.com#.tailscale.com",
    "https://[::1]/",
    "https://127.0.0.1/",
    "https:///tailscale.com/",
    "https:tailscale.com/",
    "//tailscale.com/",
    "http://tailscale.com/",
    "ftp://tailscale.com/",
    "https://tailscale.com/" + std::string(2100, 'a'),
    "https://tailscale.com/" + std::string(2048 - 22, 'a'),
    "https://tailscale.com/" + std::string(2048 - 21, 'a'),
    "",
};

std::vector<Partner> tricky_partners() {
    auto plain = tailscale_with_extras();
    auto odd_code = tailscale_with_extras();
    odd_code.slug = "odd-code";
    odd_code.ref_code = "a b&c=d#e/\xc3\xa9";
    odd_code.extra_params = {{"x y", "1"}};
    auto repeated = tailscale_with_extras();
    repeated.slug = "repeated";
    repeated.extra_params = {{"a", "1"}, {"a", "2"}, {"ref", "3"}};
    auto bare = tailscale_with_extras();
    bare.slug = "bare";
    bare.ref_param = "via";
    bare.ref_code = "";
    bare.extra_params = {};
    return {plain, odd_code, repeated, bare};
}

}  // namespace

TEST_CASE("a snapshot keeps a destination exactly when the full URL check accepts it unchanged",
          "[snapshot]") {
    for (bool allow_http : {false, true}) {
        refgate::domain::UrlPolicy policy{.allow_http = allow_http};
        std::vector<Link> links;
        for (std::size_t i = 0; i < kTrickyUrls.size(); ++i) {
            links.push_back(make_link("link-" + std::to_string(i), kTrickyUrls[i]));
            auto with_fallback =
                make_link("fallback-" + std::to_string(i), "https://tailscale.com/");
            with_fallback.fallback = kTrickyUrls[i];
            links.push_back(with_fallback);
        }
        auto snapshot = Snapshot::build(1, {tailscale_with_extras()}, links, policy, "test");
        for (std::size_t i = 0; i < kTrickyUrls.size(); ++i) {
            const auto& url = kTrickyUrls[i];
            INFO("allow_http " << allow_http << ", url " << url);
            auto check = refgate::domain::check_destination(url, {"tailscale.com"}, policy);
            bool kept = check.ok() && check.canonical == url;
            const auto* entry = snapshot->find("link-" + std::to_string(i));
            CHECK((entry != nullptr) == kept);
            if (entry != nullptr) CHECK(entry->destination == url);
            const auto* fallback = snapshot->find("fallback-" + std::to_string(i));
            REQUIRE(fallback != nullptr);
            CHECK(fallback->fallback == (check.ok() ? check.canonical : std::string()));
        }
    }
}

TEST_CASE("every Location in a snapshot is the one build_location makes of its destination",
          "[snapshot]") {
    auto partners = tricky_partners();
    std::vector<Link> links;
    std::vector<std::pair<std::string, std::size_t>> expected;  // slug, partner
    for (std::size_t p = 0; p < partners.size(); ++p) {
        for (std::size_t i = 0; i < kTrickyUrls.size(); ++i) {
            auto slug = partners[p].slug + "-" + std::to_string(i);
            links.push_back(make_link(slug, kTrickyUrls[i], partners[p].slug));
            expected.emplace_back(slug, p);
        }
    }
    auto snapshot = Snapshot::build(1, partners, links, {}, "test");
    std::size_t checked = 0;
    for (const auto& [slug, p] : expected) {
        const auto* entry = snapshot->find(slug);
        if (entry == nullptr) continue;
        INFO(slug << ": " << entry->destination);
        CHECK(entry->location == refgate::domain::build_location(entry->destination, partners[p]));
        ++checked;
    }
    CHECK(checked > 4 * 20);  // most of the table passes the URL check
}

TEST_CASE("the snapshot file reader takes any JSON spelling of the same file", "[snapshot]") {
    auto read = [](const std::string& t) { return read_snapshot_json(std::string_view(t), {}); };
    // Written by hand: links before partners, whitespace, escapes, members it does not know.
    auto snapshot = read(R"( {
        "links" : [
          { "note": {"a": [1, 2.5e3, -0.5, true, false, null, "x\"y"]},
            "slug": "a\u006Cpha", "partner": "tailscale", "id": -3,
            "destination": "https:\/\/tailscale.com\/p?q=1#fr",
            "status": "active", "expires_at": null, "fallback": null, "utm_passthrough": true },
          {"slug":"beta","partner":"tailscale","destination":"https://tailscale.com/b",
           "status":"disabled","expires_at":"2026-11-29T16:00:00Z",
           "fallback":"https://tailscale.com/f","slug":"gamma"}
        ],
        "format": 1, "version": 12, "future": {"x": []},
        "partners": [{"slug":"tailscale","name":"T\u00e9 \ud83d\ude00","ref_param":"ref",
                      "ref_code":"picks42","allowed_domains":["tailscale.com"],
                      "extra_params":{}}]
      } )");
    CHECK(snapshot->version() == 12);
    CHECK(snapshot->rejected().empty());
    CHECK(snapshot->link_count() == 2);
    CHECK(snapshot->partners().at(0).name == "T\xc3\xa9 \xf0\x9f\x98\x80");
    const auto* alpha = snapshot->find("alpha");
    REQUIRE(alpha != nullptr);
    CHECK(alpha->id == -3);
    CHECK(alpha->utm_passthrough);
    CHECK(alpha->location == "https://tailscale.com/p?q=1&ref=picks42#fr");
    CHECK(snapshot->find("beta") == nullptr);  // a repeated member: the last one counts
    const auto* gamma = snapshot->find("gamma");
    REQUIRE(gamma != nullptr);
    CHECK(gamma->status == refgate::domain::LinkStatus::disabled);
    CHECK(gamma->expires_at == 1795968000);
    CHECK(gamma->fallback == "https://tailscale.com/f");
    CHECK(snapshot->disclosures().versions().empty());
}

TEST_CASE("the snapshot file reader refuses text that is not strict JSON", "[snapshot]") {
    auto text = file_text(*Snapshot::build(1, {tailscale_with_extras()},
                                           {make_link("x", "https://tailscale.com/")}, {}, "test"));
    auto read = [](const std::string& t) { return read_snapshot_json(std::string_view(t), {}); };
    auto replace = [&](const std::string& from, const std::string& to) {
        auto copy = text;
        auto at = copy.find(from);
        REQUIRE(at != std::string::npos);
        return copy.replace(at, from.size(), to);
    };
    CHECK(read(text)->find("x") != nullptr);
    CHECK_THROWS(read(""));
    CHECK_THROWS(read(text + " {}"));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slug\":\"x\",")));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slug\":'x'")));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slug\":\"x\\q\"")));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slug\":\"x\\ud800\"")));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slug\":\"x\\udc00\"")));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slug\":\"x\\u12\"")));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slug\":\"x\ty\"")));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slug\":7")));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slug\":\"x\",\"n\":01")));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slug\":\"x\",\"n\":1.")));
    CHECK_THROWS(read(replace("\"slug\":\"x\"", "\"slug\":\"x\",\"n\":tru")));
    CHECK_THROWS(read(replace("\"utm_passthrough\":false", "\"utm_passthrough\":0")));
    CHECK_THROWS(read(replace("\"links\":[", "\"links\":[1,")));
    CHECK_THROWS(read(replace("\"links\":[", "\"links\":{\"a\":")));
    CHECK_THROWS(read(replace("\"version\":1", "\"version\":-1")));
    CHECK_THROWS(read(replace("\"version\":1", "\"version\":1.5")));
    CHECK_THROWS(read(replace("\"version\":1", "\"version\":99999999999999999999")));
    CHECK_THROWS(read(replace("\"format\":1", "\"format\":\"1\"")));
    CHECK_THROWS(read(replace("\"expires_at\":null", "\"expires_at\":\"soon\"")));
    CHECK_THROWS(read(replace("{\"format\"", "{\"links\":[],\"format\"")));
    // Nesting deep enough to exhaust a recursive reader's stack is refused instead.
    CHECK_THROWS(
        read(replace("\"slug\":\"x\"", "\"slug\":\"x\",\"deep\":" + std::string(100'000, '[') +
                                           std::string(100'000, ']'))));
}

TEST_CASE("a scheduled code rebuilds its partner's Locations and leaves the others as they were",
          "[snapshot][schedule]") {
    const SysSeconds t0{seconds{1'800'000'000}};
    auto partners = tricky_partners();
    partners[0].scheduled_codes = {{t0 + 10s, "new code"}};
    partners[1].scheduled_codes = {{t0 + 10s, partners[1].ref_code}};  // the same code again
    std::vector<Link> links;
    for (const auto& partner : partners) {
        for (std::size_t i = 0; i < kTrickyUrls.size(); ++i)
            links.push_back(
                make_link(partner.slug + "-" + std::to_string(i), kTrickyUrls[i], partner.slug));
    }
    auto before = Snapshot::build(1, partners, links, {}, "test", {}, t0);
    auto after = before->at(t0 + 10s);
    REQUIRE(after->link_count() == before->link_count());
    for (const auto& entry : before->entries()) {
        INFO(entry.slug);
        const auto* now = after->find(entry.slug);
        REQUIRE(now != nullptr);
        CHECK(now->destination == entry.destination);
        CHECK(now->location ==
              refgate::domain::build_location(entry.destination, after->partner(*now)));
        if (entry.partner_index == 0) {
            // "=new": one destination names the parameter as "r%65f", which is replaced too.
            CHECK_THAT(std::string(now->location), Catch::Contains("=new%20code&"));
        } else {
            CHECK(now->location == entry.location);
        }
    }
    CHECK(after->find("nope") == nullptr);
}

TEST_CASE("a snapshot made by at() keeps serving after the one it came from is gone",
          "[snapshot][schedule]") {
    // Its entries' strings are its own: the source's go with the source (ASan sees a read of
    // them after that).
    const SysSeconds t0{seconds{1'800'000'000}};
    Partner changing = tailscale_with_extras();
    changing.scheduled_codes = {{t0 + 10s, "soon"}};
    Partner same = tailscale_with_extras();
    same.id = 8;
    same.slug = "other";
    auto changed = make_link("changed", "https://tailscale.com/pricing");
    changed.fallback = "https://tailscale.com/blog";
    auto unchanged = make_link("unchanged", "https://tailscale.com/kb", "other");
    unchanged.fallback = "https://tailscale.com/blog";

    auto before = Snapshot::build(1, {changing, same}, {changed, unchanged}, {}, "test", {}, t0);
    const std::string kept_location(before->find("unchanged")->location);
    auto after = before->at(t0 + 10s);
    before.reset();

    const auto* a = after->find("changed");
    REQUIRE(a != nullptr);
    CHECK_THAT(std::string(a->location), Catch::Contains("ref=soon"));
    CHECK(a->destination == "https://tailscale.com/pricing");
    CHECK(a->fallback == "https://tailscale.com/blog");
    const auto* u = after->find("unchanged");
    REQUIRE(u != nullptr);
    CHECK(u->location == kept_location);
    CHECK(u->destination == "https://tailscale.com/kb");
    CHECK(u->fallback == "https://tailscale.com/blog");
    CHECK(after->link(*u).fallback == "https://tailscale.com/blog");
}

}  // namespace snapshot_test

namespace snapshot_test {

TEST_CASE("automatic fallback's switched branches survive the snapshot file",
          "[snapshot][autofallback]") {
    auto link = make_link("tailscale", "https://tailscale.com/pricing");
    link.id = 21;
    link.fallback = "https://tailscale.com/blog";
    link.auto_fallback = true;
    refgate::domain::LinkRule ios;
    ios.platform = {"ios"};
    ios.destination = "https://tailscale.com/download/ios";
    link.rules = {ios};
    link.fallback_switches = {{"default", "broken", "http_404", 1795968000},
                              {"rules[0]", "unavailable", "OutOfStock", 1795968000},
                              {"rules[7]", "broken", "dns", 1795968000}};  // no such rule: ignored
    auto original = Snapshot::build(42, {tailscale_with_extras()}, {link}, {}, "pg");
    CHECK(original->serving_fallback() == 1);
    CHECK(original->find("tailscale")->default_failing);
    CHECK(original->branches()[0].failing);
    auto copy = read_snapshot_json(std::string_view(file_text(*original)), {});
    const Link l = copy->link(copy->entries()[0]);
    CHECK(l.auto_fallback);
    REQUIRE(l.fallback_switches.size() == 2);
    CHECK(l.fallback_switches[0].branch == "default");
    CHECK(l.fallback_switches[1].branch == "rules[0]");
    CHECK(copy->serving_fallback() == 1);
    CHECK(copy->branches()[0].failing);

    // Without auto_fallback the switches are not served.
    link.auto_fallback = false;
    auto off = Snapshot::build(43, {tailscale_with_extras()}, {link}, {}, "pg");
    CHECK(off->serving_fallback() == 0);
    CHECK_FALSE(off->find("tailscale")->default_failing);
    CHECK_FALSE(off->branches()[0].failing);
}

TEST_CASE("a link's click cap survives the snapshot file, and a null cap is none",
          "[snapshot][caps]") {
    auto capped = make_link("capped", "https://tailscale.com/pricing");
    capped.id = 1;
    capped.max_human_clicks = 500;
    auto open = make_link("open", "https://tailscale.com/kb");
    open.id = 2;
    auto original = Snapshot::build(5, {tailscale_with_extras()}, {capped, open}, {}, "pg");
    auto text = file_text(*original);
    CHECK_THAT(text, Catch::Contains("\"max_human_clicks\":null"));
    auto copy = read_snapshot_json(std::string_view(text), {});
    REQUIRE(copy->find("capped") != nullptr);
    CHECK(copy->link(*copy->find("capped")).max_human_clicks == 500);
    REQUIRE(copy->find("open") != nullptr);
    CHECK_FALSE(copy->link(*copy->find("open")).max_human_clicks);
    REQUIRE(copy->caps().size() == 1);
    CHECK(copy->caps()[0].link_id == 1);
    CHECK(copy->caps()[0].max_human_clicks == 500);
}

}  // namespace snapshot_test
