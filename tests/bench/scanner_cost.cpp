// The scanner class's cost per click, for tests/bench/scanner_cost.sh: this tree's classifier
// (with the per-thread agent cache, as on the I/O threads) alone, and followed by the scanner
// check a human click gets in ClickRecorder (the scanner networks, an ASN lookup in the built
// database, the burst window under a keyed hash), on the same clicks, in alternating passes; the
// check once with each click asking the database and once with the listed networks' ranges
// flattened out of it (what refgate publishes once its background walk is done).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "refgate/clicks/salts.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/redirect/scanner_check.hpp"

namespace {

struct Click {
    std::string agent;
    refgate::domain::IpBytes address;
};

// Addresses: 85 % uniform over public IPv4, 10 % over 2000::/4, 5 % from AS8075's 40.107.0.0/16
// (listed, so scanner), in a fixed pseudo-random order.
refgate::domain::IpBytes address(std::mt19937_64& rng) {
    refgate::domain::IpBytes a{};
    auto r = rng() % 100;
    if (r >= 5 && r < 90) {
        a[10] = a[11] = 0xff;
        std::uint32_t v4 = 0;
        do v4 = static_cast<std::uint32_t>(rng());
        while ((v4 >> 24) == 0 || (v4 >> 24) == 10 || (v4 >> 24) == 127 || (v4 >> 24) >= 224);
        for (int i = 0; i < 4; ++i) a[12 + i] = static_cast<std::uint8_t>(v4 >> (24 - 8 * i));
    } else if (r >= 90) {
        for (auto& b : a) b = static_cast<std::uint8_t>(rng());
        a[0] = static_cast<std::uint8_t>(0x20 | (a[0] & 0x0f));
    } else {
        a[10] = a[11] = 0xff;
        a[12] = 40;
        a[13] = 107;
        a[14] = static_cast<std::uint8_t>(rng());
        a[15] = static_cast<std::uint8_t>(rng());
    }
    return a;
}

// One pass: ns per click; `scanners` counts the clicks the check called scanner.
double pass(const std::vector<Click>& clicks, bool check, refgate::redirect::ScannerCheck& scanner,
            refgate::domain::AgentMatchCache& cache, std::size_t& scanners) {
    const auto& classifier = refgate::domain::ClickClassifier::builtin();
    const refgate::clicks::SaltKey salt{7, 1, 2};
    std::size_t found = 0;
    std::int64_t now = 1'795'953'600;
    const auto start = std::chrono::steady_clock::now();
    for (const Click& c : clicks) {
        const refgate::domain::ClickSignals signals{.user_agent = c.agent};
        auto cls = classifier.classify(signals, cache.match(c.agent));
        if (check && cls == refgate::domain::ClickClass::human &&
            (scanner.from_listed_network(c.address) ||
             (scanner.burst_applies(c.address) &&
              scanner.in_burst(refgate::clicks::burst_hash(salt, c.address, "issue-48"), 42, now))))
            cls = refgate::domain::ClickClass::scanner;
        found += cls == refgate::domain::ClickClass::scanner;
        ++now;
    }
    const auto end = std::chrono::steady_clock::now();
    scanners = found;
    return std::chrono::duration<double, std::nano>(end - start).count() /
           static_cast<double>(clicks.size());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s AGENTS_FILE ASN_DB NETWORKS_FILE ROUNDS\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    std::mt19937_64 rng(20);
    std::vector<Click> clicks;
    for (std::string line; std::getline(in, line);) clicks.push_back({line, address(rng)});
    std::ifstream networks_file(argv[3]);
    std::string text((std::istreambuf_iterator<char>(networks_file)), {});
    refgate::redirect::AsnDatabase asn(argv[2]);
    auto listed = refgate::domain::ScannerNetworks::parse(text);
    refgate::redirect::ScannerNetworksBox networks(listed);
    refgate::redirect::ScannerCheck scanner({.asn = &asn, .networks = &networks});
    const auto walk_start = std::chrono::steady_clock::now();
    listed.asn_ranges = std::make_shared<const refgate::domain::AddressRanges>(
        asn.ranges_of(listed.asns, {}).value());
    const double walk_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - walk_start)
            .count();
    refgate::redirect::ScannerNetworksBox flattened(listed);
    refgate::redirect::ScannerCheck scanner_ranges({.asn = &asn, .networks = &flattened});
    refgate::domain::AgentMatchCache cache(refgate::domain::ClickClassifier::builtin());
    const int rounds = std::stoi(argv[4]);
    double best[3] = {1e18, 1e18, 1e18};
    std::size_t scanners[3] = {};
    for (int r = 0; r <= rounds; ++r) {  // round 0 builds the classifier and warms up
        for (int check = 0; check < 3; ++check) {
            double ns = pass(clicks, check > 0, check == 2 ? scanner_ranges : scanner, cache,
                             scanners[check]);
            if (r > 0) best[check] = std::min(best[check], ns);
        }
    }
    std::printf("%.1f %.1f %.1f %zu %zu %.0f %zu\n", best[0], best[1], best[2], scanners[1],
                scanners[2], walk_ms, listed.asn_ranges->size());
    return 0;
}
