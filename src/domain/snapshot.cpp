#include "refgate/domain/snapshot.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <stdexcept>

#include "refgate/domain/clock.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/link_rules.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/reader_location.hpp"

namespace refgate::domain {

namespace {

SysSeconds system_now() { return SysSeconds{std::chrono::seconds{SystemClock{}.unix_seconds()}}; }

}  // namespace

std::shared_ptr<const Snapshot> Snapshot::build(std::uint64_t version,
                                                std::vector<Partner> partners,
                                                std::vector<Link> links, const UrlPolicy& policy,
                                                std::string source,
                                                std::vector<Disclosure> disclosures) {
    return build(version, std::move(partners), std::move(links), policy, std::move(source),
                 std::move(disclosures), system_now());
}

std::shared_ptr<const Snapshot> Snapshot::at(SysSeconds now) const {
    // Rebuilt from the entries, which were checked when this snapshot was built: the partners'
    // domains and the URL policy are the same, only referral codes change.
    auto snapshot = std::make_shared<Snapshot>();
    snapshot->version_ = version_;
    snapshot->source_ = source_;
    snapshot->built_at_ = now.time_since_epoch().count();
    snapshot->policy_ = policy_;
    snapshot->partners_ = partners_;
    snapshot->placement_styles_ = placement_styles_;
    snapshot->apply_schedule(now);
    // Only the Locations of partners whose code changed are built again (at 100,000 links all of
    // them through Boost.URL took a quarter of a second); the slugs, and so the index, are the
    // same.
    std::vector<LocationSuffix> suffixes(partners_.size());
    std::vector<bool> changed(partners_.size());
    for (std::size_t i = 0; i < partners_.size(); ++i) {
        changed[i] = partners_[i].ref_code != snapshot->partners_[i].ref_code ||
                     partners_[i].channel_codes != snapshot->partners_[i].channel_codes;
        if (changed[i]) suffixes[i] = location_suffix(snapshot->partners_[i]);
    }
    // The entries' strings are copied into the new snapshot's arena: it owns all it serves.
    snapshot->entries_ = entries_;
    StringArena& strings = snapshot->strings_;
    std::string location;
    for (LinkEntry& entry : snapshot->entries_) {
        entry.destination = strings.add(entry.destination);
        entry.fallback = strings.add(entry.fallback);
        if (!changed[entry.partner_index]) {
            entry.location = strings.add(entry.location);
            continue;
        }
        // It was built with the old code, so it builds with the new one (codes are not part of
        // the destination check).
        if (!snapshot->locate(location, entry.placement, entry.destination, entry.partner_index,
                              entry.id, entry.slug, suffixes[entry.partner_index])) {
            // Past 64 KiB with the new code: every channel gets the "direct" placement.
            const Partner& partner = snapshot->partners_[entry.partner_index];
            location = build_placement_location(
                entry.destination, partner, partner.ref_code,
                placement_token(partner, entry.id, entry.slug, kDirectChannel));
            entry.placement = {};
        }
        entry.location = strings.add(location);
    }
    snapshot->slots_ = slots_;
    snapshot->domains_ = domains_;
    snapshot->disclosures_ = DisclosureSet(disclosures_.versions());
    snapshot->rules_ = rules_;
    snapshot->branches_ = branches_;
    snapshot->branch_ends_ = branch_ends_;
    snapshot->country_groups_ = country_groups_;
    snapshot->partner_fallbacks_ = partner_fallbacks_;
    snapshot->caps_ = caps_;
    snapshot->rebuild_branches(changed);
    return snapshot;
}

bool Snapshot::locate(std::string& location, PlacementSlots& slots, std::string_view destination,
                      std::size_t partner_index, std::int64_t link_id, std::string_view slug,
                      const LocationSuffix& suffix) const {
    const Partner& partner = partners_[partner_index];
    if (!has_placements(partner)) {
        location = build_location(destination, partner, suffix);
        slots = {};
        return true;
    }
    auto placed = placed_location(destination, partner, link_id, slug);
    if (!placed) return false;
    location = std::move(placed->location);
    slots = placed->slots;
    return true;
}

void Snapshot::apply_schedule(SysSeconds now) {
    // Scheduled codes whose moment has come replace the current code; the rest wait.
    for (Partner& partner : partners_) {
        if (apply_due_codes(partner, now)) schedule_due_ = true;
        const auto& schedule = partner.scheduled_codes;
        if (!schedule.empty() && (!next_change_ || schedule.front().valid_from < *next_change_)) {
            next_change_ = schedule.front().valid_from;
        }
    }
}

void Snapshot::reserve_index(std::size_t links) {
    std::size_t size = 2;
    while (size < 2 * links) size *= 2;
    slots_.assign(size, Slot{});
}

bool Snapshot::index(std::uint32_t position) {
    std::string_view slug = entries_[position].slug;
    std::uint16_t domain = entries_[position].domain;
    std::size_t hash = hash_of(slug, domain);
    std::size_t mask = slots_.size() - 1;
    auto tag = static_cast<std::uint32_t>(hash >> 32);
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
        Slot& slot = slots_[i];
        if (slot.position == kNoEntry) {
            slot = Slot{tag, position};
            return true;
        }
        if (slot.tag == tag && entries_[slot.position].slug == slug &&
            entries_[slot.position].domain == domain)
            return false;
    }
}

