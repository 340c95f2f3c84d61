#include <catch2/catch.hpp>
#include <fstream>
#include <limits>
#include <thread>

#include "refgate/clicks/bucket_format.hpp"
#include "refgate/clicks/channel_cap.hpp"
#include "refgate/clicks/click_shard.hpp"
#include "refgate/clicks/salts.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/domain/counter_key.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace clicks_test {

using namespace refgate;

TEST_CASE("the channel is the src parameter when it is a plain tag, else direct", "[clicks]") {
    CHECK(domain::channel_of("src=newsletter-2026-48") == "newsletter-2026-48");
    CHECK(domain::channel_of("utm_source=x&src=blog.v2_a&src=other") == "blog.v2_a");
    CHECK(domain::channel_of("") == "direct");
    CHECK(domain::channel_of("source=blog") == "direct");
    CHECK(domain::channel_of("src=") == "direct");
    CHECK(domain::channel_of("src=Blog") == "direct");
    CHECK(domain::channel_of("src=-blog") == "direct");
    CHECK(domain::channel_of("src=a%20b") == "direct");
    const std::string longest = "weekly-newsletter-issue-48-from-the-team-at-pick";
    REQUIRE(longest.size() == 48);
    CHECK(domain::channel_of("src=" + longest) == longest);
    CHECK(domain::channel_of("src=" + longest + "s") == "direct");
    CHECK(domain::channel_of("src=user.name") == "user.name");
}

TEST_CASE("a src that looks like an e-mail address or an identifier counts as other",
          "[clicks][channels]") {
    // Channels as publishers write them pass.
    for (const char* channel :
         {"newsletter-2026-48", "blog", "nl.2026-12-04", "spring26-ig2", "q4promo2026-v2",
          "summer2026.insta2_story3", "20261204", "weeklydigest", "internationalnewsletter",
          "a1b2c3d4e5f6g7h", "x", "123456789", "deadbeef-cafe"}) {
        INFO(channel);
        CHECK_FALSE(domain::looks_like_identifier(channel));
        CHECK(domain::read_channel(std::string("src=") + channel).channel == channel);
        CHECK_FALSE(domain::read_channel(std::string("src=") + channel).identifier);
    }
    // E-mail addresses, numbers of 10+ digits, long mixed tokens, very long pieces and UUIDs do
    // not: they count as "other", which says a channel was given and not kept.
    for (const char* value :
         {"user@example.com", "user%40example.com", "alice.smith@mail.example", "0123456789",
          "u-4915112345678", "nl.1733300000123", "a1b2c3d4e5f6g7h8", "nl.8f3a9c2e1b7d4f60",
          "507f1f77bcf86cd799439011", "abcdefghijklmnopqrstuvwx",
          "8f3a9c2e-1b7d-4f60-a9e2-0c1d2e3f4a5b", "nl-8f3a9c2e-1b7d-4f60-a9e2-0c1d2e3f4a5b-x",
          "8F3A9C2E1B7D4F60A9E2"}) {
        INFO(value);
        CHECK(domain::looks_like_identifier(value));
        auto tag = domain::read_channel(std::string("src=") + value);
        CHECK(tag.channel == "other");
        CHECK(tag.identifier);
    }
    // Only the src parameter's value is looked at.
    CHECK(domain::read_channel("x=user@example.com&src=blog").channel == "blog");
    CHECK(domain::read_channel("src=blog&u=0123456789").channel == "blog");
}

constexpr std::int32_t kCapDay = 20'000;

TEST_CASE("a thread counts up to the cap of distinct channels per link and day, then other",
          "[clicks][channels]") {
    clicks::ChannelCap cap(3);
    auto admit = [&](std::int64_t link, std::string_view channel, std::int32_t day = kCapDay) {
        return std::string(cap.admit(link, day, channel).channel);
    };
    CHECK(admit(1, "a") == "a");
    CHECK(admit(1, "b") == "b");
    CHECK(admit(1, "c") == "c");
    auto past = cap.admit(1, kCapDay, "d");
    CHECK(past.channel == "other");
    CHECK(past.capped);
    // Channels already counted keep counting; direct and other never count against the cap.
    CHECK(admit(1, "a") == "a");
    CHECK_FALSE(cap.admit(1, kCapDay, "c").capped);
    CHECK(admit(1, "direct") == "direct");
    CHECK(admit(1, "other") == "other");
    CHECK_FALSE(cap.admit(1, kCapDay, "other").capped);
    // Another link, and the next day, start again.
    CHECK(admit(2, "d") == "d");
    CHECK(admit(1, "d", kCapDay + 1) == "d");
    CHECK(admit(1, "e", kCapDay + 1) == "e");
    // A click from just before midnight still finds its day.
    CHECK(admit(1, "a", kCapDay) == "a");
    CHECK(admit(1, "z", kCapDay) == "other");
}

