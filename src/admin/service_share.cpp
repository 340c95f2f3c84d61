// What editors see of a link before and after they save it: the Location a reader gets, the
// public URL and the snippet, from the code paths the redirect and /snippet/ use.

#include <chrono>

#include "outcomes.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/reader_location.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

// A slug for a preview whose body names none; it is never shown.
constexpr const char* kPreviewSlug = "preview";

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
