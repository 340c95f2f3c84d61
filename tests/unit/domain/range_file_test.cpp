#include "refgate/domain/range_file.hpp"

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "refgate/domain/targeting.hpp"
#include "refgate/tools/range_file_writer.hpp"

namespace range_file_test {

using namespace refgate;

domain::IpBytes ip(const char* text) { return *domain::parse_ip(text); }

// Bytes as a mapping gives them: 16-byte aligned.
struct Aligned {
    std::vector<domain::Address128> storage;
    std::size_t size = 0;
    explicit Aligned(const std::string& bytes)
        : storage(bytes.size() / 16 + 1), size(bytes.size()) {
        std::memcpy(storage.data(), bytes.data(), bytes.size());
    }
    std::byte* data() { return reinterpret_cast<std::byte*>(storage.data()); }
    std::span<const std::byte> span() { return {data(), size}; }
};

domain::RangeTableBuilder<std::uint16_t> sample_countries() {
    domain::RangeTableBuilder<std::uint16_t> b;
    b.add_v4(0x0a000000, 0x0a0000ff, domain::country_code("DE"));
    b.add_v4(0xc6336400, 0xc63364ff, domain::country_code("AT"));
    b.add_v6(domain::Address128{0x2001'0db8} << 96, (domain::Address128{0x2001'0db9} << 96) - 1,
             domain::country_code("FR"));
    b.alias_ipv4(true, true);
    b.finish();
    return b;
}

