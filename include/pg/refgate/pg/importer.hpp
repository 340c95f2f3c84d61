#pragma once

// The import inside a transaction the caller owns: the one implementation behind `refgate import`
// and the admin API's POST /api/v1/import.

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <string>

#include "refgate/codec/import_document.hpp"
#include "refgate/pg/database.hpp"

namespace refgate::pg {

// Locks partners, links and disclosures, validates the whole document against what is stored,
// computes the diff and, when nothing is refused, applies it with an audit entry per change.
// Never commits: the caller commits to apply, or rolls back (a dry run, a refused import).
ImportReport import_in(pqxx::transaction_base& tx, const nlohmann::ordered_json& doc,
                       const domain::UrlPolicy& policy, const std::string& actor);
// The same for a document parsed already: its parse issues are reported with the rest.
ImportReport import_in(pqxx::transaction_base& tx, const codec::ParsedImport& parsed,
                       const domain::UrlPolicy& policy, const std::string& actor);

// Every partner and link, the current version of every disclosure and the country groups.
codec::ImportDocument export_data_in(pqxx::transaction_base& tx);
// The same in the import format.
nlohmann::ordered_json export_in(pqxx::transaction_base& tx);

}  // namespace refgate::pg
