#pragma once

// Partners and links as editors define them: the import/export format and the database rows.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "refgate/domain/time.hpp"

namespace refgate::domain {

// How a partner's sub-ID placement tokens are written (domain/placement.hpp).
enum class SubidStyle : std::uint8_t { opaque, readable };

// A per-channel referral code: clicks of `channel` ("newsletter"), or of every channel starting
// with a prefix ("nl-*"), carry `ref_code` instead of the partner's.
struct ChannelCode {
    std::string channel;
    std::string ref_code;
    bool operator==(const ChannelCode&) const = default;
};

// A referral code that takes over from the partner's current one at valid_from, and (issue 42)
// per-channel codes that take over from its channel_codes then; an empty ref_code keeps the code
// (a switch of the channel codes alone), no channel_codes keeps those.
struct ScheduledCode {
    SysSeconds valid_from;
    std::string ref_code;
    std::optional<std::vector<ChannelCode>> channel_codes;
    bool operator==(const ScheduledCode&) const = default;
};

struct Partner {
    std::int64_t id = 0;  // database id; 0 when not stored yet
    std::string slug;
    std::string name;
    std::string ref_param;
    std::string ref_code;
    std::vector<std::string> allowed_domains;
    std::vector<std::pair<std::string, std::string>> extra_params;  // ordered
    bool active = true;
    // Codes scheduled to take over, by valid_from; not part of the import format (the admin API
    // schedules them), but carried by snapshots so that every instance switches on time.
    std::vector<ScheduledCode> scheduled_codes;
    // Placements (issue 42): the network's sub-ID parameter (empty: none), which every Location
    // of the partner carries with the click's placement token; the tokens' style and, for
    // readable ones, the characters they may hold; per-channel codes, first match wins.
    std::string subid_param;
    SubidStyle subid_style = SubidStyle::opaque;
    std::string subid_charset = "a-z0-9";
    std::vector<ChannelCode> channel_codes;
};

enum class LinkStatus { active, disabled };

// One destination of a weighted split (A/B): chosen for a reader and day in proportion to
// `weight` among the split's branches.
struct SplitBranch {
    std::uint32_t weight = 0;
    std::string destination;
    std::string partner;  // empty: the rule's partner
    bool operator==(const SplitBranch&) const = default;
};

// A targeting rule of a link: when every condition given holds (countries, platforms, languages;
// none given: always), the reader is sent to `destination`, or to one branch of `split`, with
// `partner`'s referral code (empty: the link's partner). Rules are tried in order; the first
// that matches wins; none: the link's destination.
struct LinkRule {
    std::vector<std::string> country;   // ISO 3166-1 alpha-2, upper case
    std::vector<std::string> platform;  // "ios", "android", "desktop"
    std::vector<std::string> language;  // language tags, lower case ("fr", "pt-br")
    std::string partner;
    std::string destination;  // empty when the rule splits
    std::vector<SplitBranch> split;
    bool operator==(const LinkRule&) const = default;
};

// Country fallbacks of a partner family (a partner whose slug is `family` or starts with
// `family` + "-"): a reader from `country` whom no rule of the link matches is tried again as a
// reader from `fallback` (AT -> DE, NZ -> AU), like a store's closest match.
struct CountryFallback {
    std::string country;
    std::string fallback;
    bool operator==(const CountryFallback&) const = default;
};
struct CountryGroup {
    std::string family;
    std::vector<CountryFallback> fallbacks;
    bool operator==(const CountryGroup&) const = default;
};

// A branch of a link that automatic fallback switched away from, and why: its confirmed health
// state (`broken`, `unavailable`, `code_dropped`) and detail, since when (unix seconds).
struct FallbackSwitch {
    std::string branch;
    std::string reason;
    std::string detail;
    std::int64_t since = 0;
    bool operator==(const FallbackSwitch&) const = default;
};

struct Link {
    std::int64_t id = 0;
    std::string slug;
    std::string partner;  // partner slug
    std::string destination;
    LinkStatus status = LinkStatus::active;
    std::optional<SysSeconds> expires_at;
    std::optional<std::string> fallback;
    bool utm_passthrough = false;
    std::vector<LinkRule> rules;  // targeting, in order
    // Automatic fallback (issue 44; needs `fallback`): while a branch's confirmed health is
    // broken, unavailable or code_dropped, its readers get the link's own destination (a rule
    // branch, while the default is healthy) or the fallback.
    bool auto_fallback = false;
    // Not an editor's field: the branches link health switched away from ("default",
    // "rules[i]", "rules[i].split[j]"; table refgate_link_fallbacks), loaded with the links.
    std::vector<FallbackSwitch> fallback_switches;
    // Click cap (issue 44): once the fleet's human clicks reach it, the link answers like an
    // expired one (its fallback or 410). Absent: no cap; when set, at least 1.
    std::optional<std::int64_t> max_human_clicks;
    // Issue 46: the host of the branded domain the link is on; empty: the default domain.
    std::string domain;
};

// A branded domain (issue 46): a host serving its own slugs. Exactly one domain is the default
// once any is defined; with none defined, every link is on the default domain, the public base
// URL's host. `not_found`: where an unknown slug on this host goes (empty: the 404 page).
struct Domain {
    std::string host;
    bool is_default = false;
    std::string not_found;
    bool operator==(const Domain&) const = default;
};

// A link's name across domains: "slug" on the default domain, "host/slug" on another (the
// audit's and the import's key of a link).
std::string link_key(const Link& link);

constexpr std::size_t kMaxSlugLength = 64;
// The largest click cap accepted (a bigint column, and room to add counts without overflow).
constexpr std::int64_t kMaxHumanClicksCap = std::int64_t{1} << 53;

// [a-z0-9][a-z0-9-]{0,63}
bool valid_slug(std::string_view slug);
// A referral or extra parameter name: [A-Za-z0-9_.-]{1,64}
bool valid_param_name(std::string_view name);

// The branches of `link` that route to `partner`: "default" (the link's own partner), "rules[i]",
// "rules[i].split[j]"; empty when none does.
std::vector<std::string> branches_to(const Link& link, std::string_view partner);

// Whether automatic fallback makes `link` send the readers of its own destination (the branch
// "default") to its fallback now.
bool serving_fallback(const Link& link);
// Whether a confirmed health state makes automatic fallback switch a branch away.
bool fallback_worthy(std::string_view state);

std::string_view to_string(LinkStatus status);
std::optional<LinkStatus> parse_link_status(std::string_view text);

}  // namespace refgate::domain
