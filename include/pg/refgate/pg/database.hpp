#pragma once

// What the rest of the program may ask of PostgreSQL, without seeing libpqxx.

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "refgate/codec/import_diff.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/destination.hpp"
#include "refgate/domain/snapshot.hpp"

namespace refgate::pg {

// PostgreSQL could not be reached or refused a statement.
class DatabaseError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Applies every migration not yet recorded, each in its own transaction, under an advisory lock
// so that two instances can run it at once, then builds the click counts' roll-ups that are not
// built yet (rollups.hpp), a short batch per transaction. Returns the names it applied.
std::vector<std::string> migrate(const std::string& database_url);

struct ImportReport {
    std::vector<codec::ImportIssue> issues;  // nothing was applied when not empty
    codec::ImportDiff diff;                  // what the document changes, entity by entity
    bool applied = false;                    // committed: no issue, and not a dry run
    std::size_t partners_changed = 0;
    std::size_t links_changed = 0;
    std::size_t disclosures_changed = 0;  // new versions stored
};

// Validates the whole document against what is stored and applies it in one transaction, or
// applies nothing. Each partner, link and disclosure it changes gets an audit entry naming
// `actor` (e.g. "cli:alice"), with the object before and after; unchanged ones get none. A dry
// run does all of it and rolls the transaction back.
ImportReport import_document(const std::string& database_url, const nlohmann::ordered_json& doc,
                             const domain::UrlPolicy& policy, const std::string& actor = "cli",
                             bool dry_run = false);

// One consistent read of every partner and link, built into a snapshot (the links a redirect
// would serve right now). Throws DatabaseError.
std::shared_ptr<const domain::Snapshot> load_snapshot(const std::string& database_url,
                                                      const domain::UrlPolicy& policy);

// Every partner and link, and the current version of every disclosure, in the import format.
nlohmann::ordered_json export_document(const std::string& database_url);

}  // namespace refgate::pg
