#include "refgate/codec/tool_import.hpp"

#include <catch2/catch.hpp>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace tool_import_unit_test {

using namespace refgate;

namespace {

const domain::PublicSuffixList& suffixes() {
    static const domain::PublicSuffixList list("com\nuk\nco.uk\nnet\norg\n");
    return list;
}

}  // namespace

TEST_CASE("each tool's export is read by its columns' names", "[codec][import-tools]") {
    auto pretty =
        codec::read_tool_export(codec::ExportTool::pretty_links,
                                "id,slug,url,name,clicks\r\n"
                                "1,Go/Deal,https://a.com/x?tag=t-20,\"Deal, big\",12\r\n");
    REQUIRE(pretty.links.size() == 1);
    CHECK(pretty.links[0].slug == "Go/Deal");
    CHECK(pretty.links[0].destination == "https://a.com/x?tag=t-20");
    CHECK(pretty.links[0].title == "Deal, big");
    CHECK(pretty.links[0].line == 2);

    auto thirsty = codec::read_tool_export(codec::ExportTool::thirstyaffiliates,
                                           "Link Name,Destination URL,Slug,Categories\n"
                                           "Host,https://h.com/?aff=1,host,Web;Hosting\n");
    REQUIRE(thirsty.links.size() == 1);
    CHECK(thirsty.links[0].slug == "host");

    auto shlink =
        codec::read_tool_export(codec::ExportTool::shlink,
                                "createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits\n"
                                "2024-01-01T00:00:00+00:00,s.io,abc,https://s.io/abc,"
                                "https://b.org/,T,a|b,3\n");
    REQUIRE(shlink.links.size() == 1);
    CHECK(shlink.links[0].destination == "https://b.org/");

    auto yourls = codec::read_tool_export(
        codec::ExportTool::yourls,
        R"({"links": {"link_1": {"shorturl": "https://sho.rt/kw", "url": "https://c.com/",
            "title": "C", "ip": "203.0.113.7", "clicks": "4"}}})");
    REQUIRE(yourls.links.size() == 1);
    CHECK(yourls.links[0].slug == "kw");

    // A header without the tool's columns is one problem, and nothing is read.
    auto wrong = codec::read_tool_export(codec::ExportTool::shlink, "slug,url\nx,https://a.com/\n");
    CHECK(wrong.links.empty());
    REQUIRE(wrong.problems.size() == 1);
    CHECK(wrong.problems[0].line == 1);
    CHECK(codec::read_tool_export(codec::ExportTool::yourls, "[]").problems.size() == 1);
}

TEST_CASE("links are grouped by registrable domain and their referral code is proposed",
          "[codec][import-tools]") {
    codec::ToolExport input{{{2, "Go/A", "https://www.a.com/1?tag=t-20&x=1", ""},
                             {3, "b", "https://a.com/2?tag=t-20", ""},
                             {4, "c", "https://a.com/3?tag=other-20", ""},
                             {5, "d", "https://shop.b.co.uk/?ref=bee", ""}},
                            {}};
    codec::PartnerMap map;
    codec::ImportPlan plan = codec::plan_tool_import(input, {suffixes(), map, false});
    REQUIRE(plan.partners.size() == 2);
    CHECK(plan.partners[0].slug == "a");
    CHECK(plan.partners[0].domain == "a.com");
    CHECK(plan.partners[0].found_param == "tag");
    CHECK(plan.partners[0].found_code == "t-20");
    CHECK(plan.partners[0].links_with_code == 2);
    CHECK(plan.partners[0].links_other_code == 1);
    CHECK(plan.partners[1].domain == "b.co.uk");
    CHECK(plan.links[0].slug == "go-a");
    // Without --lock-codes the URLs keep their parameters.
    CHECK(plan.document["links"][0]["destination"] == "https://www.a.com/1?tag=t-20&x=1");
    CHECK(plan.document["partners"][0]["ref_code"] == "t-20");

    codec::ImportPlan locked = codec::plan_tool_import(input, {suffixes(), map, true});
    CHECK(locked.document["links"][0]["destination"] == "https://www.a.com/1?x=1");
    CHECK(locked.document["links"][1]["destination"] == "https://a.com/2");
    // Another value of the parameter stays where it is.
    CHECK(locked.document["links"][2]["destination"] == "https://a.com/3?tag=other-20");
    CHECK(locked.links[0].code_moved);
    CHECK(!locked.links[2].code_moved);
    CHECK(plan_text(locked, codec::ExportTool::pretty_links, true)
              .find("click history is not imported") != std::string::npos);
}

