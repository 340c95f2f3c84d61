#include "refgate/codec/links_csv.hpp"

#include <catch2/catch.hpp>

#include "refgate/codec/import_diff.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/utf8.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace links_csv_test {

using namespace refgate;

namespace {

const std::string kHeader = std::string(codec::kLinksCsvHeader) + "\r\n";

}  // namespace

TEST_CASE("a links CSV row becomes a link of the import document, empty cells left out",
          "[codec][csv]") {
    auto csv = codec::parse_links_csv(kHeader +
                                      "ts,tailscale,https://tailscale.com/pricing,,,,\r\n"
                                      "kg,kagi,https://kagi.com/,disabled,2026-12-31T23:59:59Z,"
                                      "https://kagi.com/,true\r\n");
    CHECK(csv.problems.empty());
    REQUIRE(csv.document["links"].size() == 2);
    CHECK(csv.document["links"][0] ==
          nlohmann::ordered_json{{"slug", "ts"},
                                 {"partner", "tailscale"},
                                 {"destination", "https://tailscale.com/pricing"}});
    CHECK(csv.document["links"][1]["status"] == "disabled");
    CHECK(csv.document["links"][1]["utm_passthrough"] == true);
    CHECK(csv.lines == std::vector<std::size_t>{2, 3});
}

TEST_CASE("quoted CSV fields keep commas, doubled quotes and line breaks, and count their lines",
          "[codec][csv]") {
    auto csv = codec::parse_links_csv(kHeader +
                                      "\"a,b\",p,\"https://x.example/?q=\"\"1\"\"\",,,,\n"
                                      "\"multi\nline\",p,https://x.example/,,,,false\n"
                                      "last,p,https://x.example/,,,,\n");
    CHECK(csv.problems.empty());
    REQUIRE(csv.document["links"].size() == 3);
    CHECK(csv.document["links"][0]["slug"] == "a,b");
    CHECK(csv.document["links"][0]["destination"] == "https://x.example/?q=\"1\"");
    CHECK(csv.document["links"][1]["slug"] == "multi\nline");
    CHECK(csv.lines == std::vector<std::size_t>{2, 3, 5});
}

TEST_CASE("a wrong CSV header refuses the file at line 1", "[codec][csv]") {
    auto csv = codec::parse_links_csv("slug,destination\r\nts,https://tailscale.com/\r\n");
    REQUIRE(csv.problems.size() == 1);
    CHECK(csv.problems[0].line == 1);
    CHECK(csv.problems[0].message.find(std::string(codec::kLinksCsvHeader)) != std::string::npos);
    CHECK(csv.document["links"].empty());
}

TEST_CASE("a broken CSV row is a problem at its line and the other rows are still read",
          "[codec][csv]") {
    auto csv = codec::parse_links_csv(kHeader +
                                      "ok,p,https://x.example/,,,,\r\n"
                                      "short,p\r\n"
                                      "\r\n"
                                      "also-ok,p,https://x.example/,,,,\r\n"
                                      "\"open,p,https://x.example/,,,,\r\n");
    REQUIRE(csv.problems.size() == 2);
    CHECK(csv.problems[0].line == 3);
    CHECK(csv.problems[0].message == "has 2 fields; the header has 7");
    CHECK(csv.problems[1].line == 6);
    CHECK(csv.problems[1].message == "a quoted field is not closed");
    CHECK(csv.lines == std::vector<std::size_t>{2, 5});
}

TEST_CASE("a CSV row saved in a spreadsheet's code page is refused at its line, not thrown over",
          "[codec][csv]") {
    // "café" in Windows-1252, as a spreadsheet saves "CSV" by default on Windows.
    const std::string text = kHeader +
                             "ok,p,https://x.example/,,,,\r\n"
                             "caf\xE9,p,https://x.example/caf\xE9,,,,\r\n"
                             "caf\xC3\xA9,p,https://x.example/,,,,\r\n";
    auto csv = codec::parse_links_csv(text);
    REQUIRE(csv.problems.size() == 1);
    CHECK(csv.problems[0].line == 3);
    CHECK(csv.problems[0].message == "is not UTF-8 text: save the file as \"CSV UTF-8\"");
    CHECK(csv.lines == std::vector<std::size_t>{2, 4});
    // The import's answer is written out (it was a JSON type_error, a 500 in the API).
    auto input = codec::read_import_text(text, true);
    auto refused = codec::import_refusals(input, codec::parse_import(*input.document).issues);
    CHECK_NOTHROW(import_result_json(codec::ImportDiff{}, refused, true, false).dump());
}

TEST_CASE("UTF-8 is checked as RFC 3629 has it", "[codec][csv]") {
    CHECK(domain::valid_utf8(""));
    CHECK(domain::valid_utf8("plain, caf\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80"));
    CHECK_FALSE(domain::valid_utf8("caf\xE9"));           // Windows-1252
    CHECK_FALSE(domain::valid_utf8("\xC0\xAF"));          // overlong '/'
    CHECK_FALSE(domain::valid_utf8("\xED\xA0\x80"));      // a surrogate
    CHECK_FALSE(domain::valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
    CHECK_FALSE(domain::valid_utf8("\xE2\x82"));          // cut short
}

TEST_CASE("links written as CSV read back as the same links", "[codec][csv]") {
    domain::Link a;
    a.slug = "ts";
    a.partner = "tailscale";
    a.destination = "https://tailscale.com/pricing?a=1,2&b=\"x\"";
    a.expires_at = domain::parse_rfc3339("2026-12-31T23:59:59Z");
    a.fallback = "https://tailscale.com/";
    a.utm_passthrough = true;
    domain::Link b;
    b.slug = "kg";
    b.partner = "kagi";
    b.destination = "https://kagi.com/";
    b.status = domain::LinkStatus::disabled;
    std::string text = codec::links_to_csv({a, b});
    CHECK(text.starts_with(kHeader));
    auto csv = codec::parse_links_csv(text);
    CHECK(csv.problems.empty());
    auto parsed = codec::parse_import(csv.document);
    CHECK(parsed.issues.empty());
    REQUIRE(parsed.document.links.size() == 2);
    CHECK(codec::link_to_json(parsed.document.links[0]) == codec::link_to_json(a));
    CHECK(codec::link_to_json(parsed.document.links[1]) == codec::link_to_json(b));
}

}  // namespace links_csv_test
