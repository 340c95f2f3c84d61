#include "refgate/domain/public_suffix.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace public_suffix_test {

using namespace refgate;

namespace {

// A few rules of each kind, as the list spells them.
constexpr std::string_view kList =
    "// ===BEGIN ICANN DOMAINS===\n"
    "com\n"
    "uk\n"
    "co.uk\n"
    "// a wildcard and its exception\n"
    "*.ck\n"
    "!www.ck\n"
    "\n"
    "// ===BEGIN PRIVATE DOMAINS===\n"
    "github.io   trailing words are ignored\n";

}  // namespace

TEST_CASE("the registrable domain is the public suffix and one label more", "[domain][psl]") {
    domain::PublicSuffixList list(kList);
    CHECK(list.registrable_domain("www.amazon.com") == "amazon.com");
    CHECK(list.registrable_domain("amazon.com") == "amazon.com");
    CHECK(list.registrable_domain("smile.amazon.co.uk") == "amazon.co.uk");
    CHECK(list.registrable_domain("picks.github.io") == "picks.github.io");
    CHECK(list.registrable_domain("a.b.picks.github.io") == "picks.github.io");
    // Wildcards: every label under ck is a suffix, but www.ck is not.
    CHECK(list.registrable_domain("shop.example.ck") == "shop.example.ck");
    CHECK(list.registrable_domain("a.www.ck") == "www.ck");
    // Under no rule: the implicit "*".
    CHECK(list.registrable_domain("deals.example.test") == "example.test");
    // A suffix itself, an address, nothing: none.
    CHECK(list.registrable_domain("co.uk") == std::nullopt);
    CHECK(list.registrable_domain("com") == std::nullopt);
    CHECK(list.registrable_domain("192.0.2.1") == std::nullopt);
    CHECK(list.registrable_domain("") == std::nullopt);
}

TEST_CASE("Debian's public suffix list, where it is installed, knows the common suffixes",
          "[domain][psl]") {
    std::FILE* f = std::fopen(std::string(domain::kPublicSuffixListPath).c_str(), "rb");
    if (f == nullptr) {
        WARN("no " << domain::kPublicSuffixListPath << ": install the publicsuffix package");
        return;
    }
    std::string text;
    char buffer[65536];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) text.append(buffer, n);
    std::fclose(f);
    domain::PublicSuffixList list(text);
    CHECK(list.size() > 5000);
    CHECK(list.registrable_domain("www.amazon.co.uk") == "amazon.co.uk");
    CHECK(list.registrable_domain("go.nordvpn.net") == "nordvpn.net");
    CHECK(list.registrable_domain("picks.github.io") == "picks.github.io");
}

}  // namespace public_suffix_test
