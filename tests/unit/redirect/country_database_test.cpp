#include "refgate/redirect/country_database.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "refgate/domain/country_ranges.hpp"
#include "refgate/tools/mmdb_writer.hpp"
#include "refgate/tools/range_file_writer.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace country_database_test {

using namespace refgate;
using refgate::tools::MmdbAsnWriter;
using refgate::tools::MmdbCountryWriter;

domain::IpBytes ip(const char* text) { return *domain::parse_ip(text); }

domain::IpBytes v4(std::uint32_t n) {
    domain::IpBytes a{};
    a[10] = a[11] = 0xff;
    for (int i = 0; i < 4; ++i) a[12 + i] = static_cast<std::uint8_t>(n >> (24 - 8 * i));
    return a;
}

domain::IpBytes v6(domain::Address128 n) {
    domain::IpBytes a{};
    for (int i = 15; i >= 0; --i, n >>= 8) a[static_cast<std::size_t>(i)] = std::uint8_t(n);
    return a;
}

// A database written by MmdbCountryWriter into a temporary file, removed at the end.
struct TestDatabase {
    std::string path;
    explicit TestDatabase(const MmdbCountryWriter& writer) {
        char name[] = "/tmp/refgate-country-test.XXXXXX";
        int fd = ::mkstemp(name);
        REQUIRE(fd >= 0);
        ::close(fd);
        path = name;
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        auto bytes = writer.finish(1'795'953'600, "refgate test country database");
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    ~TestDatabase() { std::filesystem::remove(path); }
};

const char* const kCountries[] = {"DE", "AT", "US", "FR", "NZ", "AU"};

// 4000 IPv4 and 1500 IPv6 ranges of random widths and countries, with gaps, neighbours and
// overlaps (a later range wins); the edges of every range, for the checks.
struct RandomDatabase {
    MmdbCountryWriter writer;
    std::vector<domain::IpBytes> edges;

    explicit RandomDatabase(std::mt19937_64& rng) {
        auto country = [&] { return kCountries[rng() % 6]; };
        auto edge = [&](const domain::IpBytes& first, const domain::IpBytes& last, auto step) {
            edges.push_back(first);
            edges.push_back(last);
            edges.push_back(step(first, -1));
            edges.push_back(step(last, +1));
        };
        auto v4_step = [](const domain::IpBytes& a, int d) {
            std::uint32_t n = 0;
            for (int i = 12; i < 16; ++i) n = (n << 8) | a[static_cast<std::size_t>(i)];
            return v4(n + static_cast<std::uint32_t>(d));
        };
        auto v6_step = [](const domain::IpBytes& a, int d) {
            return v6(domain::address_number(a) +
                      static_cast<domain::Address128>(static_cast<__int128>(d)));
        };
        std::uint32_t first = 0x01000000;
        for (int i = 0; i < 4000; ++i) {
            auto width = rng() % 5 == 0 ? 0 : static_cast<std::uint32_t>(rng() % 70000);
            if (rng() % 10 == 0 && first > 100) first -= static_cast<std::uint32_t>(rng() % 100);
            writer.add(v4(first), v4(first + width), country());
            edge(v4(first), v4(first + width), v4_step);
            first += width + 1 + (rng() % 3 == 0 ? 0 : static_cast<std::uint32_t>(rng() % 65536));
        }
        domain::Address128 at = domain::Address128{0x2001'0db8} << 96;
        for (int i = 0; i < 1500; ++i) {
            domain::Address128 width =
                rng() % 4 == 0 ? 0 : (domain::Address128{1} << (rng() % 90)) - 1;
            writer.add(v6(at), v6(at + width), country());
            edge(v6(at), v6(at + width), v6_step);
            at += width + 1 + (rng() % 3 == 0 ? 0 : domain::Address128{rng()} << (rng() % 60));
        }
        writer.add(ip("0.0.0.0"), ip("0.0.0.255"), "NZ");
        writer.add(ip("255.255.255.0"), ip("255.255.255.255"), "AU");
    }
};

domain::IpBytes random_address(std::mt19937_64& rng, int kind) {
    domain::IpBytes a{};
    switch (kind % 5) {
        case 0:  // IPv6 anywhere
            for (auto& b : a) b = static_cast<std::uint8_t>(rng());
            return a;
        case 1:  // IPv6 where the ranges are
            return v6((domain::Address128{0x2001'0db8} << 96) +
                      (domain::Address128{rng()} << (rng() % 64)));
        case 2:  // any IPv4
            return v4(static_cast<std::uint32_t>(rng()));
        case 3:  // IPv4 as IPv4-compatible and 6to4 IPv6 (both reach the IPv4 subtree)
            a = v4(static_cast<std::uint32_t>(rng()));
            a[10] = a[11] = 0;
            if (rng() % 2)
                a = v6((domain::Address128{0x2002} << 112) | (domain::address_number(a) << 80));
            return a;
        default:  // IPv4 where the ranges are
            return v4(0x01000000 + static_cast<std::uint32_t>(rng() % 0x0c000000));
    }
}

TEST_CASE("the flattened country database answers every address exactly as the database does",
          "[country]") {
    std::mt19937_64 rng(19);
    RandomDatabase random(rng);
    TestDatabase file(random.writer);
    redirect::CountryDatabase db(file.path);
    auto ranges = db.ranges({});
    REQUIRE(ranges);
    CHECK(ranges->size() > 3'000);
    int mismatches = 0, known = 0, checked = 0;
    auto check = [&](const domain::IpBytes& a) {
        domain::CountryCode expected = db.country_of(a);
        known += expected != 0;
        ++checked;
        mismatches += ranges->country_of(a) != expected;
    };
    for (const domain::IpBytes& a : random.edges) check(a);
    for (int i = 0; i < 100'000; ++i) check(random_address(rng, i));
    for (const char* a : {"::", "::1", "0.0.0.0", "0.0.0.255", "0.0.1.0", "255.255.255.255",
                          "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::ffff:0:0"})
        check(ip(a));
    CHECK(mismatches == 0);
    CHECK(known > checked / 5);  // the sample does reach the ranges
    CHECK(ranges->country_of(ip("0.0.0.7")) == domain::country_code("NZ"));
    CHECK(ranges->country_of(ip("255.255.255.255")) == domain::country_code("AU"));
}

TEST_CASE("country ranges say none in their gaps and past both ends of the address space",
          "[country]") {
    domain::CountryRanges ranges;
    ranges.add_v4(0x0a000000, 0x0a0000ff, domain::country_code("DE"));
    ranges.add_v4(0x0a000100, 0x0a0001ff, domain::country_code("DE"));  // merged with its neighbour
    ranges.add_v4(0x0a000300, 0x0a0003ff, domain::country_code("AT"));
    ranges.add_v6(domain::Address128{0x2001} << 112, (domain::Address128{0x2002} << 112) - 1,
                  domain::country_code("FR"));
    ranges.finish();
    CHECK(ranges.size() == 5 + 3);  // gap, DE, gap, AT, gap; gap, FR, gap
    CHECK(ranges.country_of(ip("10.0.0.0")) == domain::country_code("DE"));
    CHECK(ranges.country_of(ip("10.0.1.255")) == domain::country_code("DE"));
    CHECK(ranges.country_of(ip("10.0.2.0")) == 0);
    CHECK(ranges.country_of(ip("10.0.3.128")) == domain::country_code("AT"));
    CHECK(ranges.country_of(ip("9.255.255.255")) == 0);
    CHECK(ranges.country_of(ip("0.0.0.0")) == 0);
    CHECK(ranges.country_of(ip("255.255.255.255")) == 0);
    CHECK(ranges.country_of(ip("2001::1")) == domain::country_code("FR"));
    CHECK(ranges.country_of(ip("2000:ffff::")) == 0);
    CHECK(ranges.country_of(ip("2002::")) == 0);
    CHECK(ranges.country_of(ip("::10.0.0.1")) == 0);  // IPv6, not the IPv4 table
    CHECK(ranges.bytes() > 0);

    domain::CountryRanges empty;
    empty.finish();
    CHECK(empty.country_of(ip("10.0.0.0")) == 0);
    CHECK(empty.country_of(ip("2001::1")) == 0);
}

TEST_CASE("finished country ranges keep their ranges and indexes, not their build list",
          "[country]") {
    domain::CountryRanges ranges;
    for (std::uint32_t i = 0; i < 20'000; ++i)
        ranges.add_v4(i * 256, i * 256 + 255, domain::country_code("DE"));  // one range once merged
    ranges.finish();
    CHECK(ranges.size() == 2 + 1);  // DE, gap; the IPv6 table's one gap
    // Two 16-bit prefix indexes and a few ranges; the 20,000 added ranges are gone.
    std::size_t indexes = 2 * (std::size_t{1} << 16) * sizeof(std::uint32_t);
    CHECK(ranges.bytes() >= indexes);
    CHECK(ranges.bytes() < indexes + 1024);
}

TEST_CASE("a published country database answers at once and from its ranges once flattened",
          "[country]") {
    MmdbCountryWriter writer;
    writer.add(ip("198.51.100.0"), ip("198.51.100.255"), "DE");
    writer.add(ip("2001:db8::"), ip("2001:db8::ffff"), "AT");
    TestDatabase file(writer);
    redirect::CountryLookupBox box(std::chrono::milliseconds{0});
    box.publish(std::make_shared<const redirect::CountryDatabase>(file.path));
    runtime::PublishedReader<domain::CountryLookup> reader(box);
    REQUIRE(reader.get() != nullptr);
    CHECK(reader.get()->country_of(ip("198.51.100.7")) == domain::country_code("DE"));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (dynamic_cast<const domain::CountryRanges*>(reader.get()) == nullptr &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE(dynamic_cast<const domain::CountryRanges*>(reader.get()) != nullptr);
    CHECK(reader.get()->country_of(ip("198.51.100.7")) == domain::country_code("DE"));
    CHECK(reader.get()->country_of(ip("2001:db8::1")) == domain::country_code("AT"));
    CHECK(reader.get()->country_of(ip("203.0.113.1")) == 0);
}

TEST_CASE("the country database's range file, mapped, answers every address as the database does",
          "[country]") {
    std::mt19937_64 rng(23);
    RandomDatabase random(rng);
    TestDatabase file(random.writer);
    redirect::CountryDatabase db(file.path);
    auto ranges = db.ranges({});
    REQUIRE(ranges);
    TestDatabase ranges_file(MmdbCountryWriter{});  // a temporary path, overwritten
    {
        std::ofstream out(ranges_file.path, std::ios::binary | std::ios::trunc);
        auto bytes = tools::write_range_file(ranges->tables(), db.source().build_epoch,
                                             db.source().node_count);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    redirect::MappedCountryRanges mapped(ranges_file.path, db.source());
    CHECK(mapped.size() == ranges->size());
    int mismatches = 0, known = 0;
    auto check = [&](const domain::IpBytes& a) {
        domain::CountryCode expected = db.country_of(a);
        known += expected != 0;
        mismatches += mapped.country_of(a) != expected;
    };
    for (const domain::IpBytes& a : random.edges) check(a);
    for (int i = 0; i < 100'000; ++i) check(random_address(rng, i));
    CHECK(mismatches == 0);
    CHECK(known > 20'000);

    // Published in a box, the mapped ranges answer at once, and no walk replaces them.
    redirect::CountryLookupBox box(std::chrono::milliseconds{0});
    box.publish_ranges(
        std::make_shared<const redirect::MappedCountryRanges>(ranges_file.path, db.source()));
    runtime::PublishedReader<domain::CountryLookup> reader(box);
    REQUIRE(dynamic_cast<const redirect::MappedCountryRanges*>(reader.get()) != nullptr);
    CHECK(reader.get()->country_of(ip("0.0.0.7")) == domain::country_code("NZ"));

    // Ranges of another build of the database, or a file that is not one, are refused.
    redirect::MmdbSource other = db.source();
    ++other.node_count;
    CHECK_THROWS_WITH(redirect::MappedCountryRanges(ranges_file.path, other),
                      Catch::Contains("made from another build of the database"));
    CHECK_THROWS_WITH(redirect::MappedCountryRanges(file.path, db.source()),
                      Catch::Contains("wrong magic"));
    std::filesystem::resize_file(ranges_file.path, 100);
    CHECK_THROWS_WITH(redirect::MappedCountryRanges(ranges_file.path, db.source()),
                      Catch::Contains("truncated"));
}

TEST_CASE("a stopped walk of the country database gives no ranges", "[country]") {
    MmdbCountryWriter writer;
    writer.add(ip("198.51.100.0"), ip("198.51.100.255"), "DE");
    TestDatabase file(writer);
    redirect::CountryDatabase db(file.path);
    std::stop_source stop;
    stop.request_stop();
    CHECK_FALSE(db.ranges(stop.get_token()));
    // A box destroyed before its first database was flattened stops the wait and the walk.
    redirect::CountryLookupBox box(std::chrono::seconds{30});
    box.publish(std::make_shared<const redirect::CountryDatabase>(file.path));
}

}  // namespace country_database_test
