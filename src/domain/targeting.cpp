#include "refgate/domain/targeting.hpp"

#include <algorithm>
#include <set>

#include "refgate/domain/ascii.hpp"

namespace refgate::domain {
namespace {

using ascii::is_alpha;
using ascii::is_digit;
using ascii::to_lower;

// A q-value in thousandths ("q=0.8" -> 800); 1000 when absent, -1 when malformed.
int q_value(std::string_view params) noexcept {
    int q = 1000;
    while (!params.empty()) {
        std::size_t semi = params.find(';');
        std::string_view param = ascii::trim_blanks(params.substr(0, semi));
        params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
        if (param.size() < 2 || to_lower(param[0]) != 'q' || param[1] != '=') continue;
        std::string_view v = param.substr(2);
        if (v.empty() || (v[0] != '0' && v[0] != '1')) return -1;
        q = (v[0] - '0') * 1000;
        if (v.size() > 1) {
            if (v[1] != '.' || v.size() > 5) return -1;
            int scale = 100;
            for (char c : v.substr(2)) {
                if (!is_digit(c)) return -1;
                q += (c - '0') * scale;
                scale /= 10;
            }
        }
        if (q > 1000) return -1;
    }
    return q;
}

std::string rule_field(std::size_t rule, std::string_view rest) {
    return "rules[" + std::to_string(rule) + "]." + std::string(rest);
}

void check_values(const LinkRule& rule, std::size_t i, std::vector<LinkIssue>& issues) {
    if (rule.country.size() > kMaxRuleValues || rule.platform.size() > kMaxRuleValues ||
        rule.language.size() > kMaxRuleValues) {
        issues.push_back({rule_field(i, "country"), "too_many", "lists at most 64 values each"});
    }
    for (const auto& c : rule.country) {
        if (country_code(c) == 0)
            issues.push_back({rule_field(i, "country"), "invalid_country",
                              "'" + c + "' is not an ISO 3166-1 alpha-2 code such as DE"});
    }
    for (const auto& p : rule.platform) {
        if (!parse_platform(p))
            issues.push_back({rule_field(i, "platform"), "invalid_platform",
                              "'" + p + "' is not one of ios, android, desktop"});
    }
    for (const auto& l : rule.language) {
        if (!valid_language_tag(l))
            issues.push_back({rule_field(i, "language"), "invalid_language",
                              "'" + l + "' is not a language tag such as fr or pt-BR"});
    }
}

// One destination of a rule against its partner; canonicalises it in place.
void check_target(std::string& destination, const std::string& partner_slug,
                  const Partner& fallback_partner, const PartnerFinder& partners,
                  const UrlPolicy& policy, const std::string& field,
                  std::vector<LinkIssue>& issues) {
    const Partner* partner = &fallback_partner;
    if (!partner_slug.empty()) {
        partner = partners(partner_slug);
        if (partner == nullptr) {
            std::string partner_field = field.substr(0, field.rfind('.') + 1) + "partner";
            issues.push_back(
                {partner_field, "unknown_partner", "'" + partner_slug + "' does not exist"});
            return;
        }
        if (!valid_param_name(partner->ref_param)) {
            issues.push_back({field, "invalid_ref_param",
                              "'" + partner->slug + "' has an invalid referral parameter"});
            return;
        }
    }
    if (plainly_canonical(destination, partner->allowed_domains, policy)) return;
    UrlCheck check = check_destination(destination, partner->allowed_domains, policy);
    if (!check.ok()) {
        issues.push_back({field, std::string(rule_name(check.rule)), std::move(check.message)});
    } else {
        destination = std::move(check.canonical);
    }
}

}  // namespace

CountryCode country_code(std::string_view text) noexcept {
    if (text.size() != 2 || text[0] < 'A' || text[0] > 'Z' || text[1] < 'A' || text[1] > 'Z')
        return 0;
    return static_cast<CountryCode>((static_cast<unsigned>(text[0]) << 8) |
                                    static_cast<unsigned>(text[1]));
}

std::string country_text(CountryCode code) {
    if (code == 0) return {};
    return {static_cast<char>(code >> 8), static_cast<char>(code & 0xff)};
}

std::optional<Platform> parse_platform(std::string_view name) {
    if (name == "ios") return Platform::ios;
    if (name == "android") return Platform::android;
    if (name == "desktop") return Platform::desktop;
    return std::nullopt;
}

std::string_view platform_name(Platform platform) {
    switch (platform) {
        case Platform::ios:
            return "ios";
        case Platform::android:
            return "android";
        case Platform::desktop:
            return "desktop";
        default:
            return "unknown";
    }
}

Platform platform_of(std::string_view ua) noexcept {
    // One pass over the User-Agent (it runs on every redirect through rules): each substring
    // starts with one of seven letters; iOS wins over Android, which wins over desktop (an
    // Android agent also says "Linux").
    bool android = false, desktop = false;
    for (std::size_t i = 0; i < ua.size(); ++i) {
        std::string_view rest = ua.substr(i);
        switch (ua[i]) {
            case 'i':
                if (rest.starts_with("iPhone") || rest.starts_with("iPad") ||
                    rest.starts_with("iPod"))
                    return Platform::ios;
                break;
            case 'A':
                android = android || rest.starts_with("Android");
                break;
            case 'W':
                desktop = desktop || rest.starts_with("Windows");
                break;
            case 'M':
                desktop = desktop || rest.starts_with("Macintosh");
                break;
            case 'X':
                desktop = desktop || rest.starts_with("X11");
                break;
            case 'C':
                desktop = desktop || rest.starts_with("CrOS");
                break;
            case 'L':
                desktop = desktop || rest.starts_with("Linux");
                break;
            default:
                break;
        }
    }
    if (android) return Platform::android;
    return desktop ? Platform::desktop : Platform::unknown;
}

std::string_view preferred_language(std::string_view header) noexcept {
    std::string_view best;
    int best_q = 0;
    while (!header.empty()) {
        std::size_t comma = header.find(',');
        std::string_view item = header.substr(0, comma);
        header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
        std::size_t semi = item.find(';');
        std::string_view tag = ascii::trim_blanks(item.substr(0, semi));
        int q = semi == std::string_view::npos ? 1000 : q_value(item.substr(semi + 1));
        if (q > best_q && tag != "*" && valid_language_tag(tag)) {
            best = tag;
            best_q = q;
        }
    }
    return best;
}

bool language_matches(std::string_view rule_tag, std::string_view reader_tag) noexcept {
    if (rule_tag.empty() || reader_tag.size() < rule_tag.size()) return false;
    for (std::size_t i = 0; i < rule_tag.size(); ++i) {
        if (to_lower(rule_tag[i]) != to_lower(reader_tag[i])) return false;
    }
    return reader_tag.size() == rule_tag.size() || reader_tag[rule_tag.size()] == '-';
}

bool valid_language_tag(std::string_view tag) noexcept {
    std::size_t i = 0;
    while (i < tag.size() && is_alpha(tag[i])) ++i;
    if (i < 2 || i > 3) return false;
    for (int subtags = 0; i < tag.size(); ++subtags) {
        if (subtags == 3 || tag[i] != '-') return false;
        std::size_t start = ++i;
        while (i < tag.size() && (is_alpha(tag[i]) || is_digit(tag[i]))) ++i;
        if (i == start || i - start > 8) return false;
    }
    return true;
}

std::vector<LinkIssue> validate_rules(std::vector<LinkRule>& rules, const Partner& link_partner,
                                      const PartnerFinder& partners, const UrlPolicy& policy) {
    std::vector<LinkIssue> issues;
    if (rules.size() > kMaxRules) {
        issues.push_back({"rules", "too_many", "must hold at most 32 rules"});
        return issues;
    }
    for (std::size_t i = 0; i < rules.size(); ++i) {
        LinkRule& rule = rules[i];
        check_values(rule, i, issues);
        bool has_destination = !rule.destination.empty();
        if (has_destination == !rule.split.empty()) {
            issues.push_back({rule_field(i, "destination"), "destination_or_split",
                              "a rule needs either a destination or a split, not both"});
            continue;
        }
        const Partner* rule_partner = &link_partner;
        if (!rule.partner.empty()) rule_partner = partners(rule.partner);
        if (rule_partner == nullptr) {
            issues.push_back({rule_field(i, "partner"), "unknown_partner",
                              "'" + rule.partner + "' does not exist"});
            continue;
        }
        if (has_destination) {
            check_target(rule.destination, {}, *rule_partner, partners, policy,
                         rule_field(i, "destination"), issues);
            continue;
        }
        if (rule.split.size() > kMaxSplitBranches)
            issues.push_back({rule_field(i, "split"), "too_many", "has at most 16 branches"});
        for (std::size_t b = 0; b < rule.split.size() && b < kMaxSplitBranches; ++b) {
            SplitBranch& branch = rule.split[b];
            std::string at = rule_field(i, "split[" + std::to_string(b) + "].");
            if (branch.weight == 0 || branch.weight > kMaxWeight)
                issues.push_back(
                    {at + "weight", "invalid_weight", "must be a whole number from 1 to 1000000"});
            check_target(branch.destination, branch.partner, *rule_partner, partners, policy,
                         at + "destination", issues);
        }
    }
    return issues;
}

bool in_family(std::string_view partner_slug, std::string_view family) noexcept {
    if (family.empty() || !partner_slug.starts_with(family)) return false;
    return partner_slug.size() == family.size() || partner_slug[family.size()] == '-';
}

std::vector<LinkIssue> validate_country_group(const CountryGroup& group) {
    std::vector<LinkIssue> issues;
    if (!valid_slug(group.family))
        issues.push_back({"family", "invalid_slug", "must match [a-z0-9][a-z0-9-]{0,63}"});
    std::set<std::string> seen;
    for (const auto& f : group.fallbacks) {
        if (country_code(f.country) == 0 || country_code(f.fallback) == 0) {
            issues.push_back({f.country, "invalid_country",
                              "country and fallback must be ISO 3166-1 alpha-2 codes such as DE"});
        } else if (f.country == f.fallback) {
            issues.push_back({f.country, "self_fallback", "must not fall back to itself"});
        } else if (!seen.insert(f.country).second) {
            issues.push_back({f.country, "duplicate", "appears twice"});
        }
    }
    if (!issues.empty()) return issues;
    // A chain ends within as many steps as there are countries; a longer one is a cycle.
    for (const auto& start : group.fallbacks) {
        std::string at = start.country;
        for (std::size_t steps = 0;; ++steps) {
            auto next = std::find_if(group.fallbacks.begin(), group.fallbacks.end(),
                                     [&](const CountryFallback& f) { return f.country == at; });
            if (next == group.fallbacks.end()) break;
            if (steps > group.fallbacks.size()) {
                issues.push_back({start.country, "cycle", "falls back in a circle"});
                return issues;
            }
            at = next->fallback;
        }
    }
    return issues;
}

std::size_t split_branch(std::uint64_t key, const std::uint32_t* ends, std::size_t count) noexcept {
    if (count == 0) return 0;
    auto total = static_cast<unsigned __int128>(ends[count - 1]);
    auto draw = static_cast<std::uint32_t>((static_cast<unsigned __int128>(key) * total) >> 64);
    std::size_t i = 0;
    while (i + 1 < count && ends[i] <= draw) ++i;
    return i;
}

std::uint64_t rule_key(std::uint64_t reader_key, std::size_t rule) noexcept {
    // splitmix64's finaliser: rules of one link draw independently.
    std::uint64_t z = reader_key + 0x9e3779b97f4a7c15ULL * (rule + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

}  // namespace refgate::domain

namespace refgate::domain {

bool rule_matches(const TargetRule& rule, const ReaderTraits& reader) noexcept {
    if (!rule.countries.empty() &&
        (reader.country == 0 ||
         !std::binary_search(rule.countries.begin(), rule.countries.end(), reader.country)))
        return false;
    if (rule.platforms != 0 && (rule.platforms & static_cast<std::uint8_t>(reader.platform)) == 0)
        return false;
    if (rule.languages.empty()) return true;
    if (reader.language.empty()) return false;
    for (const auto& tag : rule.languages) {
        if (language_matches(tag, reader.language)) return true;
    }
    return false;
}

}  // namespace refgate::domain
