// The targeting part of the snapshot: compiling a link's rules into the rule and branch tables,
// and the partner families' country fallbacks.

#include <algorithm>

#include "refgate/domain/link_rules.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/domain/snapshot.hpp"

namespace refgate::domain {

CountryCode Snapshot::fallback_country(std::size_t partner_index,
                                       CountryCode country) const noexcept {
    if (partner_index >= partner_fallbacks_.size()) return 0;
    const auto& fallbacks = partner_fallbacks_[partner_index];
    auto it = std::lower_bound(fallbacks.begin(), fallbacks.end(),
                               std::pair<CountryCode, CountryCode>{country, 0});
    return it != fallbacks.end() && it->first == country ? it->second : 0;
}

void Snapshot::rebuild_branches(const std::vector<bool>& changed) {
    if (branches_.empty()) return;
    // By link: a placement Location needs the link's id and slug.
    for (const LinkEntry& entry : entries_) {
        for (std::uint32_t r = 0; r < entry.rule_count; ++r) {
            const TargetRule& rule = rules_[entry.first_rule + r];
            const auto& source = rule.source;
            for (std::uint16_t b = 0; b < rule.branch_count; ++b) {
                TargetBranch& branch = branches_[rule.first_branch + b];
                if (!changed[branch.partner_index]) continue;
                const std::string& destination =
                    rule.split ? source.split[b].destination : source.destination;
                if (!locate(branch.location, branch.placement, destination, branch.partner_index,
                            entry.id, entry.slug, LocationSuffix{})) {
                    branch.location = build_location(destination, partners_[branch.partner_index]);
                    branch.placement = {};
                }
            }
        }
    }
}

void Snapshot::Builder::country_groups(std::vector<CountryGroup> groups) {
    Snapshot& s = *snapshot_;
    s.partner_fallbacks_.assign(s.partners_.size(), {});
    for (const CountryGroup& group : groups) {
        if (!validate_country_group(group).empty()) {
            s.rejected_.push_back("country group " + group.family + ": does not validate");
            continue;
        }
        for (std::size_t i = 0; i < s.partners_.size(); ++i) {
            if (!in_family(s.partners_[i].slug, group.family)) continue;
            auto& fallbacks = s.partner_fallbacks_[i];
            // A partner in two families takes the first one's fallbacks.
            if (!fallbacks.empty()) continue;
            for (const auto& f : group.fallbacks)
                fallbacks.emplace_back(country_code(f.country), country_code(f.fallback));
            std::sort(fallbacks.begin(), fallbacks.end());
        }
    }
    s.country_groups_ = std::move(groups);
}

void Snapshot::Builder::add_rules(LinkEntry& entry, std::vector<LinkRule>& rules) {
    Snapshot& s = *snapshot_;
    const Partner& link_partner = s.partners_[entry.partner_index];
    PartnerFinder finder = [&](const std::string& slug) -> const Partner* {
        auto it = partner_index_.find(slug);
        return it == partner_index_.end() ? nullptr : &s.partners_[it->second];
    };
    auto issues = validate_rules(rules, link_partner, finder, s.policy_);
    if (!issues.empty()) {
        const auto& issue = issues.front();
        s.rejected_.push_back(entry.slug + ": " + issue.field + " " + issue.message + " [" +
                              issue.rule + "]; its rules are left out");
        return;
    }
    auto index_of = [&](const std::string& slug, std::size_t otherwise) {
        return slug.empty() ? otherwise : partner_index_.at(slug);
    };
    entry.first_rule = static_cast<std::uint32_t>(s.rules_.size());
    entry.rule_count = static_cast<std::uint16_t>(rules.size());
    for (LinkRule& source : rules) {
        TargetRule& rule = s.rules_.emplace_back();
        for (const auto& c : source.country) rule.countries.push_back(country_code(c));
        std::sort(rule.countries.begin(), rule.countries.end());
        for (const auto& p : source.platform)
            rule.platforms |= static_cast<std::uint8_t>(*parse_platform(p));
        rule.languages = source.language;
        entry.country_rules = entry.country_rules || !rule.countries.empty();
        rule.first_branch = static_cast<std::uint32_t>(s.branches_.size());
        std::size_t rule_partner = index_of(source.partner, entry.partner_index);
        // A branch to an inactive partner (a storefront switched off) weighs nothing: the
        // split draws among the others, and a rule left without any is skipped.
        std::uint32_t end = 0;
        auto add_branch = [&](const std::string& destination, std::size_t partner,
                              std::uint32_t weight) {
            TargetBranch& branch = s.branches_.emplace_back();
            branch.partner_index = static_cast<std::uint32_t>(partner);
            branch.partner_active = s.partners_[partner].active;
            if (!s.locate(branch.location, branch.placement, destination, partner, entry.id,
                          entry.slug, suffixes_[partner])) {
                // Past 64 KiB: the branch goes without the channel's parts.
                branch.location = build_location(destination, s.partners_[partner]);
                branch.placement = {};
            }
            if (branch.partner_active) end += weight;
            s.branch_ends_.push_back(end);
        };
        rule.split = !source.split.empty();
        if (!rule.split) {
            add_branch(source.destination, rule_partner, 1);
        } else {
            for (const SplitBranch& b : source.split)
                add_branch(b.destination, index_of(b.partner, rule_partner), b.weight);
        }
        rule.skipped = end == 0;
        rule.branch_count = static_cast<std::uint16_t>(s.branches_.size() - rule.first_branch);
        rule.source = std::move(source);
    }
}

}  // namespace refgate::domain
