#pragma once

// The immutable in-memory picture of all partners and links that redirects are answered from.
// A new snapshot is built off the request path and swapped in whole.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "refgate/domain/destination.hpp"
#include "refgate/domain/disclosure.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/placement.hpp"
#include "refgate/domain/string_arena.hpp"
#include "refgate/domain/string_hash.hpp"
#include "refgate/domain/table_memory.hpp"
#include "refgate/domain/targeting.hpp"

namespace refgate::domain {

// A link with everything a redirect needs precomputed. Its destination, Location and fallback
// are views of the snapshot's string arena (valid while the snapshot lives); the slug stays in
// the entry (short slugs fit in std::string itself), so that find() compares it without another
// cache miss.
struct LinkEntry {
    std::int64_t id = 0;
    std::string slug;
    std::size_t partner_index = 0;
    LinkStatus status = LinkStatus::active;
    bool utm_passthrough = false;
    bool partner_active = true;
    // Issue 46: the link's domain, an index into Snapshot::domains() (0: the default domain);
    // in what was padding.
    std::uint16_t domain = 0;
    // A partner with placements: where `location`'s code and token sit (in what was padding).
    PlacementSlots placement;
    std::int64_t expires_at = 0;  // unix seconds; 0: never
    std::string_view destination;
    std::string_view location;  // destination + referral code + extra parameters
    std::string_view fallback;  // empty: none
    // Targeting rules: rule_count rules from first_rule in the snapshot's rule table.
    std::uint32_t first_rule = 0;
    std::uint16_t rule_count = 0;
    bool country_rules = false;  // some rule names countries: the reader's country is needed
    // Automatic fallback (issue 44), in the entry's last byte: the editor's switch, and whether
    // link health switched the default branch to the fallback (set only with a fallback).
    bool auto_fallback : 1 = false;
    bool default_failing : 1 = false;
    // Click caps (issue 44): the link has a max_human_clicks (Snapshot::caps()); the cap
    // worker's verdict on it is runtime state (runtime/cap_flags.hpp).
    bool has_cap : 1 = false;
    // The small page sent with a 302 is written per request (append_redirect_page) into the
    // response's reused buffer: keeping one per link cost about 400 bytes a link.
};

// Prefetched whole by every redirect: placements fit into what was padding. Two cache lines
// since the strings moved to the arena (176 bytes before).
static_assert(sizeof(LinkEntry) <= 128);

// Where a reader of a link goes: the link's own Location (rule 0) or the branch of the rule that
// matched (rule = its index + 1, branch = the split's branch or 0).
struct Target {
    std::string_view location;
    std::uint32_t partner_index = 0;
    std::uint16_t rule = 0;
    std::uint16_t branch = 0;
    PlacementSlots placement;  // of `location`, for partners with placements
    bool failing = false;      // automatic fallback switched this rule branch away
};

// Country fallbacks are followed at most this many steps (NZ -> AU -> US).
constexpr int kMaxFallbackSteps = 4;

class Snapshot {
  public:
    // Builds the lookup tables. Links whose stored data no longer passes validation (edited by
    // hand in SQL, say) are left out and reported in `rejected`: a redirect is never built from
    // an unchecked URL.
    //
    // Each partner's referral code is the one in effect at `now`: its latest scheduled code whose
    // valid_from has passed, else its ref_code. next_change() tells when that answer changes.
    static std::shared_ptr<const Snapshot> build(std::uint64_t version,
                                                 std::vector<Partner> partners,
                                                 std::vector<Link> links, const UrlPolicy& policy,
                                                 std::string source,
                                                 std::vector<Disclosure> disclosures,
                                                 SysSeconds now);
    // The same, at the system clock's time.
    static std::shared_ptr<const Snapshot> build(std::uint64_t version,
                                                 std::vector<Partner> partners,
                                                 std::vector<Link> links, const UrlPolicy& policy,
                                                 std::string source,
                                                 std::vector<Disclosure> disclosures = {});

