#include "refgate/redirect/scanner_check.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "refgate/redirect/click_recorder.hpp"
#include "refgate/tools/mmdb_writer.hpp"
#include "refgate/tools/range_file_writer.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace scanner_check_test {

using namespace refgate;
using refgate::tools::MmdbAsnWriter;
using refgate::tools::MmdbCountryWriter;

namespace {

domain::IpBytes ip(const char* text) { return *domain::parse_ip(text); }

// A database written by MmdbAsnWriter into a temporary file, removed at the end.
struct TestDatabase {
    std::string path;
    explicit TestDatabase(const MmdbAsnWriter& writer) {
        char name[] = "/tmp/refgate-asn-test.XXXXXX";
        int fd = ::mkstemp(name);
        REQUIRE(fd >= 0);
        ::close(fd);
        path = name;
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        auto bytes = writer.finish(1'795'953'600, "refgate test ASN database");
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    ~TestDatabase() { std::filesystem::remove(path); }
};

MmdbAsnWriter small_writer() {
    MmdbAsnWriter writer;
    writer.add(ip("198.51.100.0"), ip("198.51.100.255"), 64500, "Example Mail Security, Inc.");
    writer.add(ip("203.0.113.0"), ip("203.0.113.127"), 64501, "Example Cloud");
    writer.add(ip("203.0.113.130"), ip("203.0.113.140"), 64502, "Odd \"Range\" Networks");
    writer.add(ip("2001:db8::"), ip("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"), 64500,
               "Example Mail Security, Inc.");
    writer.add(ip("0.0.0.0"), ip("0.0.0.255"), 64503, "The very first block");
    return writer;
}

}  // namespace

TEST_CASE("a database written by MmdbAsnWriter reads back through libmaxminddb", "[scanner]") {
    TestDatabase db(small_writer());
    redirect::AsnDatabase asn(db.path);
    CHECK(asn.describe() == "refgate-ASN: refgate test ASN database");
    CHECK(asn.asn_of(ip("198.51.100.0")) == 64500u);
    CHECK(asn.asn_of(ip("198.51.100.255")) == 64500u);
    CHECK(asn.asn_of(ip("203.0.113.0")) == 64501u);
    CHECK(asn.asn_of(ip("203.0.113.127")) == 64501u);
    CHECK(asn.asn_of(ip("203.0.113.128")) == std::nullopt);
    CHECK(asn.asn_of(ip("203.0.113.130")) == 64502u);  // a range that is no CIDR block
    CHECK(asn.asn_of(ip("203.0.113.135")) == 64502u);
    CHECK(asn.asn_of(ip("203.0.113.140")) == 64502u);
    CHECK(asn.asn_of(ip("203.0.113.141")) == std::nullopt);
    CHECK(asn.asn_of(ip("0.0.0.9")) == 64503u);
    CHECK(asn.asn_of(ip("2001:db8:1234::5")) == 64500u);
    CHECK(asn.asn_of(ip("2001:db9::1")) == std::nullopt);
    CHECK(asn.asn_of(ip("127.0.0.1")) == std::nullopt);
}

TEST_CASE("an ASN database that is not one is refused at open, naming the file", "[scanner]") {
    MmdbAsnWriter empty;
    TestDatabase db(empty);
    { std::ofstream(db.path, std::ios::trunc) << "not a database"; }
    try {
        redirect::AsnDatabase asn(db.path);
        FAIL("opened");
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()).find(db.path) != std::string::npos);
    }
    CHECK_THROWS_AS(redirect::AsnDatabase("/nonexistent/asn.mmdb"), std::runtime_error);
}

TEST_CASE("an address range that ends before it starts or mixes families is refused", "[scanner]") {
    MmdbAsnWriter writer;
    CHECK_THROWS_AS(writer.add(ip("192.0.2.9"), ip("192.0.2.1"), 1, ""), std::invalid_argument);
    CHECK_THROWS_AS(writer.add(ip("192.0.2.9"), ip("2001:db8::"), 1, ""), std::invalid_argument);
}

