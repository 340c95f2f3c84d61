#include "refgate/domain/click_classifier.hpp"

#include <catch2/catch.hpp>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace click_classifier_test {

namespace {

using refgate::domain::AgentMatchCache;
using refgate::domain::ClickClass;
using refgate::domain::ClickClassifier;
using refgate::domain::ClickSignals;

struct Agent {
    const char* who;
    const char* user_agent;
};

// User-Agents as the services document them (or as they show up in access logs).
const Agent kBots[] = {
    {"Slack link expanding", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"},
    {"Slack image proxy", "Slack-ImgProxy (+https://api.slack.com/robots)"},
    {"Slack", "Slackbot 1.0 (+https://api.slack.com/robots)"},
    {"Discord", "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)"},
    {"X/Twitter", "Twitterbot/1.0"},
    {"Facebook", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"},
    {"Facebook crawler", "Facebot"},
    {"Meta",
     "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)"},
    {"iMessage link preview",
     "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) "
     "Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0"},
    {"LinkedIn",
     "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)"},
    {"WhatsApp Android", "WhatsApp/2.23.20.0 A"},
    {"WhatsApp iOS", "WhatsApp/2.23.20.0 i"},
    {"Telegram", "TelegramBot (like TwitterBot)"},
    {"Skype and Teams",
     "Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 "
     "skype-url-preview@microsoft.com"},
    {"Microsoft preview",
     "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/112.0.0.0 Safari/537.36 Edg/112.0.1722.48 MicrosoftPreview/2.0 "
     "+https://aka.ms/MicrosoftPreview"},
    {"Applebot",
     "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)"},
    {"Googlebot smartphone",
     "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like "
     "Gecko) Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; Googlebot/2.1; "
     "+http://www.google.com/bot.html)"},
    {"Googlebot desktop",
     "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; "
     "+http://www.google.com/bot.html) Chrome/126.0.6478.126 Safari/537.36"},
    {"Googlebot classic", "Googlebot/2.1 (+http://www.google.com/bot.html)"},
    {"Google inspection tool",
     "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like "
     "Gecko) Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; Google-InspectionTool/1.0;)"},
    {"Google Ads landing page check", "AdsBot-Google (+http://www.google.com/adsbot.html)"},
    {"Google AdSense", "Mediapartners-Google"},
    {"Google feeds", "FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)"},
    {"Google APIs", "APIs-Google (+https://developers.google.com/webmasters/APIs-Google.html)"},
    {"GoogleOther",
     "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like "
     "Gecko) Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; GoogleOther)"},
    {"Google safety", "Google-Safety"},
    {"Google page renderer",
     "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko; Google-PageRenderer "
     "Google (+https://developers.google.com/+/web/snippet/)) Chrome/56.0.2924.87 Safari/537.36"},
    {"Google Web Preview",
     "Mozilla/5.0 (en-us) AppleWebKit/525.13 (KHTML, like Gecko; Google Web Preview) Version/3.1 "
     "Safari/525.13"},
    {"Lighthouse",
     "Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/119.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse"},
    {"bingbot", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"},
    {"bingbot evergreen",
     "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; "
     "+http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36"},
    {"BingPreview",
     "Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/534+ (KHTML, like Gecko) BingPreview/1.0b"},
    {"DuckDuckBot", "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)"},
    {"YandexBot", "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"},
    {"Baidu",
     "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)"},
    {"PetalBot",
     "Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile "
     "Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)"},
    {"Yahoo",
     "Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)"},
    {"Semrush", "Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)"},
    {"Ahrefs", "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"},
    {"Majestic", "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)"},
    {"Moz",
     "Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)"},
    {"OpenAI",
     "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; "
     "+https://openai.com/gptbot)"},
    {"Reddit", "Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)"},
    {"Pinterest", "Mozilla/5.0 (compatible; Pinterestbot/1.0; +http://www.pinterest.com/bot.html)"},
    {"Embedly", "Mozilla/5.0 (compatible; Embedly/0.2; +http://support.embed.ly/)"},
    {"Iframely", "Iframely/1.3.1 (+https://iframely.com/docs/about)"},
    {"VK", "Mozilla/5.0 (compatible; vkShare; +http://vk.com/dev/Share)"},
    {"Mastodon", "http.rb/5.1.1 (Mastodon/4.2.1; +https://mastodon.social/)"},
    {"Bluesky", "Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)"},
    {"Snapchat",
     "Mozilla/5.0 (compatible; Snap URL Preview Service; bot; snapchat_preview@snap.com)"},
    {"Barracuda", "Barracuda Sentinel (EE)"},
    {"headless Chrome",
     "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "HeadlessChrome/120.0.6099.109 Safari/537.36"},
    {"PhantomJS",
     "Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 "
     "Safari/538.1"},
    {"curl", "curl/8.5.0"},
    {"Wget", "Wget/1.21.3"},
    {"Python requests", "python-requests/2.31.0"},
    {"Python urllib", "Python-urllib/3.11"},
    {"Python aiohttp", "Python/3.11 aiohttp/3.9.1"},
    {"Python httpx", "python-httpx/0.27.0"},
    {"Go", "Go-http-client/2.0"},
    {"OkHttp", "okhttp/4.12.0"},
    {"Java", "Java/17.0.9"},
    {"Java 11+ HttpClient", "Java-http-client/17.0.9"},
    {"Apache HttpClient", "Apache-HttpClient/4.5.14 (Java/17.0.9)"},
    {"Perl", "libwww-perl/6.72"},
    {"axios", "axios/1.6.2"},
    {"node-fetch", "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)"},
    {"Guzzle", "GuzzleHttp/7"},
    {"Scrapy", "Scrapy/2.11.0 (+https://scrapy.org)"},
};

const Agent kHumans[] = {
    {"Chrome on Windows",
     "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Safari/537.36"},
    {"Chrome on macOS",
     "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Safari/537.36"},
    {"Chrome on Linux",
     "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 "
     "Safari/537.36"},
    {"Chrome on Android",
     "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Mobile Safari/537.36"},
    {"Chrome on iOS",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1"},
    {"Safari on macOS",
     "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/17.4.1 Safari/605.1.15"},
    {"Safari on iPhone",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1"},
    {"Safari on iPad",
     "Mozilla/5.0 (iPad; CPU OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/17.4.1 Mobile/15E148 Safari/604.1"},
    {"Firefox on Windows",
     "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0"},
    {"Firefox on Linux", "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0"},
    {"Firefox on Android", "Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0"},
    {"Firefox on iOS",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) FxiOS/125.0 Mobile/15E148 Safari/605.1.15"},
    {"Edge on Windows",
     "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.80"},
    {"Edge on Android",
     "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Mobile Safari/537.36 EdgA/124.0.2478.64"},
    {"Opera",
     "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Safari/537.36 OPR/110.0.0.0"},
    {"Samsung Internet",
     "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
     "SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36"},
    {"Brave (sends Chrome's User-Agent)",
     "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Safari/537.36"},
    {"Yandex Browser",
     "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/122.0.0.0 YaBrowser/24.4.0.0 Safari/537.36"},
    {"DuckDuckGo browser",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) Version/17.4 Mobile/15E148 DuckDuckGo/7 Safari/605.1.15"},
    {"Outlook desktop",
     "Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17328; Pro)"},
    {"Outlook desktop, embedded IE",
     "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 10.0; WOW64; Trident/7.0; .NET4.0C; .NET4.0E; "
     "Microsoft Outlook 16.0.17328; ms-office; MSOffice 16)"},
    {"Apple Mail / iOS web view",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) Mobile/15E148"},
    {"Gmail on Android (Android web view)",
     "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP1A.240405.002; wv) AppleWebKit/537.36 "
     "(KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36"},
    {"Google app on iOS",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) GSA/312.0.624098664 Mobile/15E148 Safari/604.1"},
    {"Facebook in-app browser",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/460.0.0.38.108;FBBV/588415364;FBDV/iPhone15,2;"
     "FBMD/iPhone;FBSN/iOS;FBSV/17.4;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]"},
    {"Instagram in-app browser",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) Mobile/15E148 Instagram 327.0.2.22.111 (iPhone14,5; iOS 17_4; en_US; en; "
     "scale=3.00; 1170x2532; 583404040)"},
    {"Snapchat in-app browser",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) Mobile/15E148 Snapchat/13.0.0.40 (like Safari/8618.1.15.10.15, panda)"},
    {"LinkedIn in-app browser",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) Mobile/15E148 [LinkedInApp]/9.29.6917"},
    {"X/Twitter in-app browser",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) Mobile/15E148 Twitter for iPhone/10.40"},
};

constexpr const char* kChrome =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36";

ClickClass classify_agent(const ClickClassifier& classifier, std::string_view user_agent) {
    return classifier.classify(ClickSignals{.user_agent = user_agent});
}

// The message of the std::invalid_argument that building from `patterns` throws.
std::string pattern_error(std::string_view patterns) {
    try {
        ClickClassifier classifier{patterns};
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    FAIL("the patterns were accepted");
    return {};
}

}  // namespace

TEST_CASE("link previews, crawlers, mail scanners and HTTP libraries are bots", "[classifier]") {
    STATIC_REQUIRE(std::size(kBots) >= 25);
    const ClickClassifier& classifier = ClickClassifier::builtin();
    for (const Agent& agent : kBots) {
        INFO(agent.who << ": " << agent.user_agent);
        CHECK(classify_agent(classifier, agent.user_agent) == ClickClass::bot);
    }
}

TEST_CASE("current browsers and in-app browsers are human", "[classifier]") {
    STATIC_REQUIRE(std::size(kHumans) >= 15);
    const ClickClassifier& classifier = ClickClassifier::builtin();
    for (const Agent& agent : kHumans) {
        INFO(agent.who << ": " << agent.user_agent);
        CHECK(classify_agent(classifier, agent.user_agent) == ClickClass::human);
    }
}

TEST_CASE("Yandex Browser is human while YandexBot is a bot", "[classifier]") {
    const ClickClassifier& classifier = ClickClassifier::builtin();
    CHECK(classify_agent(classifier,
                         "Mozilla/5.0 (Linux; Android 13; K) AppleWebKit/537.36 "
                         "(KHTML, like Gecko) Chrome/122.0.0.0 YaBrowser/24.1.6.89.00 "
                         "SA/3 Mobile Safari/537.36") == ClickClass::human);
    CHECK(classify_agent(classifier,
                         "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) "
                         "AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 "
                         "Mobile/15E148 Safari/604.1 (compatible; YandexMobileBot/3.0; "
                         "+http://yandex.com/bots)") == ClickClass::bot);
}

TEST_CASE("a purpose header asking for a prefetch or a preview makes a prefetch", "[classifier]") {
    ClickSignals signals{.user_agent = kChrome};
    SECTION("Purpose: prefetch (Chrome, Safari)") { signals.purpose = "prefetch"; }
    SECTION("Sec-Purpose: prefetch (speculation rules)") { signals.sec_purpose = "prefetch"; }
    SECTION("Sec-Purpose: prefetch;prerender") { signals.sec_purpose = "prefetch;prerender"; }
    SECTION("Sec-Purpose through Chrome's private prefetch proxy") {
        signals.sec_purpose = "prefetch;anonymous-client-ip";
    }
    SECTION("X-Purpose: preview (old Chrome and Safari)") { signals.x_purpose = "preview"; }
    SECTION("X-Moz: prefetch (old Firefox)") { signals.x_moz = "prefetch"; }
    SECTION("whatever the case") { signals.purpose = "Prefetch"; }
    SECTION("even on a HEAD request") {
        signals.head = true;
        signals.purpose = "prefetch";
    }
    SECTION("even from a bot's User-Agent") {
        signals.user_agent = "Twitterbot/1.0";
        signals.x_purpose = "PREVIEW";
    }
    SECTION("even without a User-Agent") {
        signals.user_agent = {};
        signals.x_moz = "prefetch";
    }
    CHECK(ClickClassifier::builtin().classify(signals) == ClickClass::prefetch);
}

TEST_CASE("purpose headers that ask for neither leave the User-Agent to decide", "[classifier]") {
    ClickSignals signals{.user_agent = kChrome, .purpose = "", .sec_purpose = "prerender"};
    CHECK(ClickClassifier::builtin().classify(signals) == ClickClass::human);
    signals.user_agent = "curl/8.5.0";
    CHECK(ClickClassifier::builtin().classify(signals) == ClickClass::bot);
}

TEST_CASE("a HEAD request is a bot even from a browser", "[classifier]") {
    CHECK(ClickClassifier::builtin().classify(ClickSignals{.head = true, .user_agent = kChrome}) ==
          ClickClass::bot);
}

TEST_CASE("an empty or blank User-Agent is a bot", "[classifier]") {
    const ClickClassifier& classifier = ClickClassifier::builtin();
    CHECK(classify_agent(classifier, "") == ClickClass::bot);
    CHECK(classify_agent(classifier, " ") == ClickClass::bot);
    CHECK(classify_agent(classifier, " \t  ") == ClickClass::bot);
    // Not for being blank: the built-in generic rules find no platform comment in " x ".
    const ClickClassifier without_rules{"bot zzz\n"};
    CHECK(classify_agent(without_rules, " x ") == ClickClass::human);
}

TEST_CASE("patterns match whatever the case of the User-Agent or of the pattern", "[classifier]") {
    const ClickClassifier& builtin = ClickClassifier::builtin();
    CHECK(classify_agent(builtin, "GOOGLEBOT/2.1") == ClickClass::bot);
    CHECK(classify_agent(builtin, "googlebot/2.1") == ClickClass::bot);
    CHECK(classify_agent(builtin, "FACEBOOKEXTERNALHIT/1.1") == ClickClass::bot);
    CHECK(classify_agent(builtin, "CURL/8.5.0") == ClickClass::bot);

    const ClickClassifier custom{"bot MiXeD-Case Agent\n"};
    CHECK(classify_agent(custom, "x mixed-case agent/1.0") == ClickClass::bot);
    CHECK(classify_agent(custom, "x MIXED-CASE AGENT/1.0") == ClickClass::bot);
    CHECK(classify_agent(custom, "x mixed-case-agent/1.0") == ClickClass::human);
}

TEST_CASE("bytes outside ASCII are matched as they are and never lower-cased", "[classifier]") {
    const ClickClassifier custom{"bot Ünï\n"};
    CHECK(classify_agent(custom, "x Ünï y") == ClickClass::bot);
    CHECK(classify_agent(custom, "x ünï y") == ClickClass::human);
    CHECK(classify_agent(ClickClassifier::builtin(),
                         "Mozilla/5.0 (X11; \xff\xfe\x80 Ünïcödé) Gecko/20100101") ==
          ClickClass::human);
}

TEST_CASE("only the first 512 bytes of the User-Agent are scanned", "[classifier]") {
    REQUIRE(refgate::domain::kMaxScannedUserAgentBytes == 512);
    const ClickClassifier& classifier = ClickClassifier::builtin();
    const std::string token = "Googlebot";

    // A browser-like start, so that no generic rule decides before the token is read.
    const std::string browser = "Mozilla/5.0 (X11; Linux x86_64) ";

    // The token ends on the last scanned byte.
    std::string inside = browser + std::string(512 - browser.size() - token.size(), 'x');
    inside += token;
    CHECK(classify_agent(classifier, inside) == ClickClass::bot);

    // The token's last byte is the first unscanned one.
    std::string straddling = browser + std::string(512 - browser.size() - token.size() + 1, 'x');
    straddling += token;
    CHECK(classify_agent(classifier, straddling) == ClickClass::human);

    std::string beyond = browser + std::string(4096, 'x');
    beyond += "curl/8.5.0";
    CHECK(classify_agent(classifier, beyond) == ClickClass::human);
}

TEST_CASE("a prefetch pattern outranks HEAD, a blank agent and bot patterns", "[classifier]") {
    const ClickClassifier classifier{
        "# a comment\n"
        "\n"
        "bot robo\n"
        "prefetch Edge Prerender\n"};
    CHECK(classifier.pattern_count() == 2);
    CHECK(classify_agent(classifier, "robo Edge Prerender") == ClickClass::prefetch);
    CHECK(classify_agent(classifier, "EDGE PRERENDER robo") == ClickClass::prefetch);
    CHECK(classifier.classify({.head = true, .user_agent = "x edge prerender"}) ==
          ClickClass::prefetch);
    CHECK(classifier.classify({.head = true, .user_agent = "x"}) == ClickClass::bot);
    CHECK(classify_agent(classifier, "") == ClickClass::bot);
    CHECK(classify_agent(classifier, "robo/1.0") == ClickClass::bot);
    CHECK(classify_agent(classifier, "Edge/1.0") == ClickClass::human);
}

TEST_CASE("a pattern inside or overlapping another pattern is still found", "[classifier]") {
    // Aho–Corasick's failure links: after "abc" fails to become "abce", "bcd" must still match;
    // and "bc" ends inside the longer "abcd".
    const ClickClassifier classifier{"bot abce\nbot bcd\nprefetch bc\nbot zzzz\n"};
    CHECK(classify_agent(classifier, "xabcdx") == ClickClass::prefetch);
    const ClickClassifier without_prefetch{"bot abce\nbot bcd\nbot cdef\n"};
    CHECK(classify_agent(without_prefetch, "xabcd") == ClickClass::bot);
    CHECK(classify_agent(without_prefetch, "abcdef") == ClickClass::bot);
    CHECK(classify_agent(without_prefetch, "aabcab") == ClickClass::human);
    CHECK(classify_agent(without_prefetch, "zabczbcd") == ClickClass::bot);
}

TEST_CASE("pattern text with CRLF line ends, tabs and no final newline parses", "[classifier]") {
    const ClickClassifier classifier{"# comment\r\n\r\n  bot\tfoo bar  \r\nprefetch baz"};
    CHECK(classifier.pattern_count() == 2);
    CHECK(classify_agent(classifier, "x Foo Bar y") == ClickClass::bot);
    CHECK(classify_agent(classifier, "x foo y") == ClickClass::human);
    CHECK(classify_agent(classifier, "xbazx") == ClickClass::prefetch);
}

TEST_CASE("a malformed pattern line throws an error naming the line", "[classifier]") {
    std::string line;
    std::string text;
    SECTION("an unknown kind") {
        text = "bot a\n# fine\nrobot foo\n";
        line = "line 3";
    }
    SECTION("a kind without a substring") {
        text = "bot a\nbot\n";
        line = "line 2";
    }
    SECTION("a kind followed by blanks only") {
        text = "prefetch   \t\n";
        line = "line 1";
    }
    SECTION("a kind glued to its substring") {
        text = "\n\n\n\nbot:foo\n";
        line = "line 5";
    }
    SECTION("a kind in the wrong case") {
        text = "Bot foo\n";
        line = "line 1";
    }
    SECTION("a substring that could never be scanned") {
        text = "bot " + std::string(513, 'x') + "\n";
        line = "line 1";
    }
    std::string message = pattern_error(text);
    CHECK_THAT(message, Catch::Contains(line));
    CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("the built-in patterns parse and the classes have their counter names", "[classifier]") {
    CHECK(ClickClassifier::builtin().pattern_count() >= 60);
    CHECK(&ClickClassifier::builtin() == &ClickClassifier::builtin());
    CHECK(refgate::domain::to_string(ClickClass::human) == "human");
    CHECK(refgate::domain::to_string(ClickClass::bot) == "bot");
    CHECK(refgate::domain::to_string(ClickClass::prefetch) == "prefetch");
}

TEST_CASE("the per-thread agent cache answers what the walk answers, however agents collide",
          "[classifier]") {
    const ClickClassifier& builtin = ClickClassifier::builtin();
    const ClickClassifier prefetching{"bot crawler\nprefetch previewer\n"};
    std::vector<std::string> agents;
    for (const Agent& agent : kBots) agents.emplace_back(agent.user_agent);
    for (const Agent& agent : kHumans) agents.emplace_back(agent.user_agent);
    // Many more distinct agents than the cache has entries, so that entries are replaced.
    for (int i = 0; i < 3 * static_cast<int>(AgentMatchCache::kEntries); ++i) {
        agents.push_back("Mozilla/5.0 (build " + std::to_string(i) + ")" +
                         (i % 3 == 0   ? " crawler"
                          : i % 3 == 1 ? " Previewer"
                                       : ""));
    }
    agents.emplace_back("");
    agents.emplace_back("   ");
    agents.push_back(std::string(AgentMatchCache::kMaxAgentBytes, 'a') + " crawler");  // too long
    AgentMatchCache builtin_cache(builtin);
    AgentMatchCache prefetching_cache(prefetching);
    std::size_t checked = 0;
    for (int pass = 0; pass < 3; ++pass) {
        for (const std::string& agent : agents) {
            INFO("pass " << pass << ": " << agent);
            REQUIRE(builtin_cache.match(agent) == builtin.match_agent(agent));
            REQUIRE(prefetching_cache.match(agent) == prefetching.match_agent(agent));
            checked += 2;
        }
    }
    CHECK(checked == 3 * 2 * agents.size());
    // The two halves give classify()'s answer.
    ClickSignals head;
    head.head = true;
    head.user_agent = kHumans[0].user_agent;
    CHECK(builtin.classify(head, builtin_cache.match(head.user_agent)) == ClickClass::bot);
    ClickSignals preview;
    preview.user_agent = "Mozilla/5.0 Previewer";
    CHECK(prefetching.classify(preview, prefetching_cache.match(preview.user_agent)) ==
          ClickClass::prefetch);
}

}  // namespace click_classifier_test
