#pragma once

// The snapshot file: the import format plus ids and the version, written after every reload so an
// instance can start serving while PostgreSQL is away.

#include <functional>
#include <istream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "refgate/domain/snapshot.hpp"

namespace refgate::codec {

// The one writer and the one reader of the file.
// The file's JSON text, handed to `sink` in pieces of about 1 MiB: writing the file of 100,000
// links builds no document of them all.
void write_snapshot_json(const domain::Snapshot& snapshot,
                         const std::function<void(std::string_view)>& sink);
// The snapshot the file describes, without a document of the whole file: the links are scanned
// from the text straight into their entries; only the partners and disclosures go through
// nlohmann. Throws std::runtime_error (or nlohmann's parse_error) on a malformed file.
std::shared_ptr<const domain::Snapshot> read_snapshot_json(std::istream& in,
                                                           const domain::UrlPolicy& policy);
std::shared_ptr<const domain::Snapshot> read_snapshot_json(std::string_view text,
                                                           const domain::UrlPolicy& policy);

// The partners of the file's "partners" array (also what PostgreSQL's snapshot query returns).
std::vector<domain::Partner> partners_from_json(const nlohmann::ordered_json& array);

}  // namespace refgate::codec
