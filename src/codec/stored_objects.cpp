#include "refgate/codec/stored_objects.hpp"

#include <chrono>
#include <cstdio>

#include "refgate/codec/import_document.hpp"
#include "refgate/domain/time.hpp"

namespace refgate::codec {
namespace {

using Json = nlohmann::ordered_json;

void add_stamps(Json& object, const Stamps& stamps) {
    object["created_at"] = format_micros(stamps.created_us);
    object["updated_at"] = format_micros(stamps.updated_us);
    object["version"] = stamps.version;
}

Json channel_codes_json(const std::vector<domain::ChannelCode>& codes) {
    Json out = Json::array();
    for (const auto& c : codes) out.push_back({{"channel", c.channel}, {"ref_code", c.ref_code}});
    return out;
}

}  // namespace

std::string format_micros(std::int64_t unix_micros) {
    auto micros =
        std::chrono::sys_time<std::chrono::microseconds>(std::chrono::microseconds{unix_micros});
    auto seconds = std::chrono::floor<std::chrono::seconds>(micros);
    std::string text = domain::format_rfc3339(seconds);  // "...T16:00:00Z"
    char fraction[8];
    std::snprintf(fraction, sizeof fraction, ".%06lld",
                  static_cast<long long>((micros - seconds).count()));
    text.insert(text.size() - 1, fraction);
    return text;
}

Json stored_partner_object(const domain::Partner& partner, const Stamps& stamps) {
    Json object = partner_to_json(partner);
    Json scheduled = Json::array();
    for (const auto& code : partner.scheduled_codes) {
        scheduled.push_back({{"ref_code", code.ref_code.empty() ? Json() : Json(code.ref_code)},
                             {"valid_from", domain::format_rfc3339(code.valid_from)}});
        if (code.channel_codes)
            scheduled.back()["channel_codes"] = channel_codes_json(*code.channel_codes);
    }
    object["scheduled_codes"] = std::move(scheduled);
    add_stamps(object, stamps);
    return object;
}

Json stored_link_object(const domain::Link& link, const Stamps& stamps) {
    Json object = link_to_json(link);
    // What readers of the link's own destination get now (automatic fallback, issue 44), and the
    // branches link health switched away with why (a rule branch: to the destination while
    // that is healthy). Not in the import format: only the API's objects and audit entries.
    bool active = link.auto_fallback && link.fallback;
    object["serving"] = domain::serving_fallback(link) ? "fallback" : "destination";
    object["serving_reason"] = nullptr;
    Json switched = Json::array();
    for (const auto& s : active ? link.fallback_switches : std::vector<domain::FallbackSwitch>{}) {
        Json reason{
            {"branch", s.branch},
            {"state", s.reason},
            {"detail", s.detail},
            {"since", domain::format_rfc3339(domain::SysSeconds{std::chrono::seconds{s.since}})}};
        if (s.branch == "default") object["serving_reason"] = reason;
        switched.push_back(std::move(reason));
    }
    object["fallback_branches"] = std::move(switched);
    add_stamps(object, stamps);
    return object;
}

Json view_json(const PartnerView& view) { return stored_partner_object(view.partner, view.stamps); }

Json view_json(const LinkView& view) { return stored_link_object(view.link, view.stamps); }

Json view_json(const CodeView& view) {
    return {{"ref_param", view.ref_param},
            {"ref_code", view.ref_code},
            {"live_from", format_micros(view.live_from_us)},
            {"live_until", view.live_until_us ? Json(format_micros(*view.live_until_us)) : Json()},
            {"scheduled", view.scheduled},
            {"channel_codes", channel_codes_json(view.channel_codes)}};
}

Json view_json(const LinkPreviewView& view) {
    Json answer{{"location", view.location ? Json(*view.location) : Json()},
                {"public_url", view.public_url ? Json(*view.public_url) : Json()}};
    if (!view.skipped_branches.empty()) {
        Json skipped = Json::array();
        for (const auto& b : view.skipped_branches) {
            skipped.push_back({{"branch", b.branch},
                               {"partner", b.partner},
                               {"reason", b.reason},
                               {"rule_skipped", b.rule_skipped}});
        }
        answer["skipped_branches"] = std::move(skipped);
    }
    if (view.rule) answer["rule"] = *view.rule;
    if (view.split_locations) answer["split_locations"] = *view.split_locations;
    if (!view.placements.empty()) {
        Json placements = Json::array();
        for (const auto& p : view.placements) {
            placements.push_back({{"channel", p.channel},
                                  {"ref_code", p.ref_code},
                                  {"token", p.token ? Json(*p.token) : Json()},
                                  {"location", p.location ? Json(*p.location) : Json()}});
        }
        answer["placements"] = std::move(placements);
    }
    return answer;
}

Json view_json(const CountryGroupView& view) {
    Json j = country_group_to_json(view.group);
    j["updated_at"] = format_micros(view.updated_us);
    j["version"] = view.version;
    return j;
}

Json view_json(const DisclosureView& view) {
    const domain::Disclosure& d = view.disclosure;
    return Json{{"key", d.key},
                {"locale", d.locale},
                {"text", d.text},
                {"html", d.html},
                {"html_given", d.html_given},
                {"version", d.version},
                {"updated_at", format_micros(view.created_us)},
                {"updated_by", view.created_by}};
}

Json view_json(const DisclosureVersionView& view) {
    const domain::Disclosure& d = view.disclosure;
    return Json{{"version", d.version},
                {"text", d.text},
                {"html", d.html},
                {"created_at", format_micros(view.created_us)},
                {"created_by", view.created_by}};
}

Json view_json(const DisclosurePreviewView& view) {
    return Json{{"html", view.html}, {"fragment", view.fragment}};
}

Json view_json(const ImportDocument& document) {
    return export_document(document.partners, document.links, document.disclosures,
                           document.country_groups, document.domains);
}

Json view_json(const LinkShareView& view) {
    return {{"public_url", view.public_url ? Json(*view.public_url) : Json()},
            {"html_snippet", view.html_snippet ? Json(*view.html_snippet) : Json()}};
}

Json view_json(const PlacementView& view) {
    return {{"channel", view.channel}, {"token", view.token}, {"human_clicks", view.human_clicks}};
}

Json view_json(const LinkPlacements& view) {
    Json items = Json::array();
    for (const auto& item : view.items) items.push_back(view_json(item));
    return {{"items", std::move(items)}};
}

Json view_json(const PlacementFound& view) {
    Json j = {{"token", view.token},
              {"link", view.link},
              {"channel", view.channel ? Json(*view.channel) : Json()}};
    if (!view.domain.empty()) j["domain"] = view.domain;  // issue 46: absent on the default
    return j;
}

}  // namespace refgate::codec
