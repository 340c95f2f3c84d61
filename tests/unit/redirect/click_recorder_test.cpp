#include "refgate/redirect/click_recorder.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace click_recorder_test {

using namespace refgate;

namespace {

constexpr std::int64_t kNoon = 1'795'953'600;  // 2026-11-29T12:00:00Z
constexpr const char* kBrowser =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36";

struct Fixture {
    clicks::ClickShard shard;
    clicks::SaltBox salts;
    std::vector<domain::IpNetwork> trusted;
    redirect::ClickRecorder recorder{shard, salts, domain::ClickClassifier::builtin(), trusted};
    std::vector<http::HeaderField> fields;

    Fixture() {
        clicks::SaltKey salt{};
        salt[3] = 9;
        salts.set(domain::utc_day(kNoon), salt);
    }

    clicks::DrainedClicks click(std::string target, std::vector<http::HeaderField> headers,
                                http::Method method = http::Method::get) {
        fields = std::move(headers);
        http::Request request;
        request.method = method;
        request.target = target;
        request.fields = &fields;
        request.peer.bytes[15] = 1;
        recorder.record(request, 42, kNoon);
        clicks::DrainedClicks drained;
        shard.drain(drained);
        return drained;
    }
};

}  // namespace

TEST_CASE("a browser click counts as human in its channel and feeds the unique estimate",
          "[recorder]") {
    Fixture f;
    auto d = f.click("/go/x?src=newsletter", {{"User-Agent", kBrowser}});
    REQUIRE(d.counts.size() == 1);
    CHECK(d.counts[0].first ==
          domain::CounterKey(42, domain::utc_day(kNoon), domain::ClickClass::human, "newsletter"));
    CHECK(d.counts[0].second == 1);
    CHECK(d.samples.size() == 1);
}

TEST_CASE("past the channel cap a link's clicks count as other, every click still counted",
          "[recorder][channels]") {
    clicks::ClickShard shard;
    clicks::SaltBox salts;
    std::vector<domain::IpNetwork> trusted;
    redirect::ClickRecorder recorder(shard, salts, domain::ClickClassifier::builtin(), trusted,
                                     nullptr, 2);
    std::vector<http::HeaderField> fields{{"User-Agent", kBrowser}};
    auto click = [&](std::string target, std::int64_t link = 42) {
        http::Request request;
        request.method = http::Method::get;
        request.target = target;
        request.fields = &fields;
        recorder.record(request, link, kNoon);
    };
    click("/go/x?src=a");
    click("/go/x?src=b");
    click("/go/x?src=c");
    click("/go/x?src=a");
    click("/go/x?src=d");
    click("/go/x");
    click("/go/x?src=c", 43);
    click("/go/x?src=alice%40example.com");
    clicks::DrainedClicks d;
    shard.drain(d);
    std::map<std::pair<std::int64_t, std::string>, std::uint64_t> counts;
    for (const auto& [key, n] : d.counts)
        counts[{key.link_id, std::string(key.channel_view())}] += n;
    CHECK(counts ==
          std::map<std::pair<std::int64_t, std::string>, std::uint64_t>{{{42, "a"}, 2},
                                                                        {{42, "b"}, 1},
                                                                        {{42, "other"}, 3},
                                                                        {{42, "direct"}, 1},
                                                                        {{43, "c"}, 1}});
    CHECK(d.capped == 2);
    CHECK(d.identifiers == 1);
}