TEST_CASE("a range file answers every address as the tables it was written from", "[range_file]") {
    std::mt19937_64 rng(7);
    domain::RangeTableBuilder<std::uint32_t> built;
    std::uint32_t at = 0x01000000;
    for (int i = 0; i < 5000; ++i) {
        auto width = static_cast<std::uint32_t>(rng() % 60000);
        built.add_v4(at, at + width, static_cast<std::uint32_t>(1 + rng() % 40));
        at += width + 1 + static_cast<std::uint32_t>(rng() % 3 == 0 ? 0 : rng() % 70000);
    }
    domain::Address128 v6 = domain::Address128{0x2001'0db8} << 96;
    for (int i = 0; i < 2000; ++i) {
        domain::Address128 width = (domain::Address128{1} << (rng() % 80)) - 1;
        built.add_v6(v6, v6 + width, static_cast<std::uint32_t>(1 + rng() % 40));
        v6 += width + 1 + (domain::Address128{rng()} << (rng() % 60));
    }
    built.alias_ipv4(true, false);
    built.finish();
    Aligned file(tools::write_range_file(built.tables(), 1'795'953'600, 4242));
    std::string error;
    auto read = domain::read_asn_range_file(file.span(), error);
    REQUIRE(read);
    CHECK(error.empty());
    CHECK(read->header.source_epoch == 1'795'953'600);
    CHECK(read->header.source_nodes == 4242);
    CHECK(read->tables.size() == built.size());
    auto expected = built.tables();
    int mismatches = 0, known = 0;
    for (int i = 0; i < 200'000; ++i) {
        domain::IpBytes a{};
        if (i % 2 == 0) {
            a[10] = a[11] = 0xff;
            auto n = static_cast<std::uint32_t>(rng() % 0x0d000000);
            for (int k = 0; k < 4; ++k) a[12 + k] = static_cast<std::uint8_t>(n >> (24 - 8 * k));
        } else {
            domain::Address128 n = (domain::Address128{0x2001'0db8} << 96) +
                                   (domain::Address128{rng()} << (rng() % 70));
            for (int k = 15; k >= 0; --k, n >>= 8) a[static_cast<std::size_t>(k)] = std::uint8_t(n);
        }
        auto want = expected.find(a);
        known += want != 0;
        mismatches += read->tables.find(a) != want;
    }
    CHECK(mismatches == 0);
    CHECK(known > 50'000);
    CHECK(read->tables.find(ip("::1.0.0.1")) == expected.find(ip("1.0.0.1")));  // alias kept
}

TEST_CASE("a range file of countries keeps its values and IPv4 aliases", "[range_file]") {
    auto built = sample_countries();
    Aligned file(tools::write_range_file(built.tables(), 1, 2));
    std::string error;
    auto read = domain::read_country_range_file(file.span(), error);
    REQUIRE(read);
    CHECK(read->tables.find(ip("10.0.0.9")) == domain::country_code("DE"));
    CHECK(read->tables.find(ip("::10.0.0.9")) == domain::country_code("DE"));
    CHECK(read->tables.find(ip("2002:c633:6401::")) == domain::country_code("AT"));  // 6to4
    CHECK(read->tables.find(ip("2001:db8::1")) == domain::country_code("FR"));
    CHECK(read->tables.find(ip("10.0.1.0")) == 0);
    CHECK(read->tables.find(ip("2001:db9::")) == 0);
    // A country file is not an ASN file.
    CHECK_FALSE(domain::read_asn_range_file(file.span(), error));
    CHECK(error.find("another kind") != std::string::npos);
}

TEST_CASE("a damaged range file is refused with the reason, never read past its end",
          "[range_file]") {
    auto built = sample_countries();
    const std::string good = tools::write_range_file(built.tables(), 1, 2);
    auto layout = domain::RangeFileLayout::of(built.tables().v4.starts.size(),
                                              built.tables().v6.starts.size(), 2);
    REQUIRE(good.size() == layout.size);
    auto refused = [](std::string bytes, const char* why) {
        Aligned file(bytes);
        std::string error;
        bool read = domain::read_country_range_file(file.span(), error).has_value();
        INFO(error);
        CHECK_FALSE(read);
        CHECK(error.find(why) != std::string::npos);
    };
    SECTION("truncated") {
        refused(good.substr(0, good.size() - 16), "truncated");
        refused(good.substr(0, 40), "shorter than the header");
        refused(std::string(), "shorter than the header");
    }
    SECTION("padded") { refused(good + std::string(16, '\0'), "truncated or padded"); }
    SECTION("wrong magic") {
        std::string bad = good;
        bad[0] = 'X';
        refused(bad, "wrong magic");
        refused(std::string(4096, '\0'), "wrong magic");
    }
    SECTION("another version") {
        std::string bad = good;
        std::uint32_t version = domain::kRangeFileVersion + 1;
        std::memcpy(bad.data() + offsetof(domain::RangeFileHeader, version), &version, 4);
        refused(bad, "format version");
    }
    SECTION("counts that do not fit the bytes") {
        std::string bad = good;
        std::uint32_t count = 0xffffffffu;
        std::memcpy(bad.data() + offsetof(domain::RangeFileHeader, v6_count), &count, 4);
        refused(bad, "out of bounds");
        count = 1000;
        std::memcpy(bad.data() + offsetof(domain::RangeFileHeader, v6_count), &count, 4);
        refused(bad, "truncated or padded");
    }
    SECTION("unsorted") {
        std::string bad = good;
        std::uint32_t starts[2];
        std::memcpy(starts, bad.data() + layout.v4_starts + 4, 8);
        std::swap(starts[0], starts[1]);
        std::memcpy(bad.data() + layout.v4_starts + 4, starts, 8);
        refused(bad, "IPv4 ranges are not sorted");
        bad = good;
        std::memset(bad.data() + layout.v6_starts + 16, 0, 16);  // equal to the first
        refused(bad, "IPv6 ranges are not sorted");
    }
    SECTION("not starting at address 0") {
        std::string bad = good;
        std::uint32_t one = 1;
        std::memcpy(bad.data() + layout.v4_starts, &one, 4);
        refused(bad, "do not start at address 0");
    }
    SECTION("a prefix index pointing elsewhere or past the ranges") {
        std::string bad = good;
        std::uint32_t far = 1'000'000;
        std::memcpy(bad.data() + layout.v4_index + 4 * 0x0a00, &far, 4);
        refused(bad, "IPv4 prefix index is wrong at prefix 2560");
        bad = good;
        std::uint32_t zero = 0;
        std::memcpy(bad.data() + layout.v6_index + 4 * 0xffff, &zero, 4);
        refused(bad, "IPv6 prefix index is wrong at prefix 65535");
    }
    SECTION("misaligned in memory") {
        Aligned file(" " + good);
        std::string error;
        CHECK_FALSE(domain::read_country_range_file(file.span().subspan(1), error));
        CHECK(error.find("aligned") != std::string::npos);
    }
}

}  // namespace range_file_test
