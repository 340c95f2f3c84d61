#include "refgate/domain/scanner_networks.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "refgate/domain/burst_window.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace scanner_networks_test {

using namespace refgate;

namespace {

domain::IpBytes ip(const char* text) { return *domain::parse_ip(text); }

}  // namespace

TEST_CASE("a scanner networks file lists ASNs and address ranges with comments", "[scanner]") {
    auto networks = domain::ScannerNetworks::parse(
        "# e-mail security\n"
        "\n"
        "AS8075     # Microsoft: Safe Links\n"
        "as26211\n"
        "  AS8075   # listed twice\n"
        "192.0.2.0/24   # a documentation range\n"
        "2001:db8::/32\r\n"
        "198.51.100.7\n");
    CHECK(networks.asns == std::vector<std::uint32_t>{8075, 26211});
    CHECK(networks.listed_asn(26211));
    CHECK_FALSE(networks.listed_asn(13335));
    CHECK(networks.ranges.size() == 3);
    CHECK(networks.listed_address(ip("192.0.2.200")));
    CHECK(networks.listed_address(ip("2001:db8:5::1")));
    CHECK(networks.listed_address(ip("198.51.100.7")));
    CHECK_FALSE(networks.listed_address(ip("198.51.100.8")));
}

TEST_CASE("a bad line of the scanner networks names its number and text", "[scanner]") {
    auto message = [](const char* text) {
        try {
            domain::ScannerNetworks::parse(text);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(message("AS1\nMicrosoft 8075\n") ==
          "line 2: not AS<number> or an address range: Microsoft 8075");
    CHECK(message("AS0\n") == "line 1: not AS<number> or an address range: AS0");
    CHECK(message("AS8075 Microsoft\n").starts_with("line 1:"));  // a comment needs its '#'
    CHECK(message("192.0.2.0/33\n").starts_with("line 1:"));
    CHECK(message("AS99999999999\n").starts_with("line 1:"));
}

TEST_CASE("the repository's scanner networks file parses and lists the big providers",
          "[scanner]") {
    std::ifstream in(std::string(REFGATE_SOURCE_DIR) + "/deploy/scanner-networks.txt");
    std::stringstream text;
    text << in.rdbuf();
    auto networks = domain::ScannerNetworks::parse(text.str());
    for (std::uint32_t asn : {8075u, 26211u, 30031u, 15324u, 16417u, 16880u, 399342u, 16509u,
                              396982u, 14061u, 16276u, 24940u, 63949u})
        CHECK(networks.listed_asn(asn));
    CHECK_FALSE(networks.listed_asn(13335));  // Cloudflare: WARP carries readers
    CHECK_FALSE(networks.listed_asn(22616));  // Zscaler: employees browse through it
}

TEST_CASE("a client fetching its fourth distinct link of a channel within 10 s is a scanner",
          "[scanner]") {
    domain::BurstWindow window(4, 10);
    CHECK_FALSE(window.fetch(7, 1, 1000));
    CHECK_FALSE(window.fetch(7, 2, 1001));
    CHECK_FALSE(window.fetch(7, 2, 1001));  // the same link again is no new link
    CHECK_FALSE(window.fetch(7, 3, 1002));
    CHECK(window.fetch(7, 4, 1003));
    CHECK(window.fetch(7, 1, 1004));        // and stays one while it keeps fetching
    CHECK(window.fetch(7, 9, 1012));        // 8 s after its last fetch
    CHECK_FALSE(window.fetch(7, 9, 1030));  // a pause longer than the window ends the run
}

TEST_CASE("a reader opening links of an issue over minutes is never a scanner", "[scanner]") {
    domain::BurstWindow window(4, 10);
    std::int64_t now = 5000;
    for (std::int64_t link = 1; link <= 12; ++link) {
        CHECK_FALSE(window.fetch(99, link, now));
        now += 20;
    }
    // Four links within 10 s from four different clients: four readers.
    for (std::uint64_t client = 1; client <= 4; ++client)
        CHECK_FALSE(window.fetch(client * 4096 + 3, static_cast<std::int64_t>(client), 9000));
}

TEST_CASE("clients that share a burst window slot evict each other and are never flagged",
          "[scanner]") {
    domain::BurstWindow window(2, 10);
    // Same slot (client % kSlots), different clients, alternating: each restarts the slot.
    std::uint64_t a = 5, b = 5 + domain::BurstWindow::kSlots;
    for (std::int64_t link = 1; link <= 6; ++link) {
        CHECK_FALSE(window.fetch(a, link, 100));
        CHECK_FALSE(window.fetch(b, link + 100, 100));
    }
}

TEST_CASE("a burst window refuses thresholds outside 2 to 8 links", "[scanner]") {
    CHECK_THROWS_AS(domain::BurstWindow(1, 10), std::invalid_argument);
    CHECK_THROWS_AS(domain::BurstWindow(9, 10), std::invalid_argument);
    CHECK_THROWS_AS(domain::BurstWindow(4, 0), std::invalid_argument);
}

}  // namespace scanner_networks_test
