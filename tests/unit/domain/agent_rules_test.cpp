#include "refgate/domain/agent_rules.hpp"

#include <catch2/catch.hpp>
#include <initializer_list>
#include <string_view>

#include "refgate/domain/click_classifier.hpp"

// Each generic rule with agents that must and must not match. The must-not lists are browsers and
// in-app browsers; every must-match agent is also a bot for the built-in classifier.
namespace agent_rules_test {

namespace rules = refgate::agent_rules;
using refgate::ClickClass;
using refgate::ClickClassifier;
using refgate::ClickSignals;

using Rule = bool (*)(std::string_view) noexcept;

constexpr std::string_view kBrowsers[] = {
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (Linux; Android 14; SM-S928B) AppleWebKit/537.36 (KHTML, like Gecko) "
    "SamsungBrowser/27.0 Chrome/125.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko",
    "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 10.0; WOW64; Trident/7.0; .NET4.0C; .NET4.0E; "
    "Microsoft Outlook 16.0.17928; ms-office; MSOffice 16)",
    "Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17928; Pro)",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/482.0.0.41.104;FBBV/646442316;FBDV/iPhone14,2;"
    "FBMD/iPhone;FBSN/iOS;FBSV/17.6.1;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) Mobile/15E148 Instagram 350.0.0.24.84 (iPhone15,3; iOS 17_6_1; en_US; en; "
    "scale=3.00; 1290x2796; 643360316; IABMV/1)",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) Mobile/15E148 musical_ly_37.0.0 JsSdk/2.0 NetType/WIFI Channel/App Store "
    "ByteLocale/en Region/US WKWebView/1 BytedanceWebview/d8a21c6 FalconTag/",
    "Mozilla/5.0 (Linux; Android 14; SM-G991B Build/UP1A.231005.007; wv) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.86 Mobile Safari/537.36Snapchat/13.14.0.48 "
    "(SM-G991B; Android 14#G991BXXSEGXH5#34; gzip; )",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) Mobile/15E148 [LinkedInApp]/9.30.8356",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) GSA/343.0.695551749 Mobile/15E148 Safari/604.1",
};

void check_rule(Rule rule, std::initializer_list<std::string_view> matching) {
    for (std::string_view agent : matching) {
        INFO("must match: " << agent);
        CHECK(rule(agent));
        CHECK(ClickClassifier::builtin().classify(ClickSignals{.user_agent = agent}) ==
              ClickClass::bot);
    }
    for (std::string_view agent : kBrowsers) {
        INFO("must not match: " << agent);
        CHECK_FALSE(rule(agent));
    }
}

TEST_CASE("a URL inside the User-Agent marks a bot", "[agent_rules]") {
    check_rule(rules::names_url,
               {"Mozilla/5.0 (compatible; Foo/1.0; +http://foo.example/bot)",
                "SomeFetcher (https://fetcher.example)", "Mozilla/5.0 (X11; www.monitor.example)"});
    CHECK_FALSE(rules::names_url("Mozilla/5.0 (X11; httpd) wwwx"));
}

TEST_CASE("an e-mail address inside the User-Agent marks a bot", "[agent_rules]") {
    check_rule(rules::has_email_address, {"Mozilla/5.0 (compatible; Quux; crawler@quux.example)",
                                          "Grabber/2 (contact: ops+grab@data-corp.io)"});
    CHECK_FALSE(rules::has_email_address("Mozilla/5.0 (X11; @home) x@"));
    CHECK_FALSE(rules::has_email_address("Mozilla/5.0 (a @b.c)"));
    CHECK_FALSE(rules::has_email_address("Mozilla/5.0 (a@b)"));
}

TEST_CASE("a lone product/version without a platform comment marks a bot", "[agent_rules]") {
    check_rule(rules::lacks_platform_comment,
               {"Zorblax/1.0", "SomeTool/2.3.4 OtherLib/1.1", "WhatsApp/2.23.20.0 A",
                "default_user_agent", "Mozilla/4.0 (Hydra)", "Mozilla/5.0 (Hydra Proxy)  "});
    CHECK_FALSE(rules::lacks_platform_comment("Zorblax/1.0 (Linux)"));
    CHECK_FALSE(rules::lacks_platform_comment("Mozilla/5.0 refgate-privacy-probe"));
    CHECK_FALSE(rules::lacks_platform_comment("Mozilla/5.0 (X11; Linux)"));
    CHECK_FALSE(rules::lacks_platform_comment("Mozilla/5.0 (Hydra) Gecko/20100101"));
}

