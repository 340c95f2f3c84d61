#include "refgate/core/snapshot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace std::chrono;
using refgate::Link;
using refgate::Partner;
using refgate::Snapshot;
using refgate::SysSeconds;

Partner tailscale() {
    Partner p;
    p.id = 7;
    p.slug = "tailscale";
    p.name = "Tailscale";
    p.ref_param = "ref";
    p.ref_code = "picks42";
    p.allowed_domains = {"tailscale.com"};
    p.extra_params = {{"utm_medium", "affiliate"}, {"b", "2"}, {"a", "1"}};
    return p;
}

Link make_link(std::string slug, std::string destination, std::string partner = "tailscale") {
    Link l;
    l.slug = std::move(slug);
    l.partner = std::move(partner);
    l.destination = std::move(destination);
    return l;
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
    auto snapshot = Snapshot::build(3, {tailscale()}, {pricing}, {}, "test");

    CHECK(snapshot->version() == 3);
    CHECK(snapshot->source() == "test");
    CHECK(snapshot->link_count() == 1);
    CHECK(snapshot->rejected().empty());
    const refgate::LinkEntry* entry = snapshot->find("tailscale");
    REQUIRE(entry != nullptr);
    CHECK(entry->id == 11);
    CHECK(entry->location ==
          "https://tailscale.com/pricing?plan=pro&ref=picks42&utm_medium=affiliate&b=2&a=1#teams");
    CHECK(snapshot->partner(*entry).slug == "tailscale");
    CHECK(entry->expires_at == 0);
    CHECK(entry->fallback.empty());
}

TEST_CASE("a snapshot does not find slugs it does not hold", "[snapshot]") {
    auto snapshot = Snapshot::build(1, {tailscale()},
                                    {make_link("tailscale", "https://tailscale.com/")}, {}, "test");
    CHECK(snapshot->find("nope") == nullptr);
    CHECK(snapshot->find("") == nullptr);
    CHECK(snapshot->find("TAILSCALE") == nullptr);
}