std::uint16_t Snapshot::domain_of(std::string_view host) const noexcept {
    for (std::size_t i = 0; i < domains_.size(); ++i) {
        const std::string& known = domains_[i].host;
        if (known.size() != host.size() || known.empty()) continue;
        bool same = true;
        for (std::size_t k = 0; k < host.size() && same; ++k) {
            char c = host[k];
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
            same = c == known[k];
        }
        if (same) return static_cast<std::uint16_t>(i);
    }
    return kUnknownDomain;
}

Link Snapshot::link(const LinkEntry& entry) const {
    Link l;
    l.id = entry.id;
    l.slug = entry.slug;
    l.partner = partners_[entry.partner_index].slug;
    l.destination = std::string(entry.destination);
    l.status = entry.status;
    if (entry.expires_at != 0) l.expires_at = SysSeconds{std::chrono::seconds{entry.expires_at}};
    if (!entry.fallback.empty()) l.fallback = std::string(entry.fallback);
    l.utm_passthrough = entry.utm_passthrough;
    if (entry.domain != 0) l.domain = domains_[entry.domain].host;
    for (std::uint32_t i = 0; i < entry.rule_count; ++i)
        l.rules.push_back(rules_[entry.first_rule + i].source);
    l.auto_fallback = entry.auto_fallback;
    if (std::size_t cap = cap_of(entry); cap != kNoCap)
        l.max_human_clicks = caps_[cap].max_human_clicks;
    // Written to the snapshot file: an instance started from it serves what the fleet serves.
    if (entry.default_failing) l.fallback_switches.push_back({"default", "", "", 0});
    for (std::uint32_t i = 0; i < entry.rule_count; ++i) {
        const TargetRule& rule = rules_[entry.first_rule + i];
        for (std::uint32_t j = 0; j < rule.branch_count; ++j) {
            if (!branches_[rule.first_branch + j].failing) continue;
            std::string name = "rules[" + std::to_string(i) + "]";
            if (rule.split) name += ".split[" + std::to_string(j) + "]";
            l.fallback_switches.push_back({std::move(name), "", "", 0});
        }
    }
    return l;
}

Snapshot::Builder::Builder(std::uint64_t version, std::vector<Partner> partners,
                           const UrlPolicy& policy, std::string source, SysSeconds now,
                           std::size_t max_links)
    : snapshot_(std::make_shared<Snapshot>()) {
    Snapshot& s = *snapshot_;
    s.version_ = version;
    s.source_ = std::move(source);
    s.built_at_ = now.time_since_epoch().count();
    s.policy_ = policy;
    s.partners_ = std::move(partners);
    s.apply_schedule(now);
    partner_index_.reserve(s.partners_.size());
    suffixes_.reserve(s.partners_.size());
    s.placement_styles_.reserve(s.partners_.size());
    for (std::size_t i = 0; i < s.partners_.size(); ++i) {
        partner_index_.emplace(s.partners_[i].slug, i);
        suffixes_.push_back(location_suffix(s.partners_[i]));
        s.placement_styles_.push_back(refgate::domain::placement_style(s.partners_[i]));
    }
    // Sized once: the slug index must stay at most half full.
    s.entries_.reserve(max_links);
    s.reserve_index(max_links);
}

