// The admin service's bulk routes (the import and the export: the same implementation as
// `refgate import` and `refgate export`) and a disclosure's history and preview.

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_diff.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

std::vector<codec::FieldError> refusal_errors(const std::vector<codec::ImportRefusal>& refused) {
    std::vector<codec::FieldError> errors;
    for (const auto& r : refused) {
        std::string where = r.entity + (r.slug.empty() ? "" : " " + r.slug);
        if (r.line) where += " (line " + std::to_string(*r.line) + ")";
        errors.push_back({r.field, where + ": " + r.message});
    }
    return errors;
}

}  // namespace

Result<ImportReport> AdminService::import_document(const Actor& actor,
                                                   const ImportRequest& request) {
    codec::ImportInput input = codec::read_import_text(request.text, request.csv);
    if (!input.document)
        return refused(OutcomeKind::bad_request, "the request body is not valid JSON");
    codec::ImportResult result;
    ImportReport report{.dry_run = request.dry_run};
    repository_->run(AdminRepository::Access::write, [&](AdminRows& rows) {
        result = rows.import_document(codec::parse_import(*input.document), options_.url_policy,
                                      actor.name);
        report.refused = codec::import_refusals(input, result.issues);
        report.applied = !request.dry_run && report.refused.empty();
        if (report.applied) rows.commit();  // otherwise the transaction rolls back
    });
    report.diff = std::move(result.diff);
    if (request.dry_run || report.applied) return answered(OutcomeKind::ok, std::move(report));
    Result<ImportReport> refusal = refused(refusal_errors(report.refused));
    refusal.view = std::move(report);
    return refusal;
}

Result<codec::ImportDocument> AdminService::export_document() {
    return read<Result<codec::ImportDocument>>(
        [&](AdminRows& rows) { return answered(OutcomeKind::ok, rows.export_document()); });
}

Result<codec::Page<codec::DisclosureVersionView>> AdminService::disclosure_versions(
    const std::string& key, const std::string& locale) {
    using Versions = Result<codec::Page<codec::DisclosureVersionView>>;
    return read<Versions>([&](AdminRows& rows) -> Versions {
        codec::Page<codec::DisclosureVersionView> page;
        for (const auto& row : rows.disclosure_versions(key, locale))
            page.items.push_back({row.disclosure, row.created_us, row.created_by});
        if (page.items.empty())
            return refused(OutcomeKind::not_found,
                           "no disclosure '" + key + "' for locale '" + locale + "'");
        return answered(OutcomeKind::ok, std::move(page));
    });
}

Result<codec::DisclosurePreviewView> AdminService::preview_disclosure(
    const codec::DisclosureInput& preview) {
    if (!preview.errors.empty()) return refused(preview.errors);
    domain::Disclosure d = preview.disclosure;
    d.version = 1;
    // Built as pages are answered: the set sanitises again and wraps the fragment.
    domain::DisclosureSet set(std::vector<domain::Disclosure>{d});
    const domain::DisclosureEntry* entry = set.find(d.key, d.locale);
    return answered(OutcomeKind::ok,
                    codec::DisclosurePreviewView{entry->current->html,
                                                 domain::disclosure_fragment(*entry->current)});
}

}  // namespace refgate::admin
