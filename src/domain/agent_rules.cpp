#include "refgate/domain/agent_rules.hpp"

#include <algorithm>

namespace refgate::domain::agent_rules {
namespace {

// Before adding a token: it must never occur in a browser's or an in-app browser's User-Agent
// (tests/data/agents/browsers.txt), and it is matched case-insensitively anywhere.
// The token tables are wrapped by hand, several tokens a line.
// clang-format off
constexpr std::string_view kUrlTokens[] = {
    "http://", "https://", "www.", ".com/", ".com)", ".com;", ".com ", ".org/", ".net/", ".io/"};

constexpr std::string_view kHttpClientTokens[] = {
    "curl", "wget", "python-requests", "python-urllib", "python-httpx", "python/", "aiohttp",
    "httpx/", "go-http-client", "go 1.1 package http", "okhttp", "^java/", "(java/", "java-http-client",
    "apache-httpclient", "httpclient", "httpcomponents", "axios", "node-fetch", "node.js", "undici",
    "got (", "libwww-perl", "lwp-", "lwp::", "^php/", " php/", "php-curl", "guzzlehttp", "ruby", "faraday",
    "http.rb/", "httpie", "postmanruntime", "insomnia/", "restsharp", "winhttp", "reqwest",
    "hackney", "colly", "mechanize", "scrapy", "httpunit", "aria2", "powershell", "dart:io",
    "grpc-", "rest-client", "typhoeus", "unirest", "superagent", "request-promise", "akka-http",
    "lua-resty-http", "jetty/"};

constexpr std::string_view kHeadlessTokens[] = {
    "headless", "phantomjs", "puppeteer", "playwright", "selenium", "webdriver", "slimerjs",
    "htmlunit", "cypress/", "nightmare/"};

constexpr std::string_view kMonitoringTokens[] = {
    "uptime", "pingdom", "statuscake", "site24x7", "monitor", "check_http", "nagios", "zabbix",
    "datadog", "newrelic", "catchpoint", "gtmetrix", "pagespeed", "page speed", "lighthouse",
    "healthcheck", "health-check", "health check", "kube-probe", "synthetic", "ruxit", "dejaclick",
    "rigor", "ptst/", "checkly", "hetrixtools", "freshping", "updown.io", "prometheus", "blackbox",
    "munin/", "xymon", "monit/", "dmbrowser", "alertsite", "appdynamics", "dynatrace", "sitescope",
    "webpagetest", "speedcurve", "sematext", "betteruptime"};

constexpr std::string_view kFeedReaderTokens[] = {
    "feed", "rss", "newsblur", "inoreader", "netnewswire", "reeder/", "bloglovin", "newsboat",
    "newsbeuter", "liferea", "akregator", "miniflux", "theoldreader", "bazqux", "netvibes",
    "blogtrottr", "superfeedr", "simplepie", "newsgator", "bloglines", "flipboard", "readkit",
    "fever/", "tt-rss", "selfoss", "nextcloud-news", "newsify"};

constexpr std::string_view kArchiverTokens[] = {
    "archive", "heritrix", "wayback", "httrack", "webcopier", "sitesucker", "webrecorder",
    "browsertrix", "warcprox", "wpull", "offline explorer", "teleport pro", "webzip", "webstripper",
    "grab-site"};

constexpr std::string_view kAiCrawlerTokens[] = {
    "gptbot", "chatgpt-user", "oai-searchbot", "claudebot", "claude-user", "claude-searchbot",
    "claude-web", "anthropic-ai", "perplexitybot", "perplexity-user", "ccbot", "bytespider",
    "amazonbot", "applebot-extended", "cohere-ai", "cohere-training", "diffbot", "youbot",
    "meta-externalagent", "meta-externalfetcher", "imagesiftbot", "timpibot", "omgili",
    "mistralai-user", "duckassistbot", "ai2bot", "google-cloudvertexbot", "kangaroo bot",
    "firecrawl", "iaskspider", "phindbot", "novaact", "petalbot", "webzio-extended", "facebookbot",
    "bravebot"};

// What tools that send a browser's agent add to it, at the end or inside a comment: site
// checkers and diagnostics, thumbnail and screenshot services, ad verification, lead generation
// and prospecting, vulnerability scanners. `ptst ` is WebPageTest's comment form (`PTST 2.386`).
constexpr std::string_view kToolTokens[] = {
    "checker", "scanner", "screenshot", "thumbnail", "snapshot", "observatory", "validator",
    "audit", "analyzer", "analyser", "inspector", "diagnostic", "scraper", "grabber", "fetcher",
    "render", "verif", "prospect", "leadgen", "lead-gen", "enrich", "vulnerab", "security",
    "probe", "ptst "};

constexpr std::string_view kKhtmlCommentTokens[] = {"(khtml, like gecko;", "(khtml like gecko;"};

constexpr std::string_view kPlaceholderTokens[] = {"/xx.", "/x.x", "{"};

constexpr std::string_view kServerTokens[] = {
    "dummy connection", "wordpress/", "wp-cron", "drupal", "joomla", "^nginx", "^lighttpd",
    "^microsoft-iis"};

// AFNetworking's default agent ends its comment with `Scale/3.00`; Alamofire names itself.
constexpr std::string_view kAppHttpStackTokens[] = {
    "dalvik/", "cfnetwork/", "cronet/", "androiddownloadmanager", "scale/", "alamofire/"};

// Positive evidence of a browser (see has_browser_grammar). Feature phones and TVs carry their
// grammar in many spellings, so several forms of one token are listed.
constexpr std::string_view kBrowserGrammarTokens[] = {
    // Engines, old Internet Explorer and Windows Mobile.
    "gecko/", "applewebkit/", "webkit/", "trident/", "presto/", "khtml", "like gecko", "konqueror",
    "compatible; msie 1", "compatible; msie 2", "compatible; msie 3", "compatible; msie 4",
    "compatible; msie 5", "compatible; msie 6", "compatible; msie 7", "compatible; msie 8",
    "compatible; msie 9", "compatible  msie ", "compatible;   msie", "mspie", "iemobile",
    "windows ce", "windows phone",
    // Feature phones: Java ME, WAP and carriers' browsers, proxy browsers.
    "profile/midp", "configuration/cldc", "midp-", "midp2", "cldc-", "cldc1", "j2me", "mmp/",
    "up.browser", "up.link", "netfront", "obigo", "teleca", "maui", "wap browser", "wap-browser",
    "wapbrowser", "wap1.", "wap2.", "semc-browser", "series40", "series60", "series80", "symbian",
    "opera mini", "opera mobi", "ucweb", "ucbrowser", "brew", "dolfin", "jasmine", "polaris",
    "openwave", "blazer", "eudoraweb", "palmos", "palmsource", "blackberry", "docomo/", "kddi-",
    "softbank/", "vodafone/", "j-phone/", "jig browser",
    // Android's compact stock-browser form: `Lenovo-A880/S100 Linux/3.4.5 Android/4.2 ...`.
    "android/",
    // Smart TVs, set-top boxes and consoles.
    "hbbtv", "ce-html", "nettv", "smarttv", "smart-tv", "netcast", "webos", "web0s", "tizen",
    "maple", "viera", "bravia", "inettvbrowser", "espial", "antgalio", "opera tv", "roku", "crkey",
    "googletv", "nintendo", "playstation", "xbox",
    // Text browsers and old desktop browsers.
    "lynx/", "w3m/", "elinks", "^links (", "dillo", "amaya/", "netsurf", "ibrowse", "netpositive",
    "voyager/", "cyberdog", "icab", "omniweb", "hotjava", "mosaic", "^sleipnir",
    // Phone makers opening a bare device-model agent.
    "^nokia", "^sonyericsson", "^samsung", "^sec-", "^sgh-", "^lg-", "^lge-", "^mot-",
    "^motorola", "^sie-", "^siemens", "^alcatel", "^huawei", "^zte", "^lenovo", "^htc",
    "^karbonn", "^micromax", "^tecno", "^fly", "^sagem", "^sharp", "^panasonic", "^sanyo",
    "^kyocera", "^nec-", "^philips", "^benq", "^sendo", "^tianyu", "^ktouch", "^gionee", "^itel",
    "^spice", "^lava", "^intex", "^celkon", "^videocon", "^qmobile", "^airness", "^cricket",
    "^pantech", "^asus", "^acer", "^haier", "^vertu", "^i-mobile", "^mobiwire", "^dopod",
    "^amoi", "^bird", "^nook"};

// clang-format on

constexpr std::string_view kEngineTokens[] = {"gecko/", "applewebkit/", "trident/", "presto/",
                                              "khtml/"};

constexpr char ascii_lower(char c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool starts_with_lower(std::string_view text, std::string_view lower_prefix) noexcept {
    return text.size() >= lower_prefix.size() &&
           std::equal(lower_prefix.begin(), lower_prefix.end(), text.begin(),
                      [](char p, char c) { return ascii_lower(c) == p; });
}

// `lower_token` must be lower-case; a leading `^` ties it to the start of `text`.
bool contains(std::string_view text, std::string_view lower_token) noexcept {
    if (lower_token.starts_with('^')) return starts_with_lower(text, lower_token.substr(1));
    const auto it = std::search(text.begin(), text.end(), lower_token.begin(), lower_token.end(),
                                [](char a, char b) { return ascii_lower(a) == b; });
    return it != text.end();
}

bool contains_any(std::string_view text, std::span<const std::string_view> tokens) noexcept {
    return std::any_of(tokens.begin(), tokens.end(),
                       [&](std::string_view token) { return contains(text, token); });
}

constexpr bool is_alnum(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

constexpr bool is_local_part(char c) noexcept {
    return is_alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}

// After an '@': a domain label, a dot, then a letter (`bsky.app`, `moz.com`).
bool domain_follows(std::string_view rest) noexcept {
    std::size_t i = 0;
    while (i < rest.size() && (is_alnum(rest[i]) || rest[i] == '-')) ++i;
    if (i == 0 || i + 1 >= rest.size() || rest[i] != '.') return false;
    const char c = ascii_lower(rest[i + 1]);
    return c >= 'a' && c <= 'z';
}

const std::array<TokenRule, 11> kTokenRules = {{
    {"url", kUrlTokens},
    {"http client", kHttpClientTokens},
    {"headless browser", kHeadlessTokens},
    {"monitoring service", kMonitoringTokens},
    {"feed reader", kFeedReaderTokens},
    {"archiver", kArchiverTokens},
    {"AI crawler", kAiCrawlerTokens},
    {"tool in a browser's agent", kToolTokens},
    {"extended KHTML comment", kKhtmlCommentTokens},
    {"placeholder version", kPlaceholderTokens},
    {"server software", kServerTokens},
}};

}  // namespace

bool names_url(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kUrlTokens);
}
bool is_http_client(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kHttpClientTokens);
}
bool is_headless_browser(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kHeadlessTokens);
}
bool is_monitoring_service(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kMonitoringTokens);
}
bool is_feed_reader(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kFeedReaderTokens);
}
bool is_archiver(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kArchiverTokens);
}
bool is_ai_crawler(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kAiCrawlerTokens);
}

