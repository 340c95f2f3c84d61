// The admin service's bulk routes (the import and the export: the same implementation as
// `refgate import` and `refgate export`) and a disclosure's history and preview.

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_diff.hpp"

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

Result<ImportReport> AdminService::import_document(const Actor& actor,
                                                   const ImportRequest& request) {
    ImportInput input = read_import_text(request.text, request.csv);
    if (!input.document)
        return refused(OutcomeKind::bad_request, "the request body is not valid JSON");
    ImportResult result;
    ImportReport report{.dry_run = request.dry_run};
    repository_->run(AdminRepository::Access::write, [&](AdminRows& rows) {
        result =
            rows.import_document(parse_import(*input.document), options_.url_policy, actor.name);
        report.refused = import_refusals(input, result.issues);
        report.applied = !request.dry_run && report.refused.empty();
        if (report.applied) rows.commit();  // otherwise the transaction rolls back
    });
    report.diff = std::move(result.diff);
    if (request.dry_run || report.applied) return answered(OutcomeKind::ok, std::move(report));
    Result<ImportReport> refusal = refused(refusal_errors(report.refused));
    refusal.view = std::move(report);
    return refusal;
}

Result<ImportDocument> AdminService::export_document() {
    return read<Result<ImportDocument>>(
        [&](AdminRows& rows) { return answered(OutcomeKind::ok, rows.export_document()); });
}

Result<Page<DisclosureVersionView>> AdminService::disclosure_versions(const std::string& key,
                                                                      const std::string& locale) {
    using Versions = Result<Page<DisclosureVersionView>>;
    return read<Versions>([&](AdminRows& rows) -> Versions {
        Page<DisclosureVersionView> page;
        for (const auto& row : rows.disclosure_versions(key, locale))
            page.items.push_back({row.disclosure, row.created_us, row.created_by});
        if (page.items.empty())
            return refused(OutcomeKind::not_found,
                           "no disclosure '" + key + "' for locale '" + locale + "'");
        return answered(OutcomeKind::ok, std::move(page));
    });
}

Result<DisclosurePreviewView> AdminService::preview_disclosure(const DisclosureInput& preview) {
    if (!preview.errors.empty()) return refused(preview.errors);
    Disclosure d = preview.disclosure;
    d.version = 1;
    // Built as pages are answered: the set sanitises again and wraps the fragment.
    DisclosureSet set(std::vector<Disclosure>{d});
    const DisclosureEntry* entry = set.find(d.key, d.locale);
    return answered(OutcomeKind::ok, DisclosurePreviewView{entry->current->html,
                                                           disclosure_fragment(*entry->current)});
}

}  // namespace refgate::admin