TEST_CASE("a thread's channel memory stays within its bound whatever a client sends",
          "[clicks][channels]") {
    clicks::ChannelCap cap(1'000'000);
    constexpr std::int32_t kDay = 20'000;
    std::size_t kept = 0, capped = 0;
    // More distinct (link, channel) pairs than the tables may hold: past the bound they are
    // "other" too, and memory stops growing.
    const std::size_t pairs = clicks::ChannelCap::kMaxChannelSlots;
    for (std::size_t i = 0; i < pairs; ++i) {
        std::string channel = "r" + std::to_string(i);
        auto a = cap.admit(static_cast<std::int64_t>(i % 64), kDay, channel);
        (a.capped ? capped : kept) += 1;
    }
    CHECK(kept <= clicks::ChannelCap::kMaxChannelSlots * 3 / 4);
    CHECK(kept >= clicks::ChannelCap::kMaxChannelSlots / 2);
    CHECK(kept + capped == pairs);
}

TEST_CASE("the flusher folds a bucket's channels past the cap into other, most clicks first",
          "[clicks][channels]") {
    constexpr std::int32_t kDay = 20'000;
    auto key = [&](std::int64_t link, std::string_view channel,
                   domain::ClickClass cls = domain::ClickClass::human) {
        return domain::CounterKey(link, kDay, cls, channel);
    };
    clicks::ChannelCounts counts = {
        {key(1, "a"), 5},
        {key(1, "b"), 9},
        {key(1, "c"), 1},
        {
            key(1, "d"),
            9,
        },
        {key(1, "direct"), 7},
        {key(1, "b", domain::ClickClass::bot), 2},
        {key(2, "x"), 3},
        {domain::CounterKey::targeting(1, kDay, domain::ClickClass::human, "DE", 1, 0), 4}};
    std::uint64_t before = 0;
    for (const auto& [k, n] : counts) before += k.is_targeting() ? 0 : n;
    // Link 1 has "a" and "old" stored: with a cap of 3, one new channel fits.
    std::map<clicks::LinkAndDay, std::size_t> stored{{{1, kDay}, 2}};
    auto check = clicks::channels_to_check(counts, 3, stored);
    CHECK(check == std::vector<clicks::StoredChannel>{
                       {1, kDay, "a"}, {1, kDay, "b"}, {1, kDay, "c"}, {1, kDay, "d"}});
    std::set<clicks::StoredChannel> known{{1, kDay, "a"}};
    auto fold = clicks::fold_channels(counts, 3, stored, known);
    // "a" keeps its row; of b (11 clicks), d (9) and c (1) only b fits.
    std::map<std::string, std::uint64_t> link1;
    std::uint64_t after = 0;
    for (const auto& [k, n] : counts) {
        if (k.is_targeting()) continue;
        after += n;
        if (k.link_id == 1) link1[std::string(k.channel_view())] += n;
    }
    CHECK(link1 ==
          std::map<std::string, std::uint64_t>{{"a", 5}, {"b", 11}, {"direct", 7}, {"other", 10}});
    CHECK(fold.clicks == 10);
    CHECK(fold.channels == 2);
    CHECK(after == before);
    // Folding the same bucket against the same store gives the same answer.
    clicks::ChannelCounts again = {{key(1, "c"), 1}, {key(1, "d"), 9}, {key(1, "b"), 9}};
    auto second = clicks::fold_channels(again, 3, stored, known);
    CHECK(second.clicks == 10);
    CHECK(again[2].first.channel_view() == "b");
    // Link 2 was nowhere near the cap: nothing to look up, nothing moved.
    CHECK(clicks::channels_to_check({{key(2, "x"), 3}}, 3, {}).empty());
}

