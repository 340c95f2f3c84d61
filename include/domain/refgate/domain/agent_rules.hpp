#pragma once

// refgate's own generic User-Agent rules: what marks an agent as software rather than a person's
// browser, whatever its name. Each rule is a small function, tested with agents that must and
// must not match; no browser or in-app browser matches any of them (tests/data/agents).
//
// The token rules are lists of substrings (ASCII case-insensitive). The classifier compiles their
// tokens into its automaton, so the hot path reads the User-Agent once; the functions here scan
// plainly and are the rules' definition and test subject.

#include <array>
#include <span>
#include <string_view>

namespace refgate::agent_rules {

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

// The token rules above, by name, in that order.
const std::array<TokenRule, 7>& token_rules() noexcept;

// An e-mail address inside the agent (a bot's contact): `name@domain.tld`.
bool has_email_address(std::string_view user_agent) noexcept;
// A lone `product/version` (or several) with no `(platform comment)`: every browser and in-app
// browser says its platform in parentheses; `curl/8.5.0` and `Twitterbot/1.0` do not. An agent
// that starts with `Mozilla/` needs a comment only if it has any: a bare `Mozilla/x.y (Name)`
// (one comment without a `;`, so no platform, and nothing after it) matches, while
// `Mozilla/5.0 name` is left to the other rules.
bool lacks_platform_comment(std::string_view user_agent) noexcept;
// The `compatible;` form of old Internet Explorer without any browser engine token (Gecko/,
// AppleWebKit/, Trident/, Presto/): `Mozilla/5.0 (compatible; SomeBot/1.0; +url)`.
bool is_compatible_without_engine(std::string_view user_agent) noexcept;
// The token that starts the `compatible;` form (the classifier's automaton finds it).
inline constexpr std::string_view kCompatibleToken = "compatible;";
// Whether the agent names a browser engine (the second half of is_compatible_without_engine).
bool names_browser_engine(std::string_view user_agent) noexcept;

}  // namespace refgate::agent_rules