TEST_CASE(
    "a destination whose host refgate would not accept makes no partner (found by the "
    "tool_import fuzz target: '.ww' made a partner without a slug); an international one is "
    "grouped by its punycode",
    "[codec][import-tools]") {
    codec::ToolExport input{{{2, "dot", "https://.ww/x?aff=1", ""},
                             {3, "dots", "https://a..com/", ""},
                             {4, "buch",
                              "https://www.B\xC3\xBC"
                              "cher.com/?tag=t",
                              ""}},
                            {}};
    codec::PartnerMap map;
    codec::ImportPlan plan = codec::plan_tool_import(input, {suffixes(), map, false});
    REQUIRE(plan.partners.size() == 1);
    CHECK(plan.partners[0].domain == "xn--bcher-kva.com");
    CHECK(plan.partners[0].slug == "xn-bcher-kva");
    REQUIRE(plan.links.size() == 1);
    CHECK(plan.links[0].slug == "buch");
    REQUIRE(plan.problems.size() == 2);
    CHECK(plan.problems[0].line == 2);
    CHECK(plan.problems[1].line == 3);
}

TEST_CASE("a partner map names partners and gives codes; a partner without one is a problem",
          "[codec][import-tools]") {
    codec::ToolExport input{{{2, "x", "https://docs.example.org/x", ""}}, {}};
    codec::PartnerMap none;
    auto missing = codec::plan_tool_import(input, {suffixes(), none, true});
    REQUIRE(missing.problems.size() == 1);
    CHECK(missing.problems[0].message.find("--partner-map") != std::string::npos);

    std::vector<std::string> problems;
    auto map = codec::parse_partner_map(
        nlohmann::json::parse(R"({"Example.org": {"slug": "ex", "name": "Example",
                                  "ref_param": "src", "ref_code": "p"},
                                  "bad.com": 3, "half.com": {"slug": "h", "ref_param": "x"}})"),
        problems);
    CHECK(problems.size() == 2);
    auto named = codec::plan_tool_import(input, {suffixes(), map, true});
    CHECK(named.problems.empty());
    CHECK(named.document["partners"][0] ==
          nlohmann::ordered_json{{"slug", "ex"},
                                 {"name", "Example"},
                                 {"ref_param", "src"},
                                 {"ref_code", "p"},
                                 {"allowed_domains", {"example.org"}}});
}

TEST_CASE(
    "a partner named by the map keeps its slug though an earlier link's domain would take it "
    "(found by the tool_import fuzz target: two partners 'amazon'); a map naming one slug twice "
    "is refused",
    "[codec][import-tools]") {
    codec::ToolExport input{{{2, "deal", "https://www.amazon.net/x?tag=a", ""},
                             {3, "kindle", "https://www.amazon.com/dp/1?tag=picks-20", ""}},
                            {}};
    std::vector<std::string> problems;
    auto map =
        codec::parse_partner_map(nlohmann::json::parse(R"({"amazon.com": "amazon"})"), problems);
    REQUIRE(problems.empty());
    codec::ImportPlan plan = codec::plan_tool_import(input, {suffixes(), map, true});
    REQUIRE(plan.partners.size() == 2);
    CHECK(plan.partners[0].slug == "amazon-net");
    CHECK(plan.partners[1].slug == "amazon");
    CHECK(plan.links[0].partner == "amazon-net");
    CHECK(plan.links[1].partner == "amazon");

    codec::parse_partner_map(
        nlohmann::json::parse(
            R"({"amazon.com": "amazon", "amazon.co.uk": "amazon", "x.org": "Bad Slug"})"),
        problems);
    CHECK(problems.size() == 2);
}

TEST_CASE("a query parameter leaves a URL, the others and the fragment stay",
          "[codec][import-tools]") {
    CHECK(codec::without_query_parameter("https://a.com/p?a=1&tag=x&b=2#f", "tag") ==
          "https://a.com/p?a=1&b=2#f");
    CHECK(codec::without_query_parameter("https://a.com/p?tag=x", "tag") == "https://a.com/p");
    CHECK(codec::without_query_parameter("https://a.com/p", "tag") == "https://a.com/p");
    // A '?' in the fragment is the fragment's (tool_import fuzz finding: a second removal took
    // "#f?tag=1" for a query), and empty pairs go, so that a second removal changes nothing.
    CHECK(codec::without_query_parameter("https://a.com/p?tag=1#f?tag=2", "tag") ==
          "https://a.com/p#f?tag=2");
    CHECK(codec::without_query_parameter("https://a.com/p#f?tag=2", "tag") ==
          "https://a.com/p#f?tag=2");
    CHECK(codec::without_query_parameter("https://a.com/p?x&&tag=1", "tag") == "https://a.com/p?x");
    CHECK(codec::without_query_parameter("https://a.com/p?&tag=1&", "tag") == "https://a.com/p");
    CHECK(codec::without_query_parameter("https://a.com/p?tags=x", "tag") ==
          "https://a.com/p?tags=x");
}

}  // namespace tool_import_unit_test