    // The same data with the codes in effect at `now`: what an instance publishes when a
    // scheduled code takes over, without asking PostgreSQL.
    std::shared_ptr<const Snapshot> at(SysSeconds now) const;
    // The next moment a scheduled code takes over; nullopt when none is scheduled.
    std::optional<SysSeconds> next_change() const { return next_change_; }
    // Whether a scheduled code took over while building (PostgreSQL still lists it as scheduled).
    bool schedule_due() const { return schedule_due_; }

    std::uint64_t version() const { return version_; }
    const std::string& source() const { return source_; }
    std::int64_t built_at() const { return built_at_; }  // unix seconds: the `now` it was built at
    const std::vector<Partner>& partners() const { return partners_; }
    // The links served, in input order. The input links themselves are not kept (a second copy
    // of every link cost about 30 MiB at 100,000 links): entries hold all that they said.
    std::span<const LinkEntry> entries() const { return entries_; }
    // An entry as a link again, as written to the snapshot file (its fallback canonical).
    Link link(const LinkEntry& entry) const;
    const std::vector<std::string>& rejected() const { return rejected_; }
    std::size_t link_count() const { return entries_.size(); }
    // Links whose own destination automatic fallback switched to their fallback.
    std::size_t serving_fallback() const { return serving_fallback_; }

    // Click caps (issue 44): the links with a max_human_clicks, by position in entries(). Whether
    // a cap is reached is runtime state, kept outside the snapshot (runtime/cap_flags.hpp).
    struct CapEntry {
        std::uint32_t position = 0;
        std::int64_t link_id = 0;
        std::int64_t max_human_clicks = 0;
    };
    const std::vector<CapEntry>& caps() const { return caps_; }
    // The index of `entry`'s cap in caps(); kNoCap when it has none.
    static constexpr std::size_t kNoCap = ~std::size_t{0};
    std::size_t cap_of(const LinkEntry& entry) const noexcept {
        if (!entry.has_cap) return kNoCap;
        auto position = static_cast<std::uint32_t>(&entry - entries_.data());
        std::size_t lo = 0, hi = caps_.size();
        while (lo < hi) {
            std::size_t mid = lo + (hi - lo) / 2;
            if (caps_[mid].position < position) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo < caps_.size() && caps_[lo].position == position ? lo : kNoCap;
    }
    // The hash of `slug` that the slug table is keyed by: find(), prefetch() and
    // prefetch_entry() take it, so that a caller works it out once per request. A slug on
    // another domain than the default is keyed by its hash mixed with the domain's index.
    static std::size_t hash_of(std::string_view slug) { return StringHash{}(slug); }
    static std::size_t hash_of(std::string_view slug, std::uint16_t domain) {
        return on_domain(hash_of(slug), domain);
    }
    static std::size_t on_domain(std::size_t slug_hash, std::uint16_t domain) {
        return domain == 0 ? slug_hash : slug_hash ^ (0x9e3779b97f4a7c15ull * domain);
    }
    const LinkEntry* find(std::string_view slug) const { return find(slug, hash_of(slug)); }
    // The link `slug` on domain `domain` (0: the default domain); `hash` is hash_of(slug, domain).
    const LinkEntry* find(std::string_view slug, std::size_t hash, std::uint16_t domain = 0) const {
        if (slots_.empty()) return nullptr;
        std::size_t mask = slots_.size() - 1;
        auto tag = static_cast<std::uint32_t>(hash >> 32);
        // The table is at most half full: an empty slot always ends the probe.
        for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
            const Slot& slot = slots_[i];
            if (slot.position == kNoEntry) return nullptr;
            const LinkEntry& entry = entries_[slot.position];
            if (slot.tag == tag && entry.domain == domain && entry.slug == slug) return &entry;
        }
    }

