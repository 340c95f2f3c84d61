// The admin service's bulk routes (the import and the export: the same implementation as
// `refgate import` and `refgate export`) and a disclosure's history and preview.

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_diff.hpp"
#include "refgate/codec/links_csv.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

std::vector<FieldError> refusal_errors(const std::vector<ImportRefusal>& refused) {
    std::vector<FieldError> errors;
    for (const auto& r : refused) {
        std::string where = r.entity + (r.slug.empty() ? "" : " " + r.slug);
        if (r.line) where += " (line " + std::to_string(*r.line) + ")";
        errors.push_back({r.field, where + ": " + r.message});
    }
    return errors;
}

}  // namespace

Outcome AdminService::import_document(const Actor& actor, const ImportRequest& request) {
    ImportInput input = read_import_text(request.text, request.csv);
    if (!input.document)
        return simple(OutcomeKind::bad_request, "the request body is not valid JSON");
    ImportResult result;
    std::vector<ImportRefusal> refused;
    bool applied = false;
    write([&](AdminRows& rows) {
        result =
            rows.import_document(parse_import(*input.document), options_.url_policy, actor.name);
        refused = import_refusals(input, result.issues);
        applied = !request.dry_run && refused.empty();
        if (applied) rows.commit();  // otherwise the transaction rolls back
        return Outcome{};
    });
    Json body = import_result_json(result.diff, refused, request.dry_run, applied);
    if (request.dry_run || applied) return Outcome{.kind = OutcomeKind::ok, .body = body};
    Outcome o = invalid(refusal_errors(refused));
    o.body = std::move(body);
    return o;
}

Outcome AdminService::export_document(bool csv) {
    return read([&](AdminRows& rows) {
        ImportDocument data = rows.export_document();
        Json doc = refgate::export_document(data.partners, data.links, data.disclosures,
                                            data.country_groups);
        if (!csv) return Outcome{.kind = OutcomeKind::ok, .body = std::move(doc)};
        auto parsed = parse_import(Json{{"links", doc["links"]}});
        return Outcome{.kind = OutcomeKind::ok, .body = links_to_csv(parsed.document.links)};
    });
}

Outcome AdminService::disclosure_versions(const std::string& key, const std::string& locale) {
    return read([&](AdminRows& rows) {
        Json items = Json::array();
        for (const auto& row : rows.disclosure_versions(key, locale))
            items.push_back(disclosure_version_object(row));
        if (items.empty())
            return simple(OutcomeKind::not_found,
                          "no disclosure '" + key + "' for locale '" + locale + "'");
        return object(OutcomeKind::ok, collection(std::move(items)));
    });
}

Outcome AdminService::preview_disclosure(const Json& body) {
    Json input = body;
    if (!input.contains("key")) input["key"] = std::string(kGeneralDisclosure);
    if (!input.contains("locale")) input["locale"] = "en";
    auto parsed = parse_import(Json{{"disclosures", Json::array({input})}});
    if (!parsed.issues.empty()) return invalid(field_errors(parsed.issues));
    Disclosure d = parsed.document.disclosures.front();
    d.version = 1;
    // Built as pages are answered: the set sanitises again and wraps the fragment.
    DisclosureSet set(std::vector<Disclosure>{d});
    const DisclosureEntry* entry = set.find(d.key, d.locale);
    return Outcome{.kind = OutcomeKind::ok,
                   .body = Json{{"html", entry->current->html},
                                {"fragment", disclosure_fragment(*entry->current)}}};
}

}  // namespace refgate::admin
