// What editors see of a link before and after they save it: the Location a reader gets, the
// public URL and the snippet, from the code paths the redirect and /snippet/ use.

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "outcomes.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/domain/placement.hpp"
#include "refgate/domain/public_url.hpp"
#include "refgate/domain/reader_location.hpp"
#include "refgate/domain/snapshot.hpp"
#include "refgate/domain/targeting.hpp"

namespace refgate::admin {
namespace {

// The branches of the link's rules that no reader gets because their partner is inactive, named
// as the link health names them ("rules[0]", "rules[1].split[0]").
std::vector<codec::SkippedBranch> skipped_branches(const domain::Snapshot& snapshot,
                                                   const domain::LinkEntry& entry) {
    std::vector<codec::SkippedBranch> skipped;
    for (std::uint32_t i = 0; i < entry.rule_count; ++i) {
        const domain::TargetRule& rule = snapshot.rules()[entry.first_rule + i];
        for (std::uint16_t b = 0; b < rule.branch_count; ++b) {
            const domain::TargetBranch& branch = snapshot.branches()[rule.first_branch + b];
            if (branch.partner_active) continue;
            std::string name = "rules[" + std::to_string(i) + "]";
            if (rule.split) name += ".split[" + std::to_string(b) + "]";
            skipped.push_back({name, snapshot.partners()[branch.partner_index].slug,
                               "partner_inactive", rule.skipped});
        }
    }
    return skipped;
}

// What the targeting rules give `reader` (when there is one): the snapshot's own evaluation over
// a one-link snapshot of the partners the link names and the stored country groups (a reader
// from AT gets the DE store when the family says AT -> DE), as a redirect would; and which of
// the rules' branches lead to an inactive partner, and so are never taken.
void preview_rules(AdminRows& rows, const domain::Link& link,
                   const std::optional<codec::PreviewReader>& reader, bool live,
                   const domain::UrlPolicy& policy, domain::SysSeconds now,
                   codec::LinkPreviewView& answer) {
    std::vector<domain::Partner> partners;
    auto add = [&](const std::string& slug) {
        if (slug.empty()) return;
        for (const auto& p : partners)
            if (p.slug == slug) return;
        if (auto row = rows.partner(slug, RowLock::none)) partners.push_back(row->partner);
    };
    add(link.partner);
    for (const auto& rule : link.rules) {
        add(rule.partner);
        for (const auto& b : rule.split) add(b.partner);
    }
    domain::Snapshot::Builder builder(0, std::move(partners), policy, "preview", now, 1);
    std::vector<domain::CountryGroup> groups;
    for (auto& row : rows.country_groups()) groups.push_back(std::move(row.group));
    builder.country_groups(std::move(groups));
    builder.add(domain::Link(link));
    auto snapshot = builder.finish({});
    const domain::LinkEntry* entry = snapshot->find(link.slug);
    if (entry == nullptr) return;
    answer.skipped_branches = skipped_branches(*snapshot, *entry);
    if (!reader || !live)
        return;  // a disabled or expired link: its fallback, whatever the rules say
    domain::ReaderTraits traits{reader->country, reader->platform, reader->language};
    domain::Target target = snapshot->target(*entry, traits, [] { return std::uint64_t{0}; });
    // The link's own destination keeps the Location found before (a placement partner's token
    // needs the stored id, which a preview of an unsaved link does not have).
    if (target.rule != 0) answer.location = std::string(target.location);
    answer.rule = target.rule;
    if (target.rule == 0) return;
    const domain::TargetRule& rule = snapshot->rules()[entry->first_rule + target.rule - 1];
    if (!rule.split) return;
    std::vector<std::string> locations;
    for (std::uint16_t b = 0; b < rule.branch_count; ++b) {
        const domain::TargetBranch& branch = snapshot->branches()[rule.first_branch + b];
        if (branch.partner_active) locations.push_back(branch.location);
    }
    answer.split_locations = std::move(locations);
}

}  // namespace

const domain::Clock& AdminService::clock() const {
    return options_.clock != nullptr ? *options_.clock : system_clock_;
}

std::optional<std::string> AdminService::public_url(const std::string& slug,
                                                    const std::string& host) const {
    std::string url = domain::public_link_url(options_.public_base_url, host, slug);
    if (url.empty()) return std::nullopt;
    return url;
}

std::string AdminService::link_host(AdminRows& rows, const domain::Link& link) {
    if (!link.domain.empty()) return link.domain;
    for (const auto& d : rows.domains()) {
        if (d.domain.is_default) return d.domain.host;
    }
    return {};
}

namespace {

// The code and token a click of `direct` and of each channel the partner names in channel_codes
// carries, as the redirect writes them (code_for_channel, write_token). Tokens need the link's
// slug (`named`: the preview gave one) and, for opaque ones, its id (`link_id` 0: not saved).
std::vector<codec::PreviewPlacement> preview_placements(const domain::Link& link, bool named,
                                                        std::int64_t link_id,
                                                        domain::Partner partner,
                                                        domain::SysSeconds now) {
    std::vector<codec::PreviewPlacement> out;
    if (!domain::has_placements(partner)) return out;
    domain::apply_due_codes(partner, now);
    std::vector<std::string> channels{std::string(domain::kDirectChannel)};
    for (const auto& c : partner.channel_codes) {
        if (std::find(channels.begin(), channels.end(), c.channel) == channels.end())
            channels.push_back(c.channel);
    }
    for (const auto& channel : channels) {
        codec::PreviewPlacement p{.channel = channel};
        bool pattern = channel.ends_with('*');
        std::string_view as_clicked =
            pattern ? std::string_view(channel).substr(0, channel.size() - 1) : channel;
        p.ref_code = domain::code_for_channel(partner, as_clicked);
        bool token_known = !pattern && named &&
                           (partner.subid_style == domain::SubidStyle::readable || link_id != 0);
        if (!partner.subid_param.empty() && token_known)
            p.token = domain::placement_token(partner, link_id, link.slug, channel);
        if (!pattern && (partner.subid_param.empty() || p.token)) {
            p.location = domain::build_placement_location(
                link.destination, partner, p.ref_code,
                p.token ? std::optional<std::string_view>(*p.token) : std::nullopt);
        }
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace

Result<codec::LinkPreviewView> AdminService::preview_link(const codec::LinkPreview& preview) {
    using PreviewResult = Result<codec::LinkPreviewView>;
    if (!preview.errors.empty()) return refused(preview.errors);
    domain::Link link = preview.link;
    // A write transaction that is never committed: validation locks the partner's row.
    return write<PreviewResult>([&](AdminRows& rows) -> PreviewResult {
        if (auto errors = validate(rows, link); !errors.empty()) return refused(errors);
        auto partner = rows.partner(link.partner, RowLock::none);
        auto now = std::chrono::floor<std::chrono::seconds>(clock().now());
        codec::LinkPreviewView answer{.location =
                                          domain::reader_location(link, partner->partner, now)};
        if (preview.named) answer.public_url = public_url(link.slug, link_host(rows, link));
        bool live = link.status == domain::LinkStatus::active && partner->partner.active &&
                    !(link.expires_at && now >= *link.expires_at);
        // A stored link's id: its opaque tokens, in the placements and the rules' Locations.
        if (preview.named) {
            if (auto stored = rows.link(link.slug, RowLock::none)) link.id = stored->id;
        }
        if (live) {
            answer.placements =
                preview_placements(link, preview.named, link.id, partner->partner, now);
            // A click without `src` gets the channel direct's Location, its token included.
            if (!answer.placements.empty() && answer.placements.front().location)
                answer.location = answer.placements.front().location;
        }
        if (preview.reader || !link.rules.empty())
            preview_rules(rows, link, preview.reader, live, options_.url_policy, now, answer);
        return answered(OutcomeKind::ok, std::move(answer));
    });
}

Result<codec::LinkShareView> AdminService::share_link(const std::string& slug,
                                                      const std::string& src) {
    using ShareResult = Result<codec::LinkShareView>;
    return read<ShareResult>([&](AdminRows& rows) -> ShareResult {
        auto row = rows.link(slug, RowLock::none);
        if (!row) return refused(OutcomeKind::not_found, "no link '" + slug + "'");
        auto url = public_url(row->link.slug, link_host(rows, row->link));
        if (!url) return answered(OutcomeKind::ok, codec::LinkShareView{});
        if (!src.empty()) url->append("?src=").append(src);
        auto partner = rows.partner(row->link.partner, RowLock::none);
        std::vector<domain::Disclosure> current;
        for (auto& d : rows.disclosures()) current.push_back(std::move(d.disclosure));
        domain::DisclosureSet set(std::move(current));
        const domain::DisclosureEntry* entry =
            set.resolve(partner->partner.slug, {}, options_.default_locale);
        std::string snippet = domain::link_snippet(
            *url, partner->partner.name, entry != nullptr ? &entry->current->text : nullptr);
        return answered(OutcomeKind::ok, codec::LinkShareView{url, std::move(snippet)});
    });
}

}  // namespace refgate::admin
