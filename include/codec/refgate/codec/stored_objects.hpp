#pragma once

// A partner and a link as stored: the import format's object (import_document.hpp) plus what the
// database adds (scheduled codes, times, version). The one definition of these shapes: the admin
// API answers with them, and the audit trail records them, whether the API, `refgate import` or
// the console's import made the change. The JSON of the admin API's other views
// (admin_objects.hpp) is here too.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "refgate/codec/admin_objects.hpp"
#include "refgate/domain/model.hpp"

namespace refgate::codec {

// "2026-11-29T16:00:00.123456Z" from microseconds since the epoch.
std::string format_micros(std::int64_t unix_micros);

// {slug, name, ref_param, ref_code, allowed_domains, extra_params, active, scheduled_codes,
//  created_at, updated_at, version}
nlohmann::ordered_json stored_partner_object(const domain::Partner& partner, const Stamps& stamps);
// {slug, partner, destination, status, expires_at, fallback, utm_passthrough, auto_fallback,
//  rules (when any), serving, serving_reason, fallback_branches, created_at, updated_at, version}
nlohmann::ordered_json stored_link_object(const domain::Link& link, const Stamps& stamps);

// The admin API's views as its answers show them.
nlohmann::ordered_json view_json(const PartnerView& view);
nlohmann::ordered_json view_json(const LinkView& view);
// {ref_param, ref_code, live_from, live_until, scheduled}
nlohmann::ordered_json view_json(const CodeView& view);
// {location, public_url, skipped_branches (when any), rule and split_locations (with a reader)}
nlohmann::ordered_json view_json(const LinkPreviewView& view);
// {public_url, html_snippet}
nlohmann::ordered_json view_json(const LinkShareView& view);
// {channel, token, human_clicks}
nlohmann::ordered_json view_json(const PlacementView& view);
// {"items": [{channel, token, human_clicks}]}
nlohmann::ordered_json view_json(const LinkPlacements& view);
// {token, link, channel}
nlohmann::ordered_json view_json(const PlacementFound& view);
// {family, fallbacks: {"AT": "DE"}, updated_at, version}
nlohmann::ordered_json view_json(const CountryGroupView& view);
// {key, locale, text, html, html_given, version, updated_at, updated_by}
nlohmann::ordered_json view_json(const DisclosureView& view);
// {version, text, html, created_at, created_by}
nlohmann::ordered_json view_json(const DisclosureVersionView& view);
// {html, fragment}
nlohmann::ordered_json view_json(const DisclosurePreviewView& view);
// The export: the import document of everything (import_document.hpp's export_document).
nlohmann::ordered_json view_json(const ImportDocument& document);

// {"items": [...], "next_cursor": cursor}
template <typename T>
nlohmann::ordered_json view_json(const Page<T>& page) {
    nlohmann::ordered_json items = nlohmann::ordered_json::array();
    for (const auto& item : page.items) items.push_back(view_json(item));
    nlohmann::ordered_json next;
    if (page.next_cursor) next = *page.next_cursor;
    return {{"items", std::move(items)}, {"next_cursor", std::move(next)}};
}

}  // namespace refgate::codec