    // Branded domains (issue 46): [0] is the default domain (its host empty while no domain is
    // defined: the public base URL's), then the others by host.
    struct DomainEntry {
        std::string host;       // lower case
        std::string not_found;  // where unknown slugs on it go; empty: the 404 page
    };
    static constexpr std::uint16_t kUnknownDomain = 0xffff;
    const std::vector<DomainEntry>& domains() const { return domains_; }
    // Whether any domain is defined.
    bool has_domains() const { return domains_.size() > 1 || !domains_.front().host.empty(); }
    // The index of the domain whose host is `host` in any case; kUnknownDomain when none is.
    // One pass over the few domains' hosts, nothing allocated.
    std::uint16_t domain_of(std::string_view host) const noexcept;
    // Starts loading the slot where find() of a slug of that hash begins (a hint: it changes
    // nothing). At thousands of links that slot is seldom in the cache. Always inlined: GCC 12
    // takes a function that only prefetches for a pure one and drops the call.
    [[gnu::always_inline]] void prefetch(std::size_t hash) const {
        if (slots_.empty()) return;
        __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
    }
    // Starts loading the entry find() will compare first: the first slot whose tag matches
    // (reads the slots, so best called once prefetch() has brought them in).
    [[gnu::always_inline]] void prefetch_entry(std::size_t hash) const {
        if (slots_.empty()) return;
        std::size_t mask = slots_.size() - 1;
        auto tag = static_cast<std::uint32_t>(hash >> 32);
        for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
            const Slot& slot = slots_[i];
            if (slot.position == kNoEntry) return;
            if (slot.tag != tag) continue;
            const auto* begin = reinterpret_cast<const char*>(&entries_[slot.position]);
            for (std::size_t at = 0; at < sizeof(LinkEntry); at += 64)
                __builtin_prefetch(begin + at);
            __builtin_prefetch(begin + sizeof(LinkEntry) - 1);  // an entry need not start a line
            return;
        }
    }
    const Partner& partner(const LinkEntry& entry) const { return partners_[entry.partner_index]; }
    const Partner& partner(const Target& target) const { return partners_[target.partner_index]; }
    // How the partner writes placement tokens (parsed once per snapshot).
    const PlacementStyle& placement_style(std::size_t partner_index) const {
        return placement_styles_[partner_index];
    }

    // The target of a reader of an active link: its rules in order, the first that matches wins;
    // when none does, again as a reader from the country's fallback in the link's partner family
    // (AT -> DE); then the link's own Location. A rule whose partners are all inactive is
    // skipped, and a split never draws a branch of an inactive partner. `reader_key()` is called
    // only for a split: the reader's keyed hash for this link and day. Allocates nothing.
    template <typename ReaderKey>
    Target target(const LinkEntry& entry, ReaderTraits reader, ReaderKey&& reader_key) const {
        for (int step = 0; entry.rule_count != 0 && step <= kMaxFallbackSteps; ++step) {
            for (std::uint32_t i = 0; i < entry.rule_count; ++i) {
                const TargetRule& rule = rules_[entry.first_rule + i];
                if (rule.skipped || !rule_matches(rule, reader)) continue;
                std::size_t branch = 0;
                if (rule.split) {
                    branch = split_branch(rule_key(reader_key(), i),
                                          &branch_ends_[rule.first_branch], rule.branch_count);
                }
                const TargetBranch& b = branches_[rule.first_branch + branch];
                return {b.location,
                        b.partner_index,
                        static_cast<std::uint16_t>(i + 1),
                        static_cast<std::uint16_t>(branch),
                        b.placement,
                        b.failing};
            }
            if (!entry.country_rules || reader.country == 0) break;
            reader.country = fallback_country(entry.partner_index, reader.country);
        }
        return {
            entry.location, static_cast<std::uint32_t>(entry.partner_index), 0, 0, entry.placement,
            false};
    }
    // The country a reader from `country` is tried as when no rule matched, in the family of
    // partner `partner_index`; 0 when none.
    CountryCode fallback_country(std::size_t partner_index, CountryCode country) const noexcept;
    const std::vector<CountryGroup>& country_groups() const { return country_groups_; }
    const std::vector<TargetRule>& rules() const { return rules_; }
    const std::vector<TargetBranch>& branches() const { return branches_; }

    // Every version of every disclosure text, with the current ones' answers precomputed.
    const DisclosureSet& disclosures() const { return disclosures_; }