bool names_a_tool(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kToolTokens);
}
bool extends_khtml_comment(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kKhtmlCommentTokens);
}
bool has_placeholder_version(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kPlaceholderTokens);
}
bool is_server_software(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kServerTokens);
}

const std::array<TokenRule, 11>& token_rules() noexcept { return kTokenRules; }

bool is_app_http_stack(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kAppHttpStackTokens);
}
std::span<const std::string_view> app_http_stack_tokens() noexcept { return kAppHttpStackTokens; }

bool has_browser_grammar(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kBrowserGrammarTokens);
}
std::span<const std::string_view> browser_grammar_tokens() noexcept {
    return kBrowserGrammarTokens;
}

bool has_millisecond_timestamp(std::string_view user_agent) noexcept {
    std::size_t run = 0;
    for (std::size_t i = 0; i <= user_agent.size(); ++i) {
        if (i < user_agent.size() && user_agent[i] >= '0' && user_agent[i] <= '9') {
            ++run;
            continue;
        }
        if (run == kTimestampDigits && user_agent[i - run] == '1') return true;
        run = 0;
    }
    return false;
}

bool has_email_address(std::string_view user_agent) noexcept {
    for (std::size_t at = user_agent.find('@'); at != std::string_view::npos;
         at = user_agent.find('@', at + 1)) {
        if (at > 0 && is_local_part(user_agent[at - 1]) &&
            domain_follows(user_agent.substr(at + 1))) {
            return true;
        }
    }
    return false;
}

