#pragma once

// Targeting rules (country, platform, language, weighted split): what a reader's request says
// about them, read without allocating, and the checks every save path and the snapshot run on a
// link's rules. The compiled form the hot path evaluates lives in the snapshot.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/domain/destination.hpp"
#include "refgate/domain/ip_network.hpp"
#include "refgate/domain/link_rules.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/domain/model.hpp"

namespace refgate::domain {

// An ISO 3166-1 alpha-2 code packed into 16 bits ('D' << 8 | 'E'); 0: unknown.
using CountryCode = std::uint16_t;
// "DE" -> the code; 0 unless two upper-case ASCII letters.
CountryCode country_code(std::string_view text) noexcept;
std::string country_text(CountryCode code);

// Bit values: a rule keeps the platforms it names as a mask.
enum class Platform : std::uint8_t { unknown = 0, ios = 1, android = 2, desktop = 4 };
std::optional<Platform> parse_platform(std::string_view name);
std::string_view platform_name(Platform platform);
// From a few substrings of the User-Agent: iPhone/iPad/iPod -> ios, Android -> android,
// Windows/Macintosh/X11/CrOS/Linux -> desktop, anything else unknown.
Platform platform_of(std::string_view user_agent) noexcept;

// The reader's preferred language from Accept-Language: the tag with the highest q-value (the
// first of equals), "*" and q=0 skipped; empty when none. A view into `accept_language`.
std::string_view preferred_language(std::string_view accept_language) noexcept;
// Whether a rule's tag ("fr", "pt-br") covers the reader's ("fr-CH", "pt-BR"): equal ignoring
// case, or a prefix followed by '-'.
bool language_matches(std::string_view rule_tag, std::string_view reader_tag) noexcept;
// A language tag a rule may hold: 2 or 3 letters, then up to 3 subtags of 1 to 8 letters or
// digits, each after '-'.
bool valid_language_tag(std::string_view tag) noexcept;

// What the hot path knows about a reader: looked up and forgotten per request.
struct ReaderTraits {
    CountryCode country = 0;
    Platform platform = Platform::unknown;
    std::string_view language;
};

// Limits of one link's rules, so a snapshot's size stays bounded per link.
constexpr std::size_t kMaxRules = 32;
constexpr std::size_t kMaxSplitBranches = 16;
constexpr std::size_t kMaxRuleValues = 64;  // countries, platforms or languages of one rule
constexpr std::uint32_t kMaxWeight = 1'000'000;

// Finds a partner by slug (the document's or a stored one); null when there is none.
using PartnerFinder = std::function<const Partner*(const std::string& slug)>;

// Checks a link's rules: values (country codes, platforms, language tags, weights), shape (a
// destination or a split, not both), each branch's partner and its destination exactly as the
// link's own (https, host within that partner's domains, no user info ...). Fields name the
// rule: "rules[2].split[1].destination". Destinations are replaced by their canonical form.
std::vector<LinkIssue> validate_rules(std::vector<LinkRule>& rules, const Partner& link_partner,
                                      const PartnerFinder& partners, const UrlPolicy& policy);

// Checks a partner family's fallbacks: codes, no country twice, no fallback to itself, no cycle.
std::vector<LinkIssue> validate_country_group(const CountryGroup& group);
// Whether `partner_slug` belongs to `family` (equal, or `family` + "-" + anything).
bool in_family(std::string_view partner_slug, std::string_view family) noexcept;

// The split's draw: the branch for a reader's key, in proportion to the weights (`ends` are the
// running sums, the last one the total). Uniform keys give the weights' proportions.
std::size_t split_branch(std::uint64_t key, const std::uint32_t* ends, std::size_t count) noexcept;
// A key of its own per rule of a link, from the reader's key for the link.
std::uint64_t rule_key(std::uint64_t reader_key, std::size_t rule) noexcept;

}  // namespace refgate::domain

namespace refgate::domain {

// A rule as the snapshot holds it: conditions in a form the hot path reads without allocating,
// and its branches (one, or a split's) in the snapshot's branch table.
struct TargetRule {
    std::vector<CountryCode> countries;  // sorted; empty: any country
    std::uint8_t platforms = 0;          // Platform bits; 0: any platform
    std::vector<std::string> languages;  // empty: any language
    std::uint32_t first_branch = 0;
    std::uint16_t branch_count = 0;
    bool split = false;
    // Every branch's partner is inactive: the rule is skipped, as if it did not match (a split
    // with some active branches draws among those only: the others weigh nothing).
    bool skipped = false;
    LinkRule source;  // as the editor saved it (canonical), for export and the snapshot file
};

// One place a rule sends readers: the Location with its partner's code, precomputed.
struct TargetBranch {
    std::string location;
    std::uint32_t partner_index = 0;
    bool partner_active = true;  // an inactive partner's branch is never chosen
    bool failing = false;        // automatic fallback (issue 44) switched this branch away
    PlacementSlots placement;    // for a partner with placements
};

// Whether every condition of the rule holds for the reader. An unknown country matches no
// country condition; an unknown platform no platform condition.
bool rule_matches(const TargetRule& rule, const ReaderTraits& reader) noexcept;

}  // namespace refgate::domain

namespace refgate::domain {

// Where a reader's country comes from: the address is looked up and forgotten. Implementations
// allocate nothing and are safe to call from any thread.
class CountryLookup {
  public:
    virtual ~CountryLookup() = default;
    // 0 when the address has no country.
    virtual CountryCode country_of(const IpBytes& address) const noexcept = 0;
};

}  // namespace refgate::domain