TEST_CASE("a listed ASN or range makes the scanner check say so; other addresses pass",
          "[scanner]") {
    TestDatabase db(small_writer());
    redirect::AsnDatabase asn(db.path);
    redirect::ScannerNetworksBox box(domain::ScannerNetworks::parse("AS64500\n192.0.2.0/28\n"));
    redirect::ScannerCheck check({.asn = &asn, .networks = &box});
    CHECK(check.from_listed_network(ip("198.51.100.7")));
    CHECK(check.from_listed_network(ip("2001:db8::1")));
    CHECK(check.from_listed_network(ip("192.0.2.3")));
    CHECK_FALSE(check.from_listed_network(ip("203.0.113.5")));  // AS64501, not listed
    CHECK_FALSE(check.from_listed_network(ip("127.0.0.1")));
    // A new list (SIGHUP) reaches the check at its next click.
    box.set(domain::ScannerNetworks::parse("AS64501\n"));
    CHECK(check.from_listed_network(ip("203.0.113.5")));
    CHECK_FALSE(check.from_listed_network(ip("198.51.100.7")));
}

TEST_CASE("without an ASN database only listed ranges count", "[scanner]") {
    redirect::ScannerNetworksBox box(domain::ScannerNetworks::parse("AS64500\n192.0.2.0/28\n"));
    redirect::ScannerCheck check({.networks = &box});
    CHECK(check.from_listed_network(ip("192.0.2.3")));
    CHECK_FALSE(check.from_listed_network(ip("198.51.100.7")));
}

namespace {

domain::IpBytes v4(std::uint32_t n) {
    domain::IpBytes a{};
    a[10] = a[11] = 0xff;
    for (int i = 0; i < 4; ++i) a[12 + i] = static_cast<std::uint8_t>(n >> (24 - 8 * i));
    return a;
}

domain::IpBytes random_address(std::mt19937_64& rng, int kind) {
    domain::IpBytes a{};
    switch (kind % 4) {
        case 0:  // IPv6 in 2000::/4
            for (auto& b : a) b = static_cast<std::uint8_t>(rng());
            a[0] = static_cast<std::uint8_t>(0x20 | (a[0] & 0x0f));
            return a;
        case 1:  // IPv6 in and beside 2001:db8::/32
            a = *domain::parse_ip(rng() % 2 ? "2001:db8::" : "2001:db9::");
            a[15] = static_cast<std::uint8_t>(rng());
            return a;
        case 2:  // any IPv4
            return v4(static_cast<std::uint32_t>(rng()));
        default:  // IPv4 where the ranges are
            return v4(0x01000000 + static_cast<std::uint32_t>(rng() % 0x0c000000));
    }
}

}  // namespace