    // Builds a snapshot one link at a time (build() and the snapshot file's reader): each link
    // is checked and turned into its entry as it comes, so no vector of all input links is
    // needed. add() takes the link's strings; a link that does not pass is left out and reported
    // in rejected(), as build() does.
    class Builder {
      public:
        Builder(std::uint64_t version, std::vector<Partner> partners, const UrlPolicy& policy,
                std::string source, SysSeconds now, std::size_t max_links);
        void add(Link&& link);
        // The partner families' country fallbacks (before the links are added).
        void country_groups(std::vector<CountryGroup> groups);
        // The branded domains (before the links are added); a link on a domain not among them
        // is left out and reported.
        void domains(const std::vector<Domain>& domains);
        std::shared_ptr<const Snapshot> finish(std::vector<Disclosure> disclosures);

      private:
        std::shared_ptr<Snapshot> snapshot_;
        std::unordered_map<std::string_view, std::size_t> partner_index_;
        std::vector<LocationSuffix> suffixes_;  // per partner: what a plain Location appends
        std::unordered_map<std::string, std::uint16_t> domain_index_;  // by host
        // Compiles a link's rules into the rule and branch tables; a link whose rules no longer
        // validate keeps only its own destination (reported in rejected).
        void add_rules(LinkEntry& entry, std::vector<LinkRule>& rules);
        // Marks the branches automatic fallback switched away (a link with a fallback only).
        void add_fallback_switches(LinkEntry& entry, const std::vector<FallbackSwitch>& switches);
    };

  private:
    // Moves the scheduled codes whose moment has come into the partners' ref_code.
    void apply_schedule(SysSeconds now);
    // Builds again the Locations of the rules' branches whose partner's code changed.
    void rebuild_branches(const std::vector<bool>& changed);
    // A Location of `destination` for partner `partner_index` on the link (id, slug): with its
    // placement slots when the partner has placements; false when it cannot be built.
    bool locate(std::string& location, PlacementSlots& slots, std::string_view destination,
                std::size_t partner_index, std::int64_t link_id, std::string_view slug,
                const LocationSuffix& suffix) const;
    // Sizes the slug index for up to `links` entries; then index() adds entries_[position],
    // false (and nothing added) when its slug is already there.
    void reserve_index(std::size_t links);
    bool index(std::uint32_t position);

    std::uint64_t version_ = 0;
    std::string source_;
    std::int64_t built_at_ = 0;
    std::vector<Partner> partners_;
    std::vector<PlacementStyle> placement_styles_;  // per partner
    std::vector<std::string> rejected_;
    UrlPolicy policy_;
    std::optional<SysSeconds> next_change_;
    bool schedule_due_ = false;
    // The entries and the slug table are read at random by every redirect: table memory (in
    // serve, huge pages from 1 MiB: runtime/huge_table_memory.hpp).
    std::vector<LinkEntry, TableAllocator<LinkEntry>> entries_;
    // Slug -> position in entries_: open addressing, linear probing, a power-of-two table at most
    // half full, built once. At 100,000 links a node-based map took 12 % of a start from the
    // file (an allocation and a cache miss or two per link) and about 5 MiB; this is 2 MiB.
    struct Slot {
        std::uint32_t tag = 0;  // the hash's high bits: most mismatches never touch an entry
        std::uint32_t position = kNoEntry;
    };
    static constexpr std::uint32_t kNoEntry = 0xffffffffu;
    std::vector<Slot, TableAllocator<Slot>> slots_;
    std::vector<DomainEntry> domains_{DomainEntry{}};
    DisclosureSet disclosures_;
    std::vector<TargetRule> rules_;
    std::vector<TargetBranch> branches_;
    std::vector<std::uint32_t> branch_ends_;  // per branch: running weight sum within its rule
    std::vector<CountryGroup> country_groups_;
    std::size_t serving_fallback_ = 0;
    std::vector<CapEntry> caps_;  // by position
    // Per partner: its family's fallbacks as sorted (country, fallback) pairs; empty: none.
    std::vector<std::vector<std::pair<CountryCode, CountryCode>>> partner_fallbacks_;
    // The entries' destinations, Locations and fallbacks (built once; a snapshot is immutable).
    StringArena strings_;
};

}  // namespace refgate::domain
