#pragma once

// What an import would do, entity by entity: created, changed (before and after, in the import
// format), unchanged, and every refusal with its field and reason. The same for a dry run and an
// applied import, and for the CLI and the admin API.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/codec/import_document.hpp"

namespace refgate::codec {

struct ImportChange {
    std::string entity;             // "partner", "link", "disclosure"
    std::string slug;               // a disclosure's is "key/locale"
    nlohmann::ordered_json before;  // null for a created one
    nlohmann::ordered_json after;
};

struct ImportDiff {
    std::vector<ImportChange> created;
    std::vector<ImportChange> changed;
    std::size_t unchanged = 0;
};

// What is stored now: every partner and link, the current version of each disclosure.
struct StoredEntities {
    const std::vector<domain::Partner>& partners;
    const std::vector<domain::Link>& links;
    const std::vector<domain::Disclosure>& disclosures;
};

// `incoming` as parse_import and validate_links left it (canonical), against what is stored.
ImportDiff diff_import(const ImportDocument& incoming, const StoredEntities& stored);

// An import as a transaction left it: applied when the caller commits and `issues` is empty.
struct ImportResult {
    std::vector<ImportIssue> issues;
    ImportDiff diff;
};

struct ImportRefusal {
    std::string entity;  // "partner", "link", "disclosure", or "document"
    std::string slug;    // "" when the entry has none
    std::string field;
    std::string message;
    std::optional<std::size_t> line;  // of a CSV file
};

// The refusal an issue of parse_import or validate_links states; `csv_lines[i]` is the line of
// links[i] when the document came from CSV.
ImportRefusal refusal_of(const ImportIssue& issue, const std::vector<std::size_t>& csv_lines = {});

// An import file's text, the import document (JSON) or links (CSV), ready for the import.
struct ImportInput {
    std::optional<nlohmann::ordered_json> document;  // nullopt: the text is not valid JSON
    std::string json_error;                          // why, then
    std::vector<ImportRefusal> refused;              // a CSV file's wrong header or broken rows
    std::vector<std::size_t> csv_lines;              // the line of each CSV link
};
ImportInput read_import_text(std::string_view text, bool csv);

// Every refusal of an import: the input's own, then one per issue of the import.
std::vector<ImportRefusal> import_refusals(const ImportInput& input,
                                           const std::vector<ImportIssue>& issues);

// {"dry_run", "applied", "created", "changed", "unchanged", "refused"}
nlohmann::ordered_json import_result_json(const ImportDiff& diff,
                                          const std::vector<ImportRefusal>& refused, bool dry_run,
                                          bool applied);

// The diff as lines for a terminal: "+ link x", "~ partner y" with each changed field, and
// "! link z: destination must use https".
std::string import_result_text(const ImportDiff& diff, const std::vector<ImportRefusal>& refused);

}  // namespace refgate::codec
