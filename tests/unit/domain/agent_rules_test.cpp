#include "refgate/domain/agent_rules.hpp"

#include <catch2/catch.hpp>
#include <initializer_list>
#include <string_view>

#include "refgate/domain/click_classifier.hpp"

// Each generic rule with agents that must and must not match. The must-not lists are browsers and
// in-app browsers; every must-match agent is also a bot for the built-in classifier.
namespace agent_rules_test {

namespace rules = refgate::domain::agent_rules;
using refgate::domain::ClickClass;
using refgate::domain::ClickClassifier;
using refgate::domain::ClickSignals;

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

// Agents of real browsers that no rule may count as anything but human, each carrying the
// positive evidence of a browser that exempts it from the rules that punish a missing part.
void check_browsers(std::initializer_list<std::string_view> agents) {
    for (std::string_view agent : agents) {
        INFO("a person's browser: " << agent);
        CHECK(rules::has_browser_grammar(agent));
        CHECK(ClickClassifier::builtin().classify(ClickSignals{.user_agent = agent}) ==
              ClickClass::human);
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

TEST_CASE("a compatible; form without any browser grammar marks a bot", "[agent_rules]") {
    check_rule(rules::is_compatible_without_engine,
               {"Mozilla/5.0 (compatible; Zorblax/2.1)", "Mozilla/5.0 (COMPATIBLE; Quux Fetcher)",
                // A tool's name where Internet Explorer puts `MSIE x.y`.
                "Mozilla/4.0 (compatible; GoogleToolbar 4.0.1019.5266-big; Windows XP 5.1; "
                "MSIE 6.0.2900.2180)"});
    CHECK_FALSE(rules::is_compatible_without_engine(
        "Mozilla/5.0 (compatible; MSIE 10.0; Windows NT 6.1; Trident/6.0)"));
    CHECK_FALSE(rules::is_compatible_without_engine(
        "Mozilla/5.0 (compatible; Konqueror/4.5) Presto/2.12 Version/12"));
    CHECK(rules::names_browser_engine("Gecko/20100101"));
    CHECK(rules::names_browser_engine("(compatible; Konqueror/4.5; Linux) KHTML/4.5.4"));
    CHECK_FALSE(rules::names_browser_engine("(KHTML, like Gecko)"));
}

TEST_CASE("old Internet Explorer and Windows Mobile, with device tokens, are people",
          "[agent_rules][issue39]") {
    check_browsers({
        "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)",
        "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1; SV1; .NET CLR 1.1.4322)",
        "Mozilla/4.0 (compatible; MSIE 6.0; Windows CE; IEMobile 7.11) Sprint:PPC6800",
        "Mozilla/4.0 (compatible; MSIE 4.01; Windows CE; PPC; MDA Pro/1.0 Profile/MIDP-2.0 "
        "Configuration/CLDC-1.1)",
        "Mozilla/1.22 (compatible; MSIE 5.01; PalmOS 3.0) EudoraWeb 2.1",
        "Mozilla/4.0 (compatible; MSIE 6.0; KDDI-CA3B) Opera 8.60 [ja]",
        "Mozilla/1.1 (compatible; MSPIE 2.0; Windows CE)",
    });
}

TEST_CASE("HTTP libraries and command-line clients are bots", "[agent_rules]") {
    check_rule(rules::is_http_client,
               {"curl/8.11.0", "Wget/1.24.5", "python-requests/2.32.3", "Python/3.12 aiohttp/3.10",
                "Go-http-client/2.0", "okhttp/4.12.0", "Java/21.0.5", "Apache-HttpClient/5.4.1",
                "axios/1.7.7", "node-fetch/1.0", "libwww-perl/6.77", "PHP/8.3", "Ruby",
                "HTTPie/3.2.4", "undici", "Apache-HttpClient/4.5.14 (Java/17.0.9)"});
    // A Java VM on a phone is not Java's HTTP client.
    CHECK_FALSE(rules::is_http_client(
        "LG-GT540 Mozilla/5.0 (Linux; U; Android 1.6; en-us; LG-GT540; Build/Donut) "
        "AppleWebKit/528.5+ (KHTML, like Gecko) Version/3.1.2 Mobile Safari/525.20.1 Java/Jbed/7.0 "
        "Profile/MIDP-2.1 Configuration/CLDC-1.1"));
    // Nor is a Firefox add-on PHP.
    CHECK_FALSE(rules::is_http_client(
        "Mozilla/5.0 (Linux; U; Android 1.5; de-de; HTC Magic Build/PLAT-RC33) AppleWebKit/528.5 "
        "(KHTML, like Gecko) Version/3.1.2 Mobile Safari/525.20.1 FirePHP/0.3"));
}

TEST_CASE("an app's own HTTP stack is a prefetch, neither a person nor a bot",
          "[agent_rules][issue39]") {
    for (std::string_view agent : {
             "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A.240905.003)",
             "Dalvik/1.6.0 (Linux; U; Android 4.4.2; SM-T530 Build/KOT49H)",
             "Podcasts/1650.20 CFNetwork/1408.0.4 Darwin/22.5.0",
             "Mail/3124 CFNetwork/760.4.2 Darwin/15.4.0 (x86_64)",
             "DuckDuckGo/0 CFNetwork/1126 Darwin/19.5.0",
             "Linux; U; Android 12; en_US; Chromecast; Build/STTE.230319.008; Cronet/114.0.5735.33",
             "AndroidDownloadManager/5.1 (Linux; U; Android 5.1; Z820 Build/LMY47D)",
             "Downcast/2.9.11 (iPhone; iOS 9.2; Scale/2.00)",
             "Reader/4.2 (com.example.reader; build:77; iOS 17.5.1) Alamofire/5.9.1",
         }) {
        INFO(agent);
        CHECK(rules::is_app_http_stack(agent));
        CHECK(ClickClassifier::builtin().classify(ClickSignals{.user_agent = agent}) ==
              ClickClass::prefetch);
    }
    for (std::string_view agent : kBrowsers) {
        INFO("must not match: " << agent);
        CHECK_FALSE(rules::is_app_http_stack(agent));
    }
    // An app that a bot rule or crawler pattern names stays a bot: a feed reader polling.
    CHECK(ClickClassifier::builtin().classify(
              ClickSignals{.user_agent = "NetNewsWire/6.1.4 CFNetwork/1410.0.3 Darwin/22.6.0"}) ==
          ClickClass::bot);
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

TEST_CASE("a browser's agent with a tool's word in it is a bot", "[agent_rules][issue39]") {
    check_rule(rules::names_a_tool,
               {// Site diagnostics and "observatory" tools.
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/131.0.0.0 Safari/537.36 SiteChecker/2.1",
                "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0 "
                "Observatory/1.2",
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like "
                "Gecko) Chrome/130.0.0.0 Safari/537.36 PageAudit",
                // Ad-platform verification and thumbnail fetchers.
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/131.0.0.0 Safari/537.36 AdVerification/3.0",
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/129.0.0.0 Safari/537.36 ThumbnailService",
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/131.0.0.0 Safari/537.36 (Screenshot)",
                // Lead-generation and prospecting scrapers.
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/126.0.0.0 Safari/537.36 ProspectFinder/4.1",
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like "
                "Gecko) Version/17.4 Safari/605.1.15 LeadGen-Enrichment/1.4",
                // Vulnerability scanners.
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/120.0.0.0 Safari/537.36 VulnerabilityScanner/4.2",
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:115.0) Gecko/20100101 Firefox/115.0 "
                "SecurityProbe",
                // WebPageTest's comment form.
                "Mozilla/5.0 (Windows NT 6.1; Trident/7.0; rv:11.0; PTST 2.386) like Gecko"});
}

TEST_CASE("something inside the (KHTML, like Gecko) comment marks a bot",
          "[agent_rules][issue39]") {
    check_rule(rules::extends_khtml_comment,
               {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko; Google Web "
                "Preview) Chrome/27.0.1453 Safari/537.36",
                "Mozilla/5.0 (en-us) AppleWebKit/537.36 (KHTML, like Gecko; Google PP Default) "
                "Chrome/27.0.1453 Safari/537.36",
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML like Gecko; "
                "Acme Thumbs) Chrome/131.0.0.0 Safari/537.36"});
    // Old WebKit browsers put Safari's version there after a comma.
    CHECK_FALSE(rules::extends_khtml_comment(
        "Mozilla/5.0 (Windows; U; Windows NT 6.0; en-US) AppleWebKit/527  (KHTML, like Gecko, "
        "Safari/419.3) Arora/0.6 (Change: )"));
}

TEST_CASE("a template agent with a placeholder version is a bot", "[agent_rules][issue39]") {
    check_rule(rules::has_placeholder_version,
               {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/XX.0.0.0 Safari/537.36",
                "Mozilla/5.0 (X11; Linux x86_64; rv:x.x) Gecko/20100101 Firefox/x.x",
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like "
                "Gecko) Chrome/{version} Safari/537.36",
                "MyScraper/{{version}} (+contact)"});
    CHECK_FALSE(rules::has_placeholder_version("Opera/9.80 (X11; Linux x86_64) Presto/2.12.388"));
}

TEST_CASE("a millisecond timestamp in the agent marks a bot", "[agent_rules][issue39]") {
    for (std::string_view agent :
         {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/131.0.0.0 Safari/537.36 1733184000000",
          "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, "
          "like Gecko) Version/17.5 Mobile/15E148 Safari/604.1 ts/1700000000123",
          "Fetch-1712345678901"}) {
        INFO(agent);
        CHECK(rules::has_millisecond_timestamp(agent));
        CHECK(ClickClassifier::builtin().classify(ClickSignals{.user_agent = agent}) ==
              ClickClass::bot);
    }
    for (std::string_view agent : kBrowsers) {
        INFO("must not match: " << agent);
        CHECK_FALSE(rules::has_millisecond_timestamp(agent));
    }
    // Gecko build dates (14 digits), seconds (10), an i-mode serial of zeros: not milliseconds.
    CHECK_FALSE(rules::has_millisecond_timestamp(
        "Firefox/33.0.0 (Windows NT 6.1; WOW64) Gecko/20141011015303"));
    CHECK_FALSE(rules::has_millisecond_timestamp("msnbot/2.0b v1394720947.6703"));
    CHECK_FALSE(rules::has_millisecond_timestamp(
        "Vodafone/1.0/V804SH/SHJ001/SN0000000000000 Browser/UP.Browser/7.0.2.1"));
}

TEST_CASE("a web server or web application fetching from itself is a bot",
          "[agent_rules][issue39]") {
    check_rule(rules::is_server_software,
               {"Apache/2.4.62 (Debian) OpenSSL/3.0.15 (internal dummy connection)",
                "WordPress/6.7.1; https://blog.example", "WordPress/6.7.1", "nginx/1.27.3",
                "Drupal (+https://www.drupal.org/)"});
}

TEST_CASE("feature phones and WAP browsers are people", "[agent_rules][issue39]") {
    check_browsers({
        "Nokia6300/2.0 (05.00) Profile/MIDP-2.0 Configuration/CLDC-1.1",
        "KDDI-CA3H UP.Browser/6.2_7.2.7.1.K.5.207 (GUI) MMP/2.0",
        "SAMSUNG-GT-C3312/1.0 NetFront/4.2 Profile/MIDP-2.0 Configuration/CLDC-1.1",
        "SonyEricssonK750i/R1CA Browser/SEMC-Browser/4.2 Profile/MIDP-2.0 Configuration/CLDC-1.1",
        "BlackBerry8520/5.0.0.681 Profile/MIDP-2.1 Configuration/CLDC-1.1 VendorID/168",
        "MAUI WAP Browser",
        "Maui_Browser_Karbonn_K9 (MRE/3.1.00(1536);MAUI/nn_K9NEWM_V0013;LCD/240320)",
        "LG-KP500 Teleca/WAP2.0 MIDP-2.0/CLDC-1.1",
        "Huawei/1.0/H12HW/B000 Browser/Obigo-Browser/Q04A",
        "DoCoMo/1.0/N505i/c20/TB/W24H12",
        "SoftBank/2.0/944SH/SHJ001/SN000000000000000 Browser/NetFront/3.5 Profile/MIDP-2.0 "
        "Configuration/CLDC-1.1",
        "SAMSUNG GT-S3330 Opera/9.80 (J2ME/MIDP; Opera Mini/7.1.32840/37.7936; U; en) "
        "Presto/2.12.423 Version/12.16",
    });
}

TEST_CASE("Android stock browsers in their compact form are people", "[agent_rules][issue39]") {
    check_browsers({
        "Lenovo-A880/S100 Linux/3.4.5 Android/4.2 Release/08.07.2013 Browser/AppleWebKit 534.30 "
        "Profile/ Configuration;",
        "HUAWEI Y325-T00_TD/V1 Linux/3.4.5 Android/2.3.6 Release/03.26.2013 "
        "Browser/AppleWebKit533.1 Mobile Safari/533.1;",
        "TECNO D5 Linux/3.0.13 Android/4.0.4 Release/04.27.2013 Browser/AppleWebKit534.30 "
        "Profile/MIDP-2.0 Configuration/CLDC-1.1 Mobile Safari/534.30 Android 4.0.1;",
    });
}

TEST_CASE("smart-TV browsers are people", "[agent_rules][issue39]") {
    check_browsers({
        "Mozilla/5.0 (compatible; NETTV/4.6.0; Linux) CE-HTML/1.0 HbbTV/1.2.1",
        "HbbTV/1.5.1 (+DRM; Vestel; MB230; 3.1.0; ; ) SmartTvA/3.0.0",
        "Mozilla/5.0 (compatible; Philips-TV) CE-HTML/1.0 NETTV/3.2.1",
    });
}

TEST_CASE("compact agents of proxy browsers are people", "[agent_rules][issue39]") {
    check_browsers({
        "UCWEB/2.0 (Java; U; MIDP-2.0; en-US; Nokia305) U2/1.0.0 UCBrowser/9.4.1.377 U2/1.0.0 "
        "Mobile",
        "UCWEB/8.9 dv(NokiaX2-01);pr(UCBrowser/8.9.0.253);ov(S40);pf(Java);la(en-US)",
        "UCWEB/2.0 (MIDP-2.0; U; Adr 4.2.2; en-US; Panasonic_P31) U2/1.0.0 UCBrowser/9.4.0.460 "
        "U2/1.0.0 Mobile",
        "Opera/9.80 (J2ME/MIDP; Opera Mini/6.5.27510/34.1624; U; en) Presto/2.8.119 Version/11.10",
    });
}

TEST_CASE("bare device-model agents are people", "[agent_rules][issue39]") {
    check_browsers({
        "SonyEricssonT68/R201A",
        "Nokia3310/1.0 (04.53)",
        "MOT-L7v/08.B7.5DR MIB/2.2.1 Profile/MIDP-2.0 Configuration/CLDC-1.1",
        "nook browser/1.0",
    });
}

TEST_CASE("a crawler pattern outweighs the grammar of a browser", "[agent_rules][issue39]") {
    for (std::string_view agent :
         {"Nokia6230/2.0 (04.44) Profile/MIDP-2.0 Configuration/CLDC-1.1 (compatible; "
          "Googlebot-Mobile/2.1; +http://www.google.com/bot.html)",
          "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.0) Match by Siteimprove.com",
          "BlackBerry9000/4.6.0.167 Profile/MIDP-2.0 Configuration/CLDC-1.1 VendorID/102 "
          "ips-agent"}) {
        INFO(agent);
        CHECK(rules::has_browser_grammar(agent));
        CHECK(ClickClassifier::builtin().classify(ClickSignals{.user_agent = agent}) ==
              ClickClass::bot);
    }
}

TEST_CASE("lone products without grammar are still bots", "[agent_rules][issue39]") {
    for (std::string_view agent :
         {"Zorblax/1.0", "curl/8.11.0", "Mozilla/5.0 (compatible; Zorblax/2.1)",
          "Mozilla/4.0 (Hydra)"}) {
        INFO(agent);
        CHECK_FALSE(rules::has_browser_grammar(agent));
        CHECK(ClickClassifier::builtin().classify(ClickSignals{.user_agent = agent}) ==
              ClickClass::bot);
    }
}

// A token: lower-case ASCII, possibly tied to the start with `^`.
void check_token(std::string_view token) {
    INFO(token);
    CHECK_FALSE(token.empty());
    CHECK(token.find('^', 1) == std::string_view::npos);
    for (char c : token) CHECK_FALSE((c >= 'A' && c <= 'Z'));
}

TEST_CASE("every token rule is named and non-empty", "[agent_rules]") {
    for (const rules::TokenRule& rule : rules::token_rules()) {
        INFO(rule.name);
        CHECK_FALSE(rule.name.empty());
        CHECK_FALSE(rule.tokens.empty());
        for (std::string_view token : rule.tokens) check_token(token);
    }
    for (std::string_view token : rules::app_http_stack_tokens()) check_token(token);
    for (std::string_view token : rules::browser_grammar_tokens()) check_token(token);
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