TEST_CASE("a compatible; form without a browser engine marks a bot", "[agent_rules]") {
    check_rule(rules::is_compatible_without_engine,
               {"Mozilla/5.0 (compatible; Zorblax/2.1)",
                "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)",
                "Mozilla/5.0 (COMPATIBLE; Quux Fetcher)"});
    CHECK_FALSE(rules::is_compatible_without_engine(
        "Mozilla/5.0 (compatible; MSIE 10.0; Windows NT 6.1; Trident/6.0)"));
    CHECK_FALSE(rules::is_compatible_without_engine(
        "Mozilla/5.0 (compatible; Konqueror/4.5) Presto/2.12 Version/12"));
    CHECK(rules::names_browser_engine("Gecko/20100101"));
    CHECK_FALSE(rules::names_browser_engine("(KHTML, like Gecko)"));
}

TEST_CASE("HTTP libraries and command-line clients are bots", "[agent_rules]") {
    check_rule(rules::is_http_client,
               {"curl/8.11.0", "Wget/1.24.5", "python-requests/2.32.3", "Python/3.12 aiohttp/3.10",
                "Go-http-client/2.0", "okhttp/4.12.0", "Java/21.0.5", "Apache-HttpClient/5.4.1",
                "axios/1.7.7", "node-fetch/1.0", "libwww-perl/6.77", "PHP/8.3", "Ruby",
                "HTTPie/3.2.4", "undici", "DuckDuckGo/0 CFNetwork/1126 Darwin/19.5.0",
                "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A.240905.003)"});
}

TEST_CASE("headless and automated browsers are bots", "[agent_rules]") {
    check_rule(rules::is_headless_browser,
               {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "HeadlessChrome/131.0.6778.69 Safari/537.36",
                "Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) "
                "PhantomJS/2.1.1 Safari/538.1",
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/120.0.0.0 Safari/537.36 Puppeteer",
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/118.0.0.0 Cypress/13.15.0 Electron/27.3.11 Safari/537.36"});
}

TEST_CASE("monitoring and uptime services are bots", "[agent_rules]") {
    check_rule(rules::is_monitoring_service,
               {"Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/98 Safari/537.4 (StatusCake)",
                "kube-probe/1.31", "ELB-HealthChecker/2.0", "check_http/v2.4.9 (nagios-plugins)",
                "Mozilla/5.0 (Linux; Android 11) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/119.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse"});
}

TEST_CASE("feed readers are bots", "[agent_rules]") {
    check_rule(rules::is_feed_reader,
               {"Feedly/1.0 (+http://www.feedly.com/fetcher.html; 6 subscribers)",
                "Mozilla/5.0 (compatible; inoreader.com; 12 subscribers)",
                "Tiny Tiny RSS/24.09 (https://tt-rss.org/)", "Newsboat/2.37 (Linux x86_64)",
                "NetNewsWire (RSS Reader; https://netnewswire.com/)"});
}

TEST_CASE("web archivers are bots", "[agent_rules]") {
    check_rule(rules::is_archiver,
               {"Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive)",
                "ia_archiver (+http://www.alexa.com/site/help/webmasters; crawler@alexa.com)",
                "Mozilla/5.0 (compatible; heritrix/3.4.0 +https://crawler.example)",
                "Mozilla/4.5 (compatible; HTTrack 3.0x; Windows 98)"});
}

TEST_CASE("AI crawlers and fetchers are bots", "[agent_rules]") {
    check_rule(
        rules::is_ai_crawler,
        {"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; "
         "+https://openai.com/gptbot)",
         "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; "
         "ChatGPT-User/1.0; +https://openai.com/bot",
         "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; "
         "+claudebot@anthropic.com)",
         "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; "
         "PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
         "CCBot/2.0 (https://commoncrawl.org/faq/)",
         "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters)"});
}

TEST_CASE("every token rule is named and non-empty", "[agent_rules]") {
    for (const rules::TokenRule& rule : rules::token_rules()) {
        INFO(rule.name);
        CHECK_FALSE(rule.name.empty());
        CHECK_FALSE(rule.tokens.empty());
        for (std::string_view token : rule.tokens) {
            for (char c : token) CHECK_FALSE((c >= 'A' && c <= 'Z'));
        }
    }
}

TEST_CASE("a phone whose model name ends in a generic word is still a person", "[agent_rules]") {
    CHECK(ClickClassifier::builtin().classify(ClickSignals{
              .user_agent = "Mozilla/5.0 (Linux; Android 11; CUBOT NOTE 20 Build/RP1A.200720.011; "
                            "wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 "
                            "Chrome/120.0.6099.144 Mobile Safari/537.36"}) == ClickClass::human);
    CHECK(
        ClickClassifier::builtin().classify(ClickSignals{
            .user_agent = "Mozilla/5.0 (Linux; Android 11; CUBOT NOTE 20) AppleWebKit/537.36 "
                          "(KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 Googlebot/2.1"}) ==
        ClickClass::bot);
}

}  // namespace agent_rules_test