bool lacks_platform_comment(std::string_view user_agent) noexcept {
    const std::size_t open = user_agent.find('(');
    const bool mozilla = starts_with_lower(user_agent, "mozilla/");
    // `Mozilla/5.0 name` without a comment is left to the other rules: refgate's own tests (and
    // tools) use such agents for readers.
    if (open == std::string_view::npos) return !mozilla;
    // `Mozilla/5.0 (Hydra Proxy)`: one comment that names no platform (no `;`) and nothing after.
    if (!mozilla) return false;
    const std::size_t close = user_agent.find(')', open);
    if (close == std::string_view::npos ||
        user_agent.find('(', open + 1) != std::string_view::npos) {
        return false;
    }
    const std::string_view comment = user_agent.substr(open, close - open);
    const std::string_view after = user_agent.substr(close + 1);
    return comment.find(';') == std::string_view::npos &&
           std::all_of(after.begin(), after.end(), [](char c) { return c == ' '; });
}

bool names_browser_engine(std::string_view user_agent) noexcept {
    return contains_any(user_agent, kEngineTokens);
}

bool is_compatible_without_engine(std::string_view user_agent) noexcept {
    return contains(user_agent, kCompatibleToken) && !has_browser_grammar(user_agent);
}

}  // namespace refgate::domain::agent_rules
