#include "refgate/domain/agent_regex.hpp"

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace agent_regex_test {

using refgate::domain::agent_regex_literals;
using refgate::domain::AgentLiteral;

std::vector<std::string> texts(std::string_view regex) {
    std::vector<std::string> out;
    for (const AgentLiteral& literal : agent_regex_literals(regex)) out.push_back(literal.lower);
    return out;
}

std::string error_of(std::string_view regex) {
    try {
        agent_regex_literals(regex);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "accepted";
}

TEST_CASE("a literal pattern becomes itself, lower-cased, with its escapes resolved",
          "[agent_regex]") {
    CHECK(agent_regex_literals("Googlebot\\/") ==
          std::vector<AgentLiteral>{{"googlebot/", false, false}});
    CHECK(texts("Unshorten\\.It\\!") == std::vector<std::string>{"unshorten.it!"});
    CHECK(texts("Jamie's Spider") == std::vector<std::string>{"jamie's spider"});
    CHECK(texts("Mediapartners \\(Googlebot\\)") ==
          std::vector<std::string>{"mediapartners (googlebot)"});
}

TEST_CASE("anchors become start and end marks of the literal", "[agent_regex]") {
    CHECK(agent_regex_literals("^curl") == std::vector<AgentLiteral>{{"curl", true, false}});
    CHECK(agent_regex_literals("SSL Labs$") ==
          std::vector<AgentLiteral>{{"ssl labs", false, true}});
    CHECK(agent_regex_literals("^Seekbot$") == std::vector<AgentLiteral>{{"seekbot", true, true}});
}

TEST_CASE("alternatives, groups, optional parts and short classes expand into literals",
          "[agent_regex]") {
    CHECK(texts("Automaton|Newsify Feed Fetcher") ==
          std::vector<std::string>{"automaton", "newsify feed fetcher"});
    CHECK(texts("Ahrefs(Bot|SiteAudit)") ==
          std::vector<std::string>{"ahrefsbot", "ahrefssiteaudit"});
    CHECK(texts("[wW]get") == std::vector<std::string>{"wget"});
    CHECK(texts("S[eE][mM]rushBot") == std::vector<std::string>{"semrushbot"});
    CHECK(texts("colou?r") == std::vector<std::string>{"color", "colour"});
    CHECK(texts("(?:ab|cd)ef") == std::vector<std::string>{"abef", "cdef"});
    CHECK(agent_regex_literals("(^| )sentry\\/") ==
          std::vector<AgentLiteral>{{" sentry/", false, false}, {"sentry/", true, false}});
}

TEST_CASE("parts no finite set of texts can express keep the longest fixed part", "[agent_regex]") {
    CHECK(texts("ContextualBot[\\s\\S]*outcomes\\.net") ==
          std::vector<std::string>{"contextualbot"});
    CHECK(texts("Spider[\\s\\S]*spider\\.com") == std::vector<std::string>{"spider.com"});
    CHECK(texts("BlogTraffic\\/\\d\\.\\d+ Feed-Fetcher") ==
          std::vector<std::string>{" feed-fetcher"});
    CHECK(
        agent_regex_literals("AdsBot-Google([^-]|$)") ==
        std::vector<AgentLiteral>{{"adsbot-google", false, false}, {"adsbot-google", false, true}});
    CHECK(texts("foo.bar") == std::vector<std::string>{"foo"});
}

TEST_CASE("what the subset cannot translate is refused with a reason", "[agent_regex]") {
    CHECK_THAT(error_of("(?<!cu)bot"), Catch::Contains("look-around"));
    CHECK_THAT(error_of("\\bbot\\b"), Catch::Contains("word boundary"));
    CHECK_THAT(error_of("(a)\\1bc"), Catch::Contains("escape"));
    CHECK_THAT(error_of("bo{2}t"), Catch::Contains("counted repetition"));
    CHECK_THAT(error_of("abc^def"), Catch::Contains("'^'"));
    CHECK_THAT(error_of("abc$def"), Catch::Contains("'$'"));
    CHECK_THAT(error_of("(abc"), Catch::Contains("without ')'"));
    CHECK_THAT(error_of("abc)"), Catch::Contains("unbalanced"));
    CHECK_THAT(error_of("[abc"), Catch::Contains("without ']'"));
    CHECK_THAT(error_of("*abc"), Catch::Contains("nothing to repeat"));
    CHECK_THAT(error_of("ab.*"), Catch::Contains("fixed text"));
    CHECK_THAT(error_of("(abc)?"), Catch::Contains("fixed text"));
    CHECK_THAT(error_of(""), Catch::Contains("empty"));
    CHECK_THAT(error_of("[ab][cd][ef][gh][ij][kl][mn]"), Catch::Contains("too many"));
}

}  // namespace agent_regex_test
