// The admin service's placements (issue 42): a link's tokens per channel, and the link and
// channel a token names, recomputed from the partners' settings (nothing about tokens is stored).

#include <map>

#include "outcomes.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/placement.hpp"

namespace refgate::admin {
namespace {

// The partner whose tokens a link's placements are: the first of its own partner and its rules'
// (in order) that has a sub-ID parameter; its own partner when none has one.
std::optional<PartnerRow> token_partner(AdminRows& rows, const domain::Link& link) {
    std::vector<std::string> slugs{link.partner};
    for (const auto& rule : link.rules) {
        if (!rule.partner.empty()) slugs.push_back(rule.partner);
        for (const auto& b : rule.split) {
            if (!b.partner.empty()) slugs.push_back(b.partner);
        }
    }
    std::optional<PartnerRow> own;
    for (const auto& slug : slugs) {
        auto row = rows.partner(slug, RowLock::none);
        if (!row) continue;
        if (!row->partner.subid_param.empty()) return row;
        if (!own && slug == link.partner) own = std::move(row);
    }
    return own;
}

// The channel among "direct", "other" and `channels` whose token for `link` is `token`.
std::optional<std::string> channel_of_token(const domain::Partner& partner,
                                            const domain::Link& link, const std::string& token,
                                            std::vector<std::string> channels) {
    channels.insert(channels.begin(),
                    {std::string(domain::kDirectChannel), std::string(domain::kOtherChannel)});
    for (const auto& channel : channels) {
        if (domain::placement_token(partner, link.id, link.slug, channel) == token) return channel;
    }
    return std::nullopt;
}

}  // namespace

Result<codec::LinkPlacements> AdminService::link_placements(
    const std::string& slug, const std::vector<std::pair<std::string, std::uint64_t>>& channels) {
    return read<Result<codec::LinkPlacements>>(
        [&](AdminRows& rows) -> Result<codec::LinkPlacements> {
            auto row = rows.link(slug, RowLock::none);
            if (!row) return refused(OutcomeKind::not_found, "no link '" + slug + "'");
            domain::Link link = row->link;
            link.id = row->id;
            auto partner = token_partner(rows, link);
            if (!partner)
                return refused(OutcomeKind::not_found, "no partner '" + link.partner + "'");
            codec::LinkPlacements page;
            page.carried = !partner->partner.subid_param.empty();
            for (const auto& [channel, clicks] : channels) {
                page.items.push_back(
                    {channel,
                     domain::placement_token(partner->partner, link.id, link.slug, channel),
                     clicks});
            }
            return answered(OutcomeKind::ok, std::move(page));
        });
}

Result<codec::PlacementFound> AdminService::find_placement(
    const std::string& token,
    const std::function<std::vector<std::string>(const std::string& link)>& channels_of) {
    // The reads first, the clicks (Redis, the stats' connections) after the transaction.
    struct Found {
        domain::Link link;
        domain::Partner partner;
    };
    std::optional<Found> found;
    read<bool>([&](AdminRows& rows) {
        // An opaque token: the link's id, when that link's token partner writes opaque ones.
        if (auto opaque = domain::parse_opaque_token(token)) {
            if (auto row = rows.link_by_id(opaque->link_id)) {
                domain::Link link = row->link;
                link.id = row->id;
                auto partner = token_partner(rows, link);
                if (partner && partner->partner.subid_style == domain::SubidStyle::opaque) {
                    found = Found{std::move(link), partner->partner};
                    return true;
                }
            }
        }
        // A readable one: the link of a partner with readable tokens whose slug begins it (at
        // most one per partner: the save paths refuse links whose tokens could collide).
        for (const auto& p : rows.partners("")) {
            const domain::Partner& partner = p.partner;
            if (partner.subid_param.empty() || partner.subid_style != domain::SubidStyle::readable)
                continue;
            auto charset = domain::SubidCharset::parse(partner.subid_charset);
            if (!charset) continue;
            for (auto& link : rows.links_naming(partner.slug)) {
                std::string prefix = domain::readable_prefix(link.slug, *charset);
                if (prefix.empty() || !std::string_view(token).starts_with(prefix)) continue;
                found = Found{std::move(link), partner};
                return true;
            }
        }
        return false;
    });
    if (!found)
        return refused(OutcomeKind::not_found, "no link's placement token is '" + token + "'");
    // The link's own clicks (issue 46: its slug may be taken on other domains too).
    auto channel = channel_of_token(found->partner, found->link, token,
                                    channels_of(domain::link_key(found->link)));
    return answered(OutcomeKind::ok, codec::PlacementFound{token, found->link.slug,
                                                           std::move(channel), found->link.domain});
}

}  // namespace refgate::admin
