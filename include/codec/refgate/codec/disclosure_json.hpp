#pragma once

// Disclosure versions as JSON: the import document's form and the snapshot file's.

#include <nlohmann/json.hpp>
#include <vector>

#include "refgate/domain/disclosure.hpp"

namespace refgate::codec {

// The import-format object of a version: key, locale, text and (when the editor gave it) html.
nlohmann::ordered_json disclosure_to_json(const domain::Disclosure& disclosure);
// All versions as the snapshot file keeps them. Throws std::runtime_error when malformed.
nlohmann::ordered_json disclosures_to_json(const std::vector<domain::Disclosure>& versions);
std::vector<domain::Disclosure> disclosures_from_json(const nlohmann::ordered_json& array);

}  // namespace refgate::codec
