#include "refgate/domain/agent_rules.hpp"

#include <algorithm>

namespace refgate::agent_rules {
namespace {

// Before adding a token: it must never occur in a browser's or an in-app browser's User-Agent
// (tests/data/agents/browsers.txt), and it is matched case-insensitively anywhere.
// The token tables are wrapped by hand, several tokens a line.
// clang-format off
constexpr std::string_view kUrlTokens[] = {
    "http://", "https://", "www.", ".com/", ".com)", ".com;", ".com ", ".org/", ".net/", ".io/"};

constexpr std::string_view kHttpClientTokens[] = {
    "curl", "wget", "python-requests", "python-urllib", "python-httpx", "python/", "aiohttp",
    "httpx/", "go-http-client", "go 1.1 package http", "okhttp", "java/", "java-http-client",
    "apache-httpclient", "httpclient", "httpcomponents", "axios", "node-fetch", "node.js", "undici",
    "got (", "libwww-perl", "lwp-", "lwp::", "php/", "php-curl", "guzzlehttp", "ruby", "faraday",
    "http.rb/", "httpie", "postmanruntime", "insomnia/", "restsharp", "winhttp", "cfnetwork/",
    "dalvik/", "reqwest", "hackney", "colly", "mechanize", "scrapy", "httpunit", "aria2",
    "powershell", "dart:io", "grpc-", "rest-client", "typhoeus", "unirest", "superagent",
    "request-promise", "akka-http", "lua-resty-http", "jetty/", "scale/"};

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

// clang-format on

constexpr std::string_view kEngineTokens[] = {"gecko/", "applewebkit/", "trident/", "presto/"};

constexpr char ascii_lower(char c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// `lower_token` must be lower-case.
bool contains(std::string_view text, std::string_view lower_token) noexcept {
    const auto it = std::search(text.begin(), text.end(), lower_token.begin(), lower_token.end(),
                                [](char a, char b) { return ascii_lower(a) == b; });
    return it != text.end();
}

bool starts_with_lower(std::string_view text, std::string_view lower_prefix) noexcept {
    return text.size() >= lower_prefix.size() &&
           std::equal(lower_prefix.begin(), lower_prefix.end(), text.begin(),
                      [](char p, char c) { return ascii_lower(c) == p; });
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

const std::array<TokenRule, 7> kTokenRules = {{
    {"url", kUrlTokens},
    {"http client", kHttpClientTokens},
    {"headless browser", kHeadlessTokens},
    {"monitoring service", kMonitoringTokens},
    {"feed reader", kFeedReaderTokens},
    {"archiver", kArchiverTokens},
    {"AI crawler", kAiCrawlerTokens},
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

const std::array<TokenRule, 7>& token_rules() noexcept { return kTokenRules; }

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
    return contains(user_agent, kCompatibleToken) && !names_browser_engine(user_agent);
}

}  // namespace refgate::agent_rules