TEST_CASE("days are UTC days since the epoch", "[clicks]") {
    CHECK(domain::utc_day(0) == 0);
    CHECK(domain::utc_day(86'399) == 0);
    CHECK(domain::utc_day(86'400) == 1);
    CHECK(domain::utc_day(-1) == -1);
    CHECK(domain::format_day(domain::utc_day(1'795'975'200)) == "2026-11-29");
}

TEST_CASE("a counter key survives its trip through a Redis field name", "[clicks]") {
    domain::CounterKey key(42, domain::utc_day(1'795'975'200), domain::ClickClass::prefetch,
                           "newsletter-2026-48");
    CHECK(key.field() == "42|2026-11-29|newsletter-2026-48|prefetch");
    domain::CounterKey back;
    REQUIRE(domain::CounterKey::parse_field(key.field(), back));
    CHECK(back == key);
    CHECK_FALSE(domain::CounterKey::parse_field("42|2026-11-29|news", back));
    CHECK_FALSE(domain::CounterKey::parse_field("42|2026-13-01|news|human", back));
    CHECK_FALSE(domain::CounterKey::parse_field("x|2026-11-29|news|human", back));
    CHECK_FALSE(domain::CounterKey::parse_field("42|2026-11-29|News|human", back));
    CHECK_FALSE(domain::CounterKey::parse_field("42|2026-11-29|news|robot", back));
}

TEST_CASE("the longest counter key fits the field buffer and reads back", "[clicks]") {
    domain::CounterKey key(std::numeric_limits<std::int64_t>::min(),
                           domain::utc_day(253'402'300'799), domain::ClickClass::prefetch,
                           std::string(domain::kMaxChannelLength, 'z'));
    char buf[domain::CounterKey::kMaxFieldLength];
    std::size_t n = key.write_field(buf);
    CHECK(n == domain::CounterKey::kMaxFieldLength);
    CHECK(std::string_view(buf, n) == key.field());
    CHECK(key.field() == "-9223372036854775808|9999-12-31|" + std::string(48, 'z') + "|prefetch");
    CHECK(domain::format_day(domain::utc_day(0)) == "1970-01-01");
    CHECK(domain::format_day(domain::utc_day(951'782'400)) == "2000-02-29");
}

TEST_CASE("a parsed day must be a real date in its fixed form", "[clicks]") {
    domain::CounterKey back;
    REQUIRE(domain::CounterKey::parse_field("7|2000-02-29|direct|bot", back));
    CHECK(back.day == domain::utc_day(951'782'400));
    CHECK_FALSE(domain::CounterKey::parse_field("7|2001-02-29|direct|bot", back));
    CHECK_FALSE(domain::CounterKey::parse_field("7|2026-1-129|direct|bot", back));
    CHECK_FALSE(domain::CounterKey::parse_field("7|2026 11 29|direct|bot", back));
    // Found by the bucket_fields fuzz target: "-000" read as year 0, which is written "0000".
    CHECK_FALSE(domain::CounterKey::parse_field("42|-000-11-29|direct|bot", back));
    CHECK_FALSE(domain::CounterKey::parse_field("42|+000-11-29|direct|bot", back));
    CHECK_FALSE(domain::CounterKey::parse_field("7|2026-11-2x|direct|bot", back));
}

TEST_CASE("a counter field is read only in the spelling the writer gives it", "[clicks]") {
    // Another spelling would count the clicks of one counter under a second, or another link.
    domain::CounterKey back;
    REQUIRE(domain::CounterKey::parse_field("-3|2026-11-29|direct|bot", back));
    CHECK(back.link_id == -3);
    CHECK_FALSE(
        domain::CounterKey::parse_field("922337203685477A807|2026-11-29|direct|human", back));
    CHECK_FALSE(domain::CounterKey::parse_field("42x|2026-11-29|direct|human", back));
    CHECK_FALSE(domain::CounterKey::parse_field("042|2026-11-29|direct|human", back));
    CHECK_FALSE(domain::CounterKey::parse_field("-0|2026-11-29|direct|human", back));
    CHECK_FALSE(domain::CounterKey::parse_field("|2026-11-29|direct|human", back));
    CHECK_FALSE(domain::CounterKey::parse_field("7|-001-11-29|direct|human", back));
}

namespace {

std::vector<std::pair<std::string, std::uint64_t>> decode(std::string_view name,
                                                          std::string_view value, bool& ok) {
    std::vector<std::pair<std::string, std::uint64_t>> out;
    ok = clicks::decode_bucket_field(
        name, value,
        [&](std::string_view field, std::uint64_t clicks) { out.emplace_back(field, clicks); });
    return out;
}

}  // namespace

TEST_CASE("a batch of counts is one bucket field that reads back line by line", "[clicks]") {
    domain::CounterKey a(42, domain::utc_day(1'795'975'200), domain::ClickClass::human,
                         "newsletter");
    domain::CounterKey b(7, domain::utc_day(1'795'975'200), domain::ClickClass::bot, "direct");
    std::string blob;
    clicks::append_batch_line(blob, a, 3);
    clicks::append_batch_line(blob, b, 18'446'744'073'709'551'615ULL);
    clicks::append_batch_line(blob, a, 1);  // the same counter from a second shard
    CHECK(blob ==
          "42|2026-11-29|newsletter|human 3\n7|2026-11-29|direct|bot 18446744073709551615\n"
          "42|2026-11-29|newsletter|human 1\n");
    bool ok = false;
    auto counts = decode("batch:ab12:7", blob, ok);
    CHECK(ok);
    REQUIRE(counts.size() == 3);
    CHECK(counts[0] == std::pair<std::string, std::uint64_t>(a.field(), 3));
    CHECK(counts[1].second == 18'446'744'073'709'551'615ULL);
    CHECK(decode("batch:empty", "", ok).empty());
    CHECK(ok);
}

TEST_CASE("a bucket field in the older one-counter form still reads", "[clicks]") {
    bool ok = false;
    auto counts = decode("42|2026-11-29|direct|human", "12", ok);
    CHECK(ok);
    REQUIRE(counts.size() == 1);
    CHECK(counts[0] == std::pair<std::string, std::uint64_t>("42|2026-11-29|direct|human", 12));
}

TEST_CASE("a malformed bucket field is refused, not read as zero", "[clicks]") {
    bool ok = true;
    decode("42|2026-11-29|direct|human", "12x", ok);
    CHECK_FALSE(ok);
    decode("42|2026-11-29|direct|human", "", ok);
    CHECK_FALSE(ok);
    decode("42|2026-11-29|direct|human", "-1", ok);
    CHECK_FALSE(ok);
    auto before = decode("batch:x", "42|2026-11-29|direct|human 2\n7|2026-11-29|direct|bot", ok);
    CHECK_FALSE(ok);  // the last line has no count and no end
    CHECK(before.size() == 1);
    decode("batch:x", "42|2026-11-29|direct|human two\n", ok);
    CHECK_FALSE(ok);
    decode("batch:x", "42|2026-11-29|direct|human\n", ok);
    CHECK_FALSE(ok);
}

TEST_CASE("a unique sample sent once is known, and only that one", "[clicks]") {
    clicks::SentSamples sent;
    clicks::UniqueSample s{42, 20'000, 0x1234'5678'9abc'def0ULL};
    CHECK_FALSE(sent.contains(s));
    sent.insert(s);
    CHECK(sent.contains(s));
    CHECK_FALSE(sent.contains({43, 20'000, s.hash}));
    CHECK_FALSE(sent.contains({42, 20'001, s.hash}));
    CHECK_FALSE(sent.contains({42, 20'000, s.hash + 1}));
    // Bounded: many more samples than slots push old ones out; none is ever reported sent wrongly.
    std::size_t known = 0;
    for (std::uint64_t i = 0; i < 4 * (std::uint64_t{1} << clicks::SentSamples::kSlotBits); ++i) {
        sent.insert({1, 20'000, i * 0x9e37'79b9'7f4a'7c15ULL});
    }
    for (std::uint64_t i = 0; i < 1000; ++i) {
        if (sent.contains({2, 20'000, i * 0x9e37'79b9'7f4a'7c15ULL})) ++known;
    }
    CHECK(known == 0);
}

// This process's anonymous resident memory (RssAnon), in KiB.
long rss_anon_kib() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("RssAnon:", 0) == 0) return std::stol(line.substr(8));
    }
    return -1;
}

TEST_CASE("the sent-sample memory grows with the samples, not 2 MiB at the first", "[clicks]") {
    long before = rss_anon_kib();
    REQUIRE(before > 0);
    clicks::SentSamples sent;
    for (std::uint64_t i = 0; i < 16; ++i) sent.insert({7, 20'000, i * 0x9e37'79b9'7f4a'7c15ULL});
    CHECK(sent.contains({7, 20'000, 3 * 0x9e37'79b9'7f4a'7c15ULL}));
    // 16 samples touch at most 16 of its 512 pages (a zero-filled table took all 2,048 KiB).
    CHECK(rss_anon_kib() - before < 512);
}

TEST_CASE("a shard hands over every count once and starts again from zero", "[clicks]") {
    clicks::ClickShard shard;
    domain::CounterKey a(1, 100, domain::ClickClass::human, "direct");
    domain::CounterKey b(1, 100, domain::ClickClass::bot, "direct");
    for (int i = 0; i < 5; ++i) shard.count(a);
    shard.count(b);
    clicks::DrainedClicks first;
    shard.drain(first);
    REQUIRE(first.counts.size() == 2);
    std::uint64_t total = 0;
    for (const auto& [key, n] : first.counts) total += n;
    CHECK(total == 6);
    clicks::DrainedClicks second;
    shard.drain(second);
    CHECK(second.counts.empty());
    shard.count(a);
    clicks::DrainedClicks third;
    shard.drain(third);
    REQUIRE(third.counts.size() == 1);
    CHECK(third.counts[0].second == 1);
}

TEST_CASE("a counter table grows past any number of keys, and a quiet window gives the room back",
          "[clicks]") {
    clicks::CounterTable table;
    const std::size_t first_slots = table.slots();
    // 50,000 keys (links, channels and classes mixed), each counted (link % 3) + 1 times.
    std::uint64_t expected = 0;
    for (std::int64_t link = 1; link <= 25'000; ++link) {
        for (domain::ClickClass cls : {domain::ClickClass::human, domain::ClickClass::bot}) {
            domain::CounterKey key(link, 20'000, cls, link % 2 == 0 ? "direct" : "newsletter-48");
            for (std::int64_t i = 0; i <= link % 3; ++i) table.add(key);
            expected += static_cast<std::uint64_t>(link % 3 + 1);
        }
    }
    CHECK(table.size() == 50'000);
    CHECK(table.slots() > first_slots);

    std::vector<std::pair<domain::CounterKey, std::uint64_t>> taken;
    std::size_t steps = 0;
    table.take_all(taken, [&] { ++steps; });
    REQUIRE(taken.size() == 50'000);
    std::uint64_t total = 0;
    bool right = true;
    for (const auto& [key, n] : taken) {
        total += n;
        right = right && n == static_cast<std::uint64_t>(key.link_id % 3 + 1);
    }
    CHECK(total == expected);
    CHECK(right);
    CHECK(steps >= 50'000);  // the drain offers the CPU as it goes
    CHECK(table.size() == 0);
    const std::size_t busy_slots = table.slots();
    CHECK(busy_slots >= 2 * 50'000);  // room for a busier window, made off the hot path

    // Counting again after the drain starts from zero in the same slots.
    domain::CounterKey again(1, 20'000, domain::ClickClass::human, "newsletter-48");
    table.add(again);
    taken.clear();
    table.take_all(taken, [] {});
    REQUIRE(taken.size() == 1);
    CHECK(taken[0].second == 1);
    // A quiet window: the table shrinks back.
    table.take_all(taken, [] {});
    CHECK(table.slots() < busy_slots);
}

TEST_CASE("unique samples past the shard's bound are dropped and counted", "[clicks]") {
    clicks::ClickShard shard(3);
    for (int i = 0; i < 5; ++i) shard.sample({1, 100, static_cast<std::uint64_t>(i)});
    clicks::DrainedClicks drained;
    shard.drain(drained);
    CHECK(drained.samples.size() == 3);
    CHECK(drained.samples_dropped == 2);
}

TEST_CASE("counting from several threads at once loses nothing", "[clicks]") {
    clicks::ClickShard shard;
    domain::CounterKey key(7, 1, domain::ClickClass::human, "direct");
    std::uint64_t drained_total = 0;
    std::uint64_t samples_total = 0;
    std::atomic<bool> done{false};
    auto add = [&](const clicks::DrainedClicks& d) {
        for (const auto& [k, n] : d.counts) drained_total += n;
        samples_total += d.samples.size() + d.samples_dropped;
    };
    std::thread drainer([&] {
        while (!done) {
            clicks::DrainedClicks d;
            shard.drain(d);
            add(d);
        }
    });
    std::thread writer([&] {
        for (int i = 0; i < 100'000; ++i) {
            // Every tenth click on one of 20,000 other links: the sides' tables grow meanwhile.
            if (i % 10 == 0) {
                shard.count(domain::CounterKey(1'000 + i / 10 % 20'000, 1,
                                               domain::ClickClass::human, "direct"));
            } else {
                shard.count(key);
            }
            shard.sample({7, 1, static_cast<std::uint64_t>(i)});
        }
    });
    writer.join();
    done = true;
    drainer.join();
    clicks::DrainedClicks rest;
    shard.drain(rest);
    add(rest);
    CHECK(drained_total == 100'000);
    CHECK(samples_total == 100'000);
}

TEST_CASE("SipHash-2-4 matches the reference vectors", "[clicks]") {
    clicks::SaltKey key;
    for (int i = 0; i < 16; ++i) key[i] = static_cast<std::uint8_t>(i);
    // The paper's vectors: key 00..0f, message 00..(n-1); a tail of every kind, whole words.
    auto message = [](int n) {
        std::string m;
        for (int i = 0; i < n; ++i) m.push_back(static_cast<char>(i));
        return m;
    };
    CHECK(clicks::siphash24(key, "") == 0x726fdb47dd0e0e31ULL);
    CHECK(clicks::siphash24(key, message(7)) == 0xab0200f58b01d137ULL);
    CHECK(clicks::siphash24(key, message(8)) == 0x93f5f5799a932462ULL);
    CHECK(clicks::siphash24(key, message(15)) == 0xa129ca6149be45e5ULL);
    CHECK(clicks::siphash24(key, message(16)) == 0x3f2acc7f57c29bdbULL);
    CHECK(clicks::siphash24(key, message(63)) == 0x958a324ceb064572ULL);
}

TEST_CASE("the unique hash is SipHash-2-4 of address, UA length, UA and link, however long the UA",
          "[clicks]") {
    // The hash is fed in pieces that straddle 8-byte words; a click counted by an older instance
    // during a rolling upgrade must give the same value.
    clicks::SaltKey salt;
    for (int i = 0; i < 16; ++i) salt[i] = static_cast<std::uint8_t>(100 + i);
    std::array<std::uint8_t, 16> addr{};
    for (int i = 0; i < 16; ++i) addr[i] = static_cast<std::uint8_t>(7 * i);
    std::string agent;
    for (int n = 0; n <= 40; ++n) {
        std::int64_t link = 0x0102030405060708LL + n;
        std::string whole(addr.begin(), addr.end());
        whole.push_back(static_cast<char>(agent.size() & 0xff));
        whole.push_back(static_cast<char>(agent.size() >> 8));
        whole += agent;
        for (int i = 0; i < 8; ++i) whole.push_back(static_cast<char>((link >> (8 * i)) & 0xff));
        CHECK(clicks::unique_hash(salt, addr, agent, link) == clicks::siphash24(salt, whole));
        agent.push_back(static_cast<char>('a' + n % 26));
    }
}

TEST_CASE("the unique hash changes with the salt, the reader and the link", "[clicks]") {
    clicks::SaltKey salt{};
    clicks::SaltKey other{};
    other[0] = 1;
    std::array<std::uint8_t, 16> addr{};
    addr[15] = 1;
    auto h = clicks::unique_hash(salt, addr, "Mozilla/5.0", 1);
    CHECK(h == clicks::unique_hash(salt, addr, "Mozilla/5.0", 1));
    CHECK(h != clicks::unique_hash(other, addr, "Mozilla/5.0", 1));
    CHECK(h != clicks::unique_hash(salt, addr, "Mozilla/5.1", 1));
    CHECK(h != clicks::unique_hash(salt, addr, "Mozilla/5.0", 2));
    addr[15] = 2;
    CHECK(h != clicks::unique_hash(salt, addr, "Mozilla/5.0", 1));
}

TEST_CASE("a salt reader sees new salts and forgets neither of the two days", "[clicks]") {
    clicks::SaltBox box;
    clicks::SaltReader reader(box);
    clicks::SaltKey out;
    CHECK_FALSE(reader.get(100, out));
    clicks::SaltKey today{};
    today[0] = 7;
    clicks::SaltKey tomorrow{};
    tomorrow[0] = 8;
    box.set(100, today);
    box.set(101, tomorrow);
    REQUIRE(reader.get(100, out));
    CHECK(out == today);
    REQUIRE(reader.get(101, out));
    CHECK(out == tomorrow);
    box.set(102, today);  // replaces day 100
    CHECK_FALSE(reader.get(100, out));
    CHECK(reader.get(101, out));
}

}  // namespace clicks_test
