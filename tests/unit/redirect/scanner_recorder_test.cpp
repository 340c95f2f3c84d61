#include <catch2/catch.hpp>

#include "refgate/redirect/click_recorder.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace scanner_recorder_test {

using namespace refgate;

namespace {

constexpr std::int64_t kNoon = 1'795'953'600;  // 2026-11-29T12:00:00Z
constexpr const char* kBrowser =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36";

struct Fixture {
    clicks::ClickShard shard;
    clicks::SaltBox salts;
    std::vector<domain::IpNetwork> trusted{*domain::IpNetwork::parse("10.0.0.0/8")};
    redirect::ScannerNetworksBox networks{
        domain::ScannerNetworks::parse("192.0.2.0/24  # a scanner's range\n")};
    redirect::ScannerSources sources{.networks = &networks, .burst_links = 4, .burst_seconds = 10};
    redirect::ClickRecorder recorder{shard, salts, domain::ClickClassifier::builtin(), trusted,
                                     &sources};
    std::vector<http::HeaderField> fields;

    Fixture() {
        clicks::SaltKey salt{};
        salt[3] = 9;
        salts.set(domain::utc_day(kNoon), salt);
    }

    // A click through the proxy 10.0.0.1 for `client`; what it counted.
    clicks::DrainedClicks click(const char* client, std::int64_t link, std::int64_t now,
                                const std::string& target = "/go/x?src=issue-48") {
        fields = {{"User-Agent", kBrowser}, {"X-Forwarded-For", client}};
        http::Request request;
        request.method = http::Method::get;
        request.target = target;
        request.fields = &fields;
        request.peer.bytes = *domain::parse_ip("10.0.0.1");
        recorder.record(request, link, now);
        clicks::DrainedClicks drained;
        shard.drain(drained);
        return drained;
    }
};

domain::ClickClass class_of(const clicks::DrainedClicks& d) {
    REQUIRE(d.counts.size() == 1);
    return static_cast<domain::ClickClass>(d.counts[0].first.click_class);
}

}  // namespace

TEST_CASE("a browser click from a listed network counts as scanner and feeds no unique estimate",
          "[recorder][scanner]") {
    Fixture f;
    auto d = f.click("192.0.2.44", 42, kNoon);
    CHECK(class_of(d) == domain::ClickClass::scanner);
    CHECK(d.counts[0].first.channel_view() == "issue-48");
    CHECK(d.samples.empty());
    auto reader = f.click("198.51.100.9", 42, kNoon);
    CHECK(class_of(reader) == domain::ClickClass::human);
    CHECK(reader.samples.size() == 1);
}

TEST_CASE("a client's fourth distinct link of one channel within seconds is a scanner's",
          "[recorder][scanner]") {
    Fixture f;
    for (std::int64_t link = 1; link <= 3; ++link) {
        // Before the threshold the clicks are counted as human (and sampled).
        auto d = f.click("198.51.100.20", link, kNoon + link);
        CHECK(class_of(d) == domain::ClickClass::human);
        CHECK(d.samples.size() == 1);
    }
    for (std::int64_t link = 4; link <= 9; ++link) {
        auto d = f.click("198.51.100.20", link, kNoon + 4);
        CHECK(class_of(d) == domain::ClickClass::scanner);
        CHECK(d.samples.empty());
    }
    // Another channel of the same client, and another client, start from zero.
    CHECK(class_of(f.click("198.51.100.20", 1, kNoon + 5, "/go/x?src=other")) ==
          domain::ClickClass::human);
    CHECK(class_of(f.click("198.51.100.21", 1, kNoon + 5)) == domain::ClickClass::human);
}

TEST_CASE("with the burst rule off, many links within a second stay human", "[recorder][scanner]") {
    Fixture f;
    f.sources.burst_links = 0;
    redirect::ClickRecorder recorder{f.shard, f.salts, domain::ClickClassifier::builtin(),
                                     f.trusted, &f.sources};
    std::vector<http::HeaderField> fields = {{"User-Agent", kBrowser}};
    http::Request request;
    request.method = http::Method::get;
    request.target = "/go/x";
    request.fields = &fields;
    request.peer.bytes = *domain::parse_ip("198.51.100.30");
    for (std::int64_t link = 1; link <= 10; ++link) recorder.record(request, link, kNoon);
    clicks::DrainedClicks drained;
    f.shard.drain(drained);
    std::uint64_t human = 0;
    for (const auto& [key, n] : drained.counts)
        if (key.click_class == static_cast<std::uint8_t>(domain::ClickClass::human)) human += n;
    CHECK(human == 10);
}

TEST_CASE("loopback, private and carrier-NAT addresses, shared by readers, are never a burst",
          "[recorder][scanner]") {
    Fixture f;
    for (const char* shared : {"127.0.0.1", "10.1.2.3", "192.168.1.9", "172.20.0.5", "100.64.3.2",
                               "fd00::7", "fe80::1", "::1"}) {
        INFO(shared);
        // 10.0.0.0/8 is trusted: the shared addresses other than 10.x are forwarded ones.
        for (std::int64_t link = 1; link <= 6; ++link)
            CHECK(class_of(f.click(shared, link, kNoon)) == domain::ClickClass::human);
    }
}

}  // namespace scanner_recorder_test