TEST_CASE("the listed ASNs' ranges walked out of the database answer every address as it does",
          "[scanner]") {
    // 3000 ascending ranges over six ASNs from 1.0.0.0: some one address, some adjacent to the
    // next (another ASN), plus IPv6 ones.
    std::mt19937_64 rng(7);
    MmdbAsnWriter writer;
    std::uint32_t first = 0x01000000;
    for (int i = 0; i < 3000; ++i) {
        auto width = rng() % 5 == 0 ? 0 : static_cast<std::uint32_t>(rng() % 70000);
        writer.add(v4(first), v4(first + width), 64500 + static_cast<std::uint32_t>(rng() % 6),
                   "AS");
        first += width + 1 + (rng() % 3 == 0 ? 0 : static_cast<std::uint32_t>(rng() % 65536));
    }
    writer.add(ip("2001:db8::"), ip("2001:db8::7f"), 64500, "AS");
    writer.add(ip("2001:db8::80"), ip("2001:db8::ff"), 64501, "AS");
    writer.add(ip("2001:db9::"), ip("2001:db9::ffff"), 64505, "AS");
    TestDatabase db(writer);
    redirect::AsnDatabase asn(db.path);
    const std::vector<std::uint32_t> listed{64500, 64502, 64505};
    auto listed_by_database = [&](const domain::IpBytes& a) {
        auto n = asn.asn_of(a);
        return n && std::binary_search(listed.begin(), listed.end(), *n);
    };
    auto ranges = asn.ranges_of(listed, {});
    REQUIRE(ranges);
    CHECK(ranges->size() > 500);
    int mismatches = 0, inside = 0;
    for (int i = 0; i < 80'000; ++i) {
        domain::IpBytes a = random_address(rng, i);
        bool expected = listed_by_database(a);
        inside += expected;
        mismatches += ranges->contains(a) != expected;
    }
    CHECK(mismatches == 0);
    CHECK(inside > 5'000);  // the sample does reach the listed ranges

    // The check answers from the ranges once they are published with the list.
    domain::ScannerNetworks networks =
        domain::ScannerNetworks::parse("AS64500\nAS64502\nAS64505\n");
    networks.asn_ranges = std::make_shared<const domain::AddressRanges>(*ranges);
    redirect::ScannerNetworksBox box(std::move(networks));
    redirect::ScannerCheck check({.asn = &asn, .networks = &box});
    for (int i = 0; i < 4'000; ++i) {
        domain::IpBytes a = random_address(rng, i);
        CHECK(check.from_listed_network(a) == listed_by_database(a));
    }
}

TEST_CASE("the ASN database's range file, mapped, answers every address as the database does",
          "[scanner]") {
    std::mt19937_64 rng(11);
    MmdbAsnWriter writer;
    std::uint32_t first = 0x01000000;
    for (int i = 0; i < 3000; ++i) {
        auto width = rng() % 5 == 0 ? 0 : static_cast<std::uint32_t>(rng() % 70000);
        writer.add(v4(first), v4(first + width), 64500 + static_cast<std::uint32_t>(rng() % 6),
                   "AS");
        first += width + 1 + (rng() % 3 == 0 ? 0 : static_cast<std::uint32_t>(rng() % 65536));
    }
    writer.add(ip("2001:db8::"), ip("2001:db8::7f"), 64500, "AS");
    writer.add(ip("2001:db9::"), ip("2001:db9::ffff"), 64505, "AS");
    TestDatabase db(writer);
    redirect::AsnDatabase asn(db.path);
    auto table = asn.all_ranges({});
    REQUIRE(table);
    TestDatabase ranges_file(MmdbAsnWriter{});  // a temporary path, overwritten
    {
        std::ofstream out(ranges_file.path, std::ios::binary | std::ios::trunc);
        auto bytes = tools::write_range_file(table->tables(), asn.source().build_epoch,
                                             asn.source().node_count);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    redirect::MappedAsnRanges mapped(ranges_file.path, asn.source());
    int mismatches = 0, known = 0;
    for (int i = 0; i < 80'000; ++i) {
        domain::IpBytes a = random_address(rng, i);
        auto expected = asn.asn_of(a);
        known += expected.has_value();
        mismatches += mapped.asn_of(a) != expected;
    }
    CHECK(mismatches == 0);
    CHECK(known > 10'000);
    for (const char* a : {"::", "::1.0.0.1", "2002:100:1::", "2001:db8::1", "255.255.255.255"})
        CHECK(mapped.asn_of(ip(a)) == asn.asn_of(ip(a)));

    // The check asks the mapped ranges, and a new list needs no walk.
    redirect::ScannerNetworksBox box(domain::ScannerNetworks::parse("AS64500\n"));
    redirect::ScannerCheck check({.asn = &asn, .asn_ranges = &mapped, .networks = &box});
    CHECK(check.from_listed_network(ip("2001:db8::1")));
    CHECK_FALSE(check.from_listed_network(ip("2001:db9::1")));
    box.set(domain::ScannerNetworks::parse("AS64505\n"));
    CHECK(check.from_listed_network(ip("2001:db9::1")));
    CHECK_FALSE(check.from_listed_network(ip("2001:db8::1")));

    // Ranges of another build of the database are refused.
    redirect::MmdbSource other = asn.source();
    ++other.build_epoch;
    CHECK_THROWS_WITH(redirect::MappedAsnRanges(ranges_file.path, other),
                      Catch::Contains("made from another build of the database"));
    CHECK_THROWS_WITH(redirect::MappedAsnRanges(db.path, asn.source()),
                      Catch::Contains("wrong magic"));
}

TEST_CASE("a stopped walk of the ASN database gives no ranges", "[scanner]") {
    TestDatabase db(small_writer());
    redirect::AsnDatabase asn(db.path);
    std::stop_source stop;
    stop.request_stop();
    CHECK_FALSE(asn.ranges_of({64500}, stop.get_token()));
    auto ranges = asn.ranges_of({64500}, {});
    REQUIRE(ranges);
    CHECK(ranges->contains(ip("198.51.100.9")));
    CHECK(ranges->contains(ip("2001:db8:77::1")));
    CHECK_FALSE(ranges->contains(ip("203.0.113.5")));
}

namespace {

// A newsletter issue's send: 12 links in channel issue-48, recorded through a trusted proxy.
struct NewsletterSend {
    static constexpr std::int64_t kDelivery = 1'795'953'600;  // 2026-11-29T12:00:00Z
    static constexpr std::int64_t kLinks = 12;
    TestDatabase db{[] {
        MmdbAsnWriter writer;
        writer.add(ip("198.51.100.0"), ip("198.51.100.255"), 64500, "Example Mail Security");
        writer.add(ip("2001:db8:aaaa::"), ip("2001:db8:aaaa:ffff:ffff:ffff:ffff:ffff"), 64500,
                   "Example Mail Security");
        writer.add(ip("203.0.113.0"), ip("203.0.113.255"), 64501, "Example Broadband");
        writer.add(ip("2001:db8:1::"), ip("2001:db8:1:ffff:ffff:ffff:ffff:ffff"), 64502,
                   "Example Mobile");
        return writer;
    }()};
    redirect::AsnDatabase asn{db.path};
    redirect::ScannerNetworksBox networks{
        domain::ScannerNetworks::parse("AS64500  # Example Mail Security\n")};
    redirect::ScannerSources sources{.asn = &asn, .networks = &networks};
    clicks::ClickShard shard;
    clicks::SaltBox salts;
    std::vector<domain::IpNetwork> trusted{*domain::IpNetwork::parse("127.0.0.1")};
    redirect::ClickRecorder recorder{shard, salts, domain::ClickClassifier::builtin(), trusted,
                                     &sources};
    std::vector<http::HeaderField> fields;

    NewsletterSend() { salts.set(domain::utc_day(kDelivery), clicks::SaltKey{1, 2, 3}); }

    void click(const std::string& client, std::int64_t link, std::int64_t at) {
        fields = {{"User-Agent",
                   "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, "
                   "like Gecko) Version/18.1 Safari/605.1.15"},
                  {"X-Forwarded-For", client}};
        http::Request request;
        request.method = http::Method::get;
        request.target = "/go/x?src=issue-48";
        request.fields = &fields;
        request.peer.bytes = ip("127.0.0.1");
        recorder.record(request, link, at);
    }

    std::array<std::uint64_t, domain::kClickClassCount> by_class() {
        clicks::DrainedClicks drained;
        shard.drain(drained);
        std::array<std::uint64_t, domain::kClickClassCount> out{};
        for (const auto& [key, n] : drained.counts) out[key.click_class] += n;
        return out;
    }
};

}  // namespace

TEST_CASE(
    "a newsletter send: the scanners' burst from a provider network is scanner and the human "
    "count equals the readers' clicks",
    "[scanner][recorder]") {
    NewsletterSend send;
    // Within 3 s of delivery, 6 scanner machines (IPv4 and IPv6) fetch every link.
    std::uint64_t scanner_clicks = 0;
    for (int machine = 0; machine < 6; ++machine) {
        std::string address = machine % 2 == 0 ? "198.51.100." + std::to_string(10 + machine)
                                               : "2001:db8:aaaa::" + std::to_string(machine);
        for (std::int64_t link = 1; link <= NewsletterSend::kLinks; ++link) {
            send.click(address, link, NewsletterSend::kDelivery + link / 4);
            ++scanner_clicks;
        }
    }
    // Over the next six hours, 400 readers open one to three links each, minutes apart (and
    // some open the same link twice).
    std::uint64_t reader_clicks = 0;
    for (int reader = 0; reader < 400; ++reader) {
        std::string address = reader < 250 ? "203.0.113." + std::to_string(reader)
                                           : "2001:db8:1::" + std::to_string(reader);
        std::int64_t at = NewsletterSend::kDelivery + 60 + reader * 54;
        for (int k = 0; k <= reader % 3; ++k) {
            send.click(address, 1 + (reader + k * 5) % NewsletterSend::kLinks, at + k * 90);
            ++reader_clicks;
        }
        if (reader % 7 == 0) {
            send.click(address, 1 + reader % NewsletterSend::kLinks, at + 400);
            ++reader_clicks;
        }
    }
    auto counts = send.by_class();
    CHECK(counts[static_cast<std::size_t>(domain::ClickClass::human)] == reader_clicks);
    CHECK(counts[static_cast<std::size_t>(domain::ClickClass::scanner)] == scanner_clicks);
    CHECK(counts[static_cast<std::size_t>(domain::ClickClass::bot)] == 0);
}

TEST_CASE(
    "a burst from an unlisted network is scanner from its fourth link; its first three count as "
    "human",
    "[scanner][recorder]") {
    NewsletterSend send;
    for (std::int64_t link = 1; link <= NewsletterSend::kLinks; ++link)
        send.click("203.0.113.99", link, NewsletterSend::kDelivery + link / 6);
    auto counts = send.by_class();
    CHECK(counts[static_cast<std::size_t>(domain::ClickClass::human)] == 3);
    CHECK(counts[static_cast<std::size_t>(domain::ClickClass::scanner)] ==
          NewsletterSend::kLinks - 3);
}

}  // namespace scanner_check_test