TEST_CASE("HEAD, crawlers and prefetches are counted but are not human", "[recorder]") {
    Fixture f;
    auto head = f.click("/go/x", {{"User-Agent", kBrowser}}, http::Method::head);
    CHECK(head.counts[0].first.click_class == static_cast<std::uint8_t>(domain::ClickClass::bot));
    CHECK(head.samples.empty());
    auto slack = f.click(
        "/go/x", {{"User-Agent", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"}});
    CHECK(slack.counts[0].first.click_class == static_cast<std::uint8_t>(domain::ClickClass::bot));
    auto prefetch = f.click("/go/x", {{"User-Agent", kBrowser}, {"Sec-Purpose", "prefetch"}});
    CHECK(prefetch.counts[0].first.click_class ==
          static_cast<std::uint8_t>(domain::ClickClass::prefetch));
    CHECK(prefetch.samples.empty());
}

TEST_CASE("DNT and GPC clicks are counted but left out of the unique estimate", "[recorder]") {
    Fixture f;
    auto dnt = f.click("/go/x", {{"User-Agent", kBrowser}, {"DNT", "1"}});
    CHECK(dnt.counts.size() == 1);
    CHECK(dnt.samples.empty());
    auto gpc = f.click("/go/x", {{"User-Agent", kBrowser}, {"Sec-GPC", "1"}});
    CHECK(gpc.counts.size() == 1);
    CHECK(gpc.samples.empty());
}

TEST_CASE("without the day's salt a click is counted and no sample is taken", "[recorder]") {
    clicks::ClickShard shard;
    clicks::SaltBox salts;
    std::vector<domain::IpNetwork> trusted;
    redirect::ClickRecorder recorder(shard, salts, domain::ClickClassifier::builtin(), trusted);
    std::vector<http::HeaderField> fields{{"User-Agent", kBrowser}};
    http::Request request;
    request.method = http::Method::get;
    request.target = "/go/x";
    request.fields = &fields;
    recorder.record(request, 1, kNoon);
    clicks::DrainedClicks d;
    shard.drain(d);
    CHECK(d.counts.size() == 1);
    CHECK(d.samples.empty());
}

TEST_CASE("a forwarded address is the reader only behind a trusted proxy", "[recorder]") {
    Fixture f;
    auto one = f.click("/go/x", {{"User-Agent", kBrowser}, {"X-Forwarded-For", "198.51.100.1"}});
    auto two = f.click("/go/x", {{"User-Agent", kBrowser}, {"X-Forwarded-For", "198.51.100.2"}});
    // Untrusted: both are the socket peer.
    CHECK(one.samples.at(0).hash == two.samples.at(0).hash);
    // The fixture's peer is ::1; trust it and the forwarded addresses become two readers.
    f.trusted.push_back(*domain::IpNetwork::parse("::1"));
    auto three = f.click("/go/x", {{"User-Agent", kBrowser}, {"X-Forwarded-For", "198.51.100.1"}});
    auto four = f.click("/go/x", {{"User-Agent", kBrowser}, {"X-Forwarded-For", "198.51.100.2"}});
    CHECK(three.samples.at(0).hash != four.samples.at(0).hash);
}

TEST_CASE("fields are found whatever their case, and the first of a repeated name counts",
          "[recorder]") {
    Fixture f;
    auto lower = f.click("/go/x", {{"user-agent", kBrowser}, {"sec-purpose", "prefetch"}});
    CHECK(lower.counts.at(0).first.click_class ==
          static_cast<std::uint8_t>(domain::ClickClass::prefetch));
    for (const char* name : {"Purpose", "X-Purpose", "X-MOZ"}) {
        auto d = f.click("/go/x", {{"User-Agent", kBrowser}, {name, "prefetch"}});
        INFO(name);
        CHECK(d.counts.at(0).first.click_class ==
              static_cast<std::uint8_t>(domain::ClickClass::prefetch));
    }
    auto first_agent = f.click(
        "/go/x", {{"User-Agent", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"},
                  {"User-Agent", kBrowser}});
    CHECK(first_agent.counts.at(0).first.click_class ==
          static_cast<std::uint8_t>(domain::ClickClass::bot));
    auto first_dnt = f.click("/go/x", {{"User-Agent", kBrowser}, {"DNT", "0"}, {"dnt", "1"}});
    CHECK(first_dnt.samples.size() == 1);
    auto gpc = f.click("/go/x", {{"User-Agent", kBrowser}, {"sec-gpc", "1"}});
    CHECK(gpc.samples.empty());
    // An empty first User-Agent is still the first: a browser's second one does not replace it.
    auto empty = f.click("/go/x", {{"User-Agent", ""}, {"User-Agent", kBrowser}});
    CHECK(empty.counts.at(0).first.click_class !=
          static_cast<std::uint8_t>(domain::ClickClass::human));
}

}  // namespace click_recorder_test
