#pragma once

// refgate's own generic User-Agent rules: what marks an agent as software rather than a person's
// browser, whatever its name, and what marks it as a real browser's whatever its device. Each
// rule is a small function, tested with agents that must and must not match.
//
// The token rules are lists of substrings (ASCII case-insensitive; a leading `^` ties a token to
// the start of the agent). The classifier compiles their tokens into its automaton, so the hot
// path reads the User-Agent once; the functions here scan plainly and are the rules' definition
// and test subject.

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

namespace refgate::domain::agent_rules {

struct TokenRule {
    std::string_view name;
    std::span<const std::string_view> tokens;
};

// A URL inside the agent: `http://`, `https://`, `www.`, or a host such as `example.com/` or
// `(example.com)` (a bot's contact page).
bool names_url(std::string_view user_agent) noexcept;
// HTTP libraries and command-line clients: curl, Wget, python-requests, Go-http-client, ...
bool is_http_client(std::string_view user_agent) noexcept;
// Headless and automated browsers: HeadlessChrome, PhantomJS, Puppeteer, Playwright, Selenium.
bool is_headless_browser(std::string_view user_agent) noexcept;
// Monitoring, uptime and page-speed services.
bool is_monitoring_service(std::string_view user_agent) noexcept;
// Feed readers and aggregators.
bool is_feed_reader(std::string_view user_agent) noexcept;
// Web archivers and site copiers.
bool is_archiver(std::string_view user_agent) noexcept;
// Crawlers and fetchers of AI companies.
bool is_ai_crawler(std::string_view user_agent) noexcept;
// A browser's agent with a tool's word in it, wherever it stands: an extra product token at the
// end (`... Safari/537.36 SiteChecker/2.1`) or inside a comment. The words are what such tools call
// themselves: checker, scanner, screenshot, thumbnail, observatory, validator, audit, analyzer,
// inspector, scraper, fetcher, render, diagnostic, verification, prospecting, lead generation,
// enrichment, vulnerability, security, probe. No browser or in-app browser uses them.
bool names_a_tool(std::string_view user_agent) noexcept;
// Something inside the `(KHTML, like Gecko)` comment, which every WebKit and Blink browser keeps
// exactly so: `(KHTML, like Gecko; Google Web Preview)`, `(KHTML, like Gecko; compatible; X)`.
bool extends_khtml_comment(std::string_view user_agent) noexcept;
// A template agent whose version was never filled in: `Chrome/XX.0.0.0`, `Firefox/x.x`,
// `MyApp/{version}`.
bool has_placeholder_version(std::string_view user_agent) noexcept;
// A web server or web application fetching from itself or its peers: Apache's `(internal dummy
// connection)`, WordPress, Drupal and Joomla, or a server's name as the agent (`nginx/1.25`).
bool is_server_software(std::string_view user_agent) noexcept;

// The bot token rules above, by name, in that order.
const std::array<TokenRule, 11>& token_rules() noexcept;

// An app's own HTTP stack rather than a browser engine: Android's `Dalvik/` (the default agent
// of HttpURLConnection) and download manager, Chromium's network library `Cronet/`, Apple's
// `CFNetwork/` (URLSession's default agent) and the iOS libraries AFNetworking (`Scale/2.00`) and
// Alamofire. A person's click opens a browser, a Custom Tab or a
// web view, each of which sends an engine's agent; these come from an app fetching the link
// itself, for a preview, a redirect check or a download: the classifier counts them as
// `prefetch` (docs/click-classes.md, "App HTTP stacks").
bool is_app_http_stack(std::string_view user_agent) noexcept;
std::span<const std::string_view> app_http_stack_tokens() noexcept;

// Positive evidence of a real browser: an engine (Gecko/, AppleWebKit/, Trident/, Presto/,
// KHTML), old Internet Explorer (`MSIE 6.0`, IEMobile, Windows CE), a feature phone's grammar
// (Profile/MIDP, Configuration/CLDC, UP.Browser, NetFront, Obigo, MAUI, WAP browsers, Opera Mini,
// UCWEB, BREW, i-mode and other carriers' prefixes), Android's compact stock-browser form
// (`Linux/3.4.5 Android/4.2.2 Release/...`), smart TVs (HbbTV, CE-HTML, NETTV, SmartTV, NetCast,
// webOS, Tizen), consoles, text browsers, or a phone maker's name opening a bare device-model
// agent (`SonyEricssonT68/R201A`, `Nokia6100/1.0`). It exempts an agent from the two rules
// below, which punish a missing part and are right for bots but wrong for the long tail of
// devices; it never outweighs a crawler pattern or a bot token rule.
bool has_browser_grammar(std::string_view user_agent) noexcept;
std::span<const std::string_view> browser_grammar_tokens() noexcept;

// An e-mail address inside the agent (a bot's contact): `name@domain.tld`.
bool has_email_address(std::string_view user_agent) noexcept;
// A millisecond timestamp as a token: a run of exactly 13 digits starting with 1 (Unix time in
// ms, 2001 to 2033), which scripts stamp into their agents and no browser carries.
bool has_millisecond_timestamp(std::string_view user_agent) noexcept;
// The digit run that has_millisecond_timestamp looks for, so a scan that already counts digit
// runs can skip agents without one.
inline constexpr std::size_t kTimestampDigits = 13;
// A lone `product/version` (or several) with no `(platform comment)`: every browser and in-app
// browser says its platform in parentheses; `curl/8.5.0` and `Twitterbot/1.0` do not. An agent
// that starts with `Mozilla/` needs a comment only if it has any: a bare `Mozilla/x.y (Name)`
// (one comment without a `;`, so no platform, and nothing after it) matches, while
// `Mozilla/5.0 name` is left to the other rules. The classifier applies it only to an agent
// without browser grammar (feature phones and bare device agents have no comment either).
bool lacks_platform_comment(std::string_view user_agent) noexcept;
// The `compatible;` form of old Internet Explorer without any browser grammar:
// `Mozilla/5.0 (compatible; SomeBot/1.0; +url)` but not `Mozilla/4.0 (compatible; MSIE 6.0;
// Windows NT 5.1)`.
bool is_compatible_without_engine(std::string_view user_agent) noexcept;
// The token that starts the `compatible;` form (the classifier's automaton finds it).
inline constexpr std::string_view kCompatibleToken = "compatible;";
// Whether the agent names a browser engine: Gecko/, AppleWebKit/, Trident/, Presto/, KHTML/.
bool names_browser_engine(std::string_view user_agent) noexcept;

}  // namespace refgate::domain::agent_rules
