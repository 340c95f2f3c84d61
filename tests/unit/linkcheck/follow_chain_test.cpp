#include <catch2/catch.hpp>
#include <map>

#include "refgate/linkcheck/fetcher.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace follow_chain_test {

using namespace refgate;
using namespace refgate::linkcheck;

namespace {

// Answers from a table: a URL missing from it answers 200.
class TableFetcher final : public HopFetcher {
  public:
    std::map<std::string, std::string> redirects;  // url -> Location
    std::vector<std::string> fetched;

    HopResult fetch(const std::string& url) override {
        fetched.push_back(url);
        auto it = redirects.find(url);
        if (it == redirects.end()) return {.hop = {.url = url, .status = 200}, .body = "page"};
        return {.hop = {.url = url, .status = 302, .location = it->second}};
    }
};

}  // namespace

TEST_CASE("a chain is followed hop by hop, each host paced, to the final page",
          "[linkhealth][chain]") {
    TableFetcher f;
    f.redirects = {{"https://a.example/x?ref=1", "https://b.example/y?ref=1"}};
    std::vector<std::string> hosts;
    auto chain = follow_chain(f, "https://a.example/x?ref=1",
                              [&](const std::string& host) { hosts.push_back(host); });
    REQUIRE(chain.hops.size() == 2);
    CHECK(chain.hops[1].url == "https://b.example/y?ref=1");
    CHECK(chain.body == "page");
    CHECK(hosts == std::vector<std::string>{"a.example", "b.example"});
}

TEST_CASE("a redirect back into the chain is not fetched again; ten hops are the most",
          "[linkhealth][chain]") {
    TableFetcher loop;
    loop.redirects = {{"https://a.example/1", "https://a.example/2"},
                      {"https://a.example/2", "https://a.example/1"}};
    auto chain = follow_chain(loop, "https://a.example/1");
    CHECK(loop.fetched.size() == 2);
    CHECK(
        judge_chain(chain, "https://a.example/1", domain::Partner{.allowed_domains = {"a.example"}})
            .detail == "loop");

    TableFetcher endless;
    for (int i = 0; i < 20; ++i)
        endless.redirects["https://a.example/" + std::to_string(i)] =
            "https://a.example/" + std::to_string(i + 1);
    chain = follow_chain(endless, "https://a.example/0");
    CHECK(endless.fetched.size() == domain::kMaxHops);
    CHECK(chain.hops.size() == domain::kMaxHops);
}

TEST_CASE("a redirect to another scheme ends the chain without a request", "[linkhealth][chain]") {
    TableFetcher f;
    f.redirects = {{"https://a.example/app", "market://details?id=x"}};
    auto chain = follow_chain(f, "https://a.example/app");
    REQUIRE(chain.hops.size() == 2);
    CHECK(chain.hops[1].failure == domain::HopFailure::scheme);
    CHECK(f.fetched.size() == 1);
}

TEST_CASE("the User-Agent names refgate, its version and the operator's contact",
          "[linkhealth][chain]") {
    CHECK(user_agent("1.4.0", "") == "refgate-linkcheck/1.4.0");
    CHECK(user_agent("1.4.0", "https://picks.example.com/contact") ==
          "refgate-linkcheck/1.4.0 (+https://picks.example.com/contact)");
}

}  // namespace follow_chain_test
