// What editors see of a link before and after they save it: the Location a reader gets, the
// public URL and the snippet, from the code paths the redirect and /snippet/ use.

#include <chrono>
#include <optional>
#include <string>

#include "outcomes.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/reader_location.hpp"
#include "refgate/domain/snapshot.hpp"
#include "refgate/domain/targeting.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

// A slug for a preview whose body names none; it is never shown.
constexpr const char* kPreviewSlug = "preview";

// A preview's "reader": {"country", "platform", "language"}, each optional.
std::optional<ReaderTraits> read_reader(const Json& reader, std::vector<FieldError>& errors) {
    ReaderTraits traits;
    if (!reader.is_object()) {
        errors.push_back({"reader", "must be an object with country, platform and language"});
        return std::nullopt;
    }
    for (const auto& [key, value] : reader.items()) {
        std::string text = value.is_string() ? value.get<std::string>() : std::string();
        if (key == "country" && country_code(text) != 0) {
            traits.country = country_code(text);
        } else if (key == "platform" && parse_platform(text)) {
            traits.platform = *parse_platform(text);
        } else if (key == "language" && valid_language_tag(text)) {
            continue;  // a view into `reader`, taken below
        } else {
            errors.push_back({"reader." + key, "is not a country code, platform or language tag"});
        }
    }
    if (auto it = reader.find("language"); it != reader.end() && it->is_string())
        traits.language = it->get_ref<const std::string&>();
    if (!errors.empty()) return std::nullopt;
    return traits;
}

// The branches of the link's rules that no reader gets because their partner is inactive, named
// as the link health names them ("rules[0]", "rules[1].split[0]").
Json skipped_branches(const Snapshot& snapshot, const LinkEntry& entry) {
    Json skipped = Json::array();
    for (std::uint32_t i = 0; i < entry.rule_count; ++i) {
        const TargetRule& rule = snapshot.rules()[entry.first_rule + i];
        for (std::uint16_t b = 0; b < rule.branch_count; ++b) {
            const TargetBranch& branch = snapshot.branches()[rule.first_branch + b];
            if (branch.partner_active) continue;
            std::string name = "rules[" + std::to_string(i) + "]";
            if (rule.split) name += ".split[" + std::to_string(b) + "]";
            skipped.push_back({{"branch", name},
                               {"partner", snapshot.partners()[branch.partner_index].slug},
                               {"reason", "partner_inactive"},
                               {"rule_skipped", rule.skipped}});
        }
    }
    return skipped;
}

// What the targeting rules give `reader` (when there is one): the snapshot's own evaluation over
// a one-link snapshot of the partners the link names and the stored country groups (a reader
// from AT gets the DE store when the family says AT -> DE), as a redirect would; and which of
// the rules' branches lead to an inactive partner, and so are never taken.
void preview_rules(AdminRows& rows, const Link& link, const std::optional<ReaderTraits>& reader,
                   const UrlPolicy& policy, SysSeconds now, Json& answer) {
    std::vector<Partner> partners;
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
    Snapshot::Builder builder(0, std::move(partners), policy, "preview", now, 1);
    std::vector<CountryGroup> groups;
    for (auto& row : rows.country_groups()) groups.push_back(std::move(row.group));
    builder.country_groups(std::move(groups));
    builder.add(Link(link));
    auto snapshot = builder.finish({});
    const LinkEntry* entry = snapshot->find(link.slug);
    if (entry == nullptr) return;
    if (Json skipped = skipped_branches(*snapshot, *entry); !skipped.empty())
        answer["skipped_branches"] = std::move(skipped);
    if (!reader || answer["location"].is_null() || answer["location"] != Json(entry->location))
        return;  // a disabled or expired link: its fallback, whatever the rules say
    Target target = snapshot->target(*entry, *reader, [] { return std::uint64_t{0}; });
    answer["location"] = *target.location;
    answer["rule"] = target.rule;
    if (target.rule == 0) return;
    const TargetRule& rule = snapshot->rules()[entry->first_rule + target.rule - 1];
    if (!rule.split) return;
    Json locations = Json::array();
    for (std::uint16_t b = 0; b < rule.branch_count; ++b) {
        const TargetBranch& branch = snapshot->branches()[rule.first_branch + b];
        if (branch.partner_active) locations.push_back(branch.location);
    }
    answer["split_locations"] = std::move(locations);
}

}  // namespace

const Clock& AdminService::clock() const {
    return options_.clock != nullptr ? *options_.clock : system_clock_;
}

Json AdminService::public_url(const std::string& slug) const {
    if (options_.public_base_url.empty()) return nullptr;
    return options_.public_base_url + "/go/" + slug;
}

Outcome AdminService::preview_link(const Json& body) {
    bool named = body.contains("slug");
    Json input = body;
    if (!named) input["slug"] = kPreviewSlug;
    Json reader_json;
    if (auto it = input.find("reader"); it != input.end()) {
        reader_json = *it;
        input.erase(it);
    }
    std::vector<FieldError> reader_errors;
    std::optional<ReaderTraits> reader;
    if (!reader_json.is_null()) reader = read_reader(reader_json, reader_errors);
    if (!reader_errors.empty()) return invalid(reader_errors);
    auto parsed = parse_import(Json{{"links", Json::array({input})}});
    if (!parsed.issues.empty()) return invalid(field_errors(parsed.issues));
    Link link = parsed.document.links.front();
    // A write transaction that is never committed: validation locks the partner's row.
    return write([&](AdminRows& rows) {
        if (auto errors = validate(rows, link); !errors.empty()) return invalid(errors);
        auto partner = rows.partner(link.partner, RowLock::none);
        auto now = std::chrono::floor<std::chrono::seconds>(clock().now());
        auto location = reader_location(link, partner->partner, now);
        Json answer{{"location", location ? Json(*location) : Json()},
                    {"public_url", named ? public_url(link.slug) : Json()}};
        if (reader || !link.rules.empty())
            preview_rules(rows, link, reader, options_.url_policy, now, answer);
        return object(OutcomeKind::ok, std::move(answer));
    });
}

Outcome AdminService::share_link(const std::string& slug) {
    return read([&](AdminRows& rows) {
        auto row = rows.link(slug, RowLock::none);
        if (!row) return simple(OutcomeKind::not_found, "no link '" + slug + "'");
        Json url = public_url(slug);
        if (url.is_null())
            return object(OutcomeKind::ok, Json{{"public_url", url}, {"html_snippet", nullptr}});
        auto partner = rows.partner(row->link.partner, RowLock::none);
        std::vector<Disclosure> current;
        for (auto& d : rows.disclosures()) current.push_back(std::move(d.disclosure));
        DisclosureSet set(std::move(current));
        const DisclosureEntry* entry =
            set.resolve(partner->partner.slug, {}, options_.default_locale);
        std::string snippet = link_snippet(url.get<std::string>(), partner->partner.name,
                                           entry != nullptr ? &entry->current->text : nullptr);
        return object(OutcomeKind::ok, Json{{"public_url", url}, {"html_snippet", snippet}});
    });
}

}  // namespace refgate::admin
