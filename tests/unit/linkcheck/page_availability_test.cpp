#include "refgate/linkcheck/page_availability.hpp"

#include <catch2/catch.hpp>

#include "refgate/domain/link_health.hpp"
#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace page_availability_test {

using namespace refgate;
using refgate::testing::shop;

namespace {

domain::Hop answer(std::string url, int status = 200) {
    return domain::Hop{.url = std::move(url), .status = status};
}

// The verdict on a one-hop chain whose page is `body`, read as the checker reads it.
domain::Verdict judge(std::vector<domain::Hop> hops, std::string body) {
    domain::Chain chain{.hops = std::move(hops), .body = std::move(body)};
    chain.unavailable = linkcheck::unavailable_marker(chain.body);
    return judge_chain(chain, "https://shop.example/p/widget", shop());
}

}  // namespace
}  // namespace page_availability_test

using page_availability_test::answer;
using page_availability_test::judge;
using refgate::domain::Finding;
using refgate::domain::Verdict;

TEST_CASE("a page whose schema.org offer is out of stock is unavailable", "[linkhealth]") {
    const std::string url = "https://shop.example/p/widget?ref=picks42";
    std::string json_ld = R"(<html><script type="application/ld+json">
      {"@context": "https://schema.org", "@type": "Product", "name": "Widget",
       "offers": {"@type": "Offer", "availability": "https://schema.org/OutOfStock"}}
    </script></html>)";
    CHECK(judge({answer(url)}, json_ld) ==
          refgate::domain::Verdict{refgate::domain::Finding::unavailable, "OutOfStock"});
    std::string graph = R"(<script type='application/ld+json'>{"@graph": [{"@type": "Product",
      "offers": [{"availability": {"@id": "schema:Discontinued"}}]}]}</script>)";
    CHECK(judge({answer(url)}, graph) ==
          refgate::domain::Verdict{refgate::domain::Finding::unavailable, "Discontinued"});
    std::string micro = R"(<div itemscope itemtype="https://schema.org/Offer">
      <link itemprop="availability" href="https://schema.org/SoldOut"/></div>)";
    CHECK(judge({answer(url)}, micro) ==
          refgate::domain::Verdict{refgate::domain::Finding::unavailable, "SoldOut"});
    std::string in_stock = R"(<script type="application/ld+json">{"offers":
      {"availability": "https://schema.org/InStock"}}</script><p>OutOfStock</p>)";
    CHECK(judge({answer(url)}, in_stock).finding == refgate::domain::Finding::ok);
    CHECK(judge({answer(url)}, "<script type=\"application/ld+json\">{broken").finding ==
          refgate::domain::Finding::ok);
}