void Snapshot::Builder::add(Link&& link) {
    Snapshot& s = *snapshot_;
    if (s.entries_.size() == s.entries_.capacity()) {
        // More links than announced: the slug index was sized for max_links.
        s.rejected_.push_back(link.slug + ": more links than the snapshot was sized for");
        return;
    }
    auto p = partner_index_.find(link.partner);
    if (p == partner_index_.end()) {
        s.rejected_.push_back(link.slug + ": unknown partner " + link.partner);
        return;
    }
    const Partner& partner = s.partners_[p->second];
    // The same rules every save path runs (link_rules.hpp): what was accepted is served.
    LinkValidation checked = validate_link(link, partner, s.policy_);
    if (!checked.servable()) {
        for (const auto& issue : checked.issues) {
            if (issue.field == "fallback") continue;
            s.rejected_.push_back(link.slug + ": " + issue.field + " " + issue.message + " [" +
                                  issue.rule + "]");
            return;
        }
    }
    if (checked.destination) {
        s.rejected_.push_back(link.slug + ": destination is not canonical");
        return;
    }
    std::string location;
    PlacementSlots placement;
    if (!s.locate(location, placement, link.destination, p->second, link.id, link.slug,
                  suffixes_[p->second])) {
        s.rejected_.push_back(link.slug + ": its Location is longer than 64 KiB");
        return;
    }
    std::uint16_t domain = 0;
    if (!link.domain.empty()) {
        auto d = domain_index_.find(link.domain);
        if (d == domain_index_.end()) {
            s.rejected_.push_back(link.slug + ": unknown domain " + link.domain);
            return;
        }
        domain = d->second;
    }
    LinkEntry& entry = s.entries_.emplace_back();
    entry.slug = std::move(link.slug);
    entry.domain = domain;
    // The first of a slug wins: one lookup, undone when the slug is taken.
    if (!s.index(static_cast<std::uint32_t>(s.entries_.size() - 1))) {
        s.entries_.pop_back();
        return;
    }
    entry.id = link.id;
    entry.partner_index = p->second;
    entry.status = link.status;
    entry.expires_at = link.expires_at ? link.expires_at->time_since_epoch().count() : 0;
    entry.utm_passthrough = link.utm_passthrough;
    entry.partner_active = partner.active;
    entry.location = s.strings_.add(location);
    entry.placement = placement;
    if (link.fallback) {
        if (checked.ok()) {
            entry.fallback = s.strings_.add(checked.fallback ? *checked.fallback : *link.fallback);
        } else {
            for (const auto& issue : checked.issues)
                s.rejected_.push_back(entry.slug + ": fallback " + issue.message);
        }
    }
    entry.destination = s.strings_.add(link.destination);
    if (!link.rules.empty()) add_rules(entry, link.rules);
    entry.auto_fallback = link.auto_fallback;
    if (link.max_human_clicks && *link.max_human_clicks > 0) {
        entry.has_cap = true;
        s.caps_.push_back(
            {static_cast<std::uint32_t>(s.entries_.size() - 1), entry.id, *link.max_human_clicks});
    }
    if (link.auto_fallback && !entry.fallback.empty() && !link.fallback_switches.empty())
        add_fallback_switches(entry, link.fallback_switches);
}

void Snapshot::Builder::add_fallback_switches(LinkEntry& entry,
                                              const std::vector<FallbackSwitch>& switches) {
    Snapshot& s = *snapshot_;
    for (const FallbackSwitch& sw : switches) {
        if (sw.branch == "default") {
            if (!entry.default_failing) ++s.serving_fallback_;
            entry.default_failing = true;
            continue;
        }
        // "rules[i]" or "rules[i].split[j]"; a name that no longer fits the rules is ignored
        // (the rules changed since the check: the next check names the branches anew).
        unsigned rule = 0, branch = 0;
        char tail = 0;
        int read = std::sscanf(sw.branch.c_str(), "rules[%u].split[%u%c", &rule, &branch, &tail);
        if (read != 3 || tail != ']') {
            branch = 0;
            read = std::sscanf(sw.branch.c_str(), "rules[%u%c", &rule, &tail);
            if (read != 2 || tail != ']') continue;
        }
        if (rule >= entry.rule_count) continue;
        const TargetRule& r = s.rules_[entry.first_rule + rule];
        if (branch >= r.branch_count) continue;
        s.branches_[r.first_branch + branch].failing = true;
    }
}

void Snapshot::Builder::domains(const std::vector<Domain>& domains) {
    Snapshot& s = *snapshot_;
    s.domains_.assign(1, DomainEntry{});
    domain_index_.clear();
    for (const auto& d : domains) {
        if (d.is_default) {
            s.domains_[0] = {d.host, d.not_found};
            domain_index_[d.host] = 0;
        }
    }
    for (const auto& d : domains) {
        if (d.is_default || s.domains_.size() >= kUnknownDomain) continue;
        domain_index_[d.host] = static_cast<std::uint16_t>(s.domains_.size());
        s.domains_.push_back({d.host, d.not_found});
    }
}

std::shared_ptr<const Snapshot> Snapshot::Builder::finish(std::vector<Disclosure> disclosures) {
    snapshot_->disclosures_ = DisclosureSet(std::move(disclosures));
    return std::move(snapshot_);
}

std::shared_ptr<const Snapshot> Snapshot::build(std::uint64_t version,
                                                std::vector<Partner> partners,
                                                std::vector<Link> links, const UrlPolicy& policy,
                                                std::string source,
                                                std::vector<Disclosure> disclosures,
                                                SysSeconds now) {
    Builder builder(version, std::move(partners), policy, std::move(source), now, links.size());
    for (Link& link : links) {
        builder.add(std::move(link));
        // The input link's strings are freed as we go, not all at the end.
        link = Link();
    }
    return builder.finish(std::move(disclosures));
}

}  // namespace refgate::domain