TEST_CASE("a link edited by hand to leave the partner's domains is left out and reported",
          "[snapshot]") {
    auto snapshot = Snapshot::build(1, {tailscale()},
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
    auto snapshot = Snapshot::build(1, {tailscale()},
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
    auto snapshot =
        Snapshot::build(1, {tailscale()}, {make_link("plain-http", "http://tailscale.com/")},
                        refgate::UrlPolicy{.allow_http = true}, "test");
    REQUIRE(snapshot->find("plain-http") != nullptr);
    CHECK(snapshot->find("plain-http")->location ==
          "http://tailscale.com/?ref=picks42&utm_medium=affiliate&b=2&a=1");
}

TEST_CASE("a fallback outside the partner's domains is dropped but the link is kept",
          "[snapshot]") {
    auto l = make_link("tailscale", "https://tailscale.com/");
    l.fallback = "https://evil.com/";
    auto snapshot = Snapshot::build(1, {tailscale()}, {l}, {}, "test");
    REQUIRE(snapshot->find("tailscale") != nullptr);
    CHECK(snapshot->find("tailscale")->fallback.empty());
    CHECK(rejected_mentions(*snapshot, "tailscale"));
}

TEST_CASE("status, expiry, fallback and an inactive partner reach the link entry", "[snapshot]") {
    auto partner = tailscale();
    partner.active = false;
    auto l = make_link("tailscale", "https://tailscale.com/");
    l.status = refgate::LinkStatus::disabled;
    l.expires_at = SysSeconds{seconds{1795968000}};
    l.fallback = "https://tailscale.com/blog";
    l.utm_passthrough = true;
    auto snapshot = Snapshot::build(1, {partner}, {l}, {}, "test");
    const refgate::LinkEntry* entry = snapshot->find("tailscale");
    REQUIRE(entry != nullptr);
    CHECK(entry->status == refgate::LinkStatus::disabled);
    CHECK(entry->expires_at == 1795968000);
    CHECK(entry->fallback == "https://tailscale.com/blog");
    CHECK(entry->utm_passthrough);
    CHECK_FALSE(entry->partner_active);
}

TEST_CASE("a snapshot survives a round trip through its file format", "[snapshot]") {
    auto second = tailscale();
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
    second_link.status = refgate::LinkStatus::disabled;
    second_link.expires_at = SysSeconds{seconds{1795968000}};
    second_link.fallback = "https://xn--bcher-kva.example/";
    second_link.utm_passthrough = true;

    auto original = Snapshot::build(42, {tailscale(), second}, {first_link, second_link}, {}, "pg");
    auto doc = original->to_json();
    auto copy = Snapshot::from_json(nlohmann::ordered_json::parse(doc.dump()), {});

    CHECK(copy->version() == 42);
    CHECK(copy->source() == "file");
    CHECK(copy->to_json() == doc);
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
    CHECK(l.status == refgate::LinkStatus::disabled);
    CHECK(l.expires_at == second_link.expires_at);
    CHECK(l.fallback == second_link.fallback);
    CHECK(l.utm_passthrough);
    REQUIRE(copy->find("mullvad") != nullptr);
    CHECK(copy->find("mullvad")->location == "https://mullvad.net/de/?via=a%20b%26c&z=26&a=1&m=13");
    CHECK(copy->find("tailscale")->location == original->find("tailscale")->location);
}

TEST_CASE("the snapshot file written in pieces is the document, byte for byte", "[snapshot]") {
    auto partner = tailscale();
    partner.name = "Tail \"scale\" \u00e9";
    partner.scheduled_codes = {{SysSeconds{seconds{4'102'444'800}}, "in-2100"}};
    std::vector<refgate::Link> links;
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
    snapshot->write_json([&](std::string_view piece) {
        text.append(piece);
        ++pieces;
    });
    CHECK(pieces > 1);
    CHECK(text == snapshot->to_json().dump());
    CHECK_THAT(text, Catch::Contains("in-2100"));
}

TEST_CASE("the snapshot file read as a stream gives the snapshot that wrote it", "[snapshot]") {
    auto partner = tailscale();
    partner.scheduled_codes = {{SysSeconds{seconds{4'102'444'800}}, "in-2100"}};
    std::vector<refgate::Link> links;
    for (int i = 0; i < 3000; ++i) {
        auto link = make_link("link-" + std::to_string(i),
                              "https://tailscale.com/p/" + std::to_string(i) + "?q=%22x%22");
        link.id = i + 1;
        if (i % 2 == 0) link.fallback = "https://tailscale.com/blog";
        if (i % 3 == 0) link.expires_at = SysSeconds{seconds{1795968000}};
        if (i % 5 == 0) link.status = refgate::LinkStatus::disabled;
        link.utm_passthrough = i % 7 == 0;
        links.push_back(link);
    }
    auto written = Snapshot::build(9, {partner}, links, {}, "pg");
    std::string text;
    written->write_json([&](std::string_view piece) { text.append(piece); });

    std::istringstream in(text);
    auto read = Snapshot::read_json(in, {});
    CHECK(read->version() == 9);
    CHECK(read->source() == "file");
    CHECK(read->rejected().empty());
    CHECK(read->link_count() == 3000);
    CHECK(read->to_json() == written->to_json());
    CHECK(read->next_change() == written->next_change());
    REQUIRE(read->find("link-2999") != nullptr);
    CHECK(read->find("link-2999")->location == written->find("link-2999")->location);
}

TEST_CASE("a stream that is not a whole snapshot file is refused", "[snapshot]") {
    auto text =
        Snapshot::build(1, {tailscale()}, {make_link("x", "https://tailscale.com/")}, {}, "test")
            ->to_json()
            .dump();
    auto read = [](const std::string& t) {
        std::istringstream in(t);
        return Snapshot::read_json(in, {});
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

TEST_CASE("a document that is not a snapshot file is refused", "[snapshot]") {
    auto doc = Snapshot::build(1, {tailscale()}, {}, {}, "test")->to_json();
    doc["format"] = 2;
    CHECK_THROWS_AS(Snapshot::from_json(doc, {}), std::runtime_error);
    CHECK_THROWS_AS(Snapshot::from_json(nlohmann::ordered_json::array(), {}), std::runtime_error);
    auto bad_status =
        Snapshot::build(1, {tailscale()}, {make_link("x", "https://tailscale.com/")}, {}, "test")
            ->to_json();
    bad_status["links"][0]["status"] = "paused";
    CHECK_THROWS_AS(Snapshot::from_json(bad_status, {}), std::runtime_error);
}

TEST_CASE("a snapshot reader sees each newly published snapshot", "[snapshot]") {
    refgate::SnapshotStore store;
    refgate::SnapshotReader reader(store);
    CHECK(reader.get() == nullptr);

    auto first =
        Snapshot::build(1, {tailscale()}, {make_link("a", "https://tailscale.com/")}, {}, "t");
    store.publish(first);
    CHECK(reader.get() == first.get());
    CHECK(reader.get()->version() == 1);

    auto second =
        Snapshot::build(2, {tailscale()}, {make_link("b", "https://tailscale.com/")}, {}, "t");
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
        auto snapshot = Snapshot::build(
            1, {tailscale()}, {make_link("tailscale", "https://tailscale.com/p?#f")}, {}, "t");
        const refgate::LinkEntry* entry = snapshot->find("tailscale");
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
    Partner partner = tailscale();
    partner.scheduled_codes = {{t0 + 60s, "later"}, {t0 + 10s, "soon"}};
    auto pricing = make_link("tailscale", "https://tailscale.com/pricing");

    auto before = Snapshot::build(1, {partner}, {pricing}, {}, "test", {}, t0 + 9s);
    CHECK_THAT(before->find("tailscale")->location, Catch::Contains("ref=picks42"));
    CHECK(before->next_change() == t0 + 10s);
    CHECK_FALSE(before->schedule_due());

    // Rebuilt from the snapshot alone, as an instance does at that second.
    auto at = before->at(t0 + 10s);
    CHECK_THAT(at->find("tailscale")->location, Catch::Contains("ref=soon"));
    CHECK(at->partners()[0].ref_code == "soon");
    CHECK(at->next_change() == t0 + 60s);
    CHECK(at->schedule_due());
    CHECK(at->version() == 1);

    auto file = Snapshot::from_json(nlohmann::ordered_json::parse(before->to_json().dump()), {});
    CHECK(file->next_change() == t0 + 10s);
    CHECK(file->partners()[0].scheduled_codes.size() == 2);

    auto last = before->at(t0 + 3600s);
    CHECK_THAT(last->find("tailscale")->location, Catch::Contains("ref=later"));
    CHECK_FALSE(last->next_change());
    CHECK(last->partners()[0].scheduled_codes.empty());
}
