#pragma once

// The import format's targeting objects: a link's "rules" and the document's "country_groups".

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refgate/codec/import_document.hpp"
#include "refgate/domain/model.hpp"

namespace refgate::codec {

// Reports a problem with a field of the entry being read.
using IssueSink = std::function<void(const std::string& field, const std::string& message)>;

// Reads a link's "rules" (shape and types; values are checked by validate_rules()).
void read_rules(const nlohmann::ordered_json& rules, std::vector<domain::LinkRule>& out,
                const IssueSink& add);
// Reads "country_groups": [{"family", "fallbacks": {"AT": "DE"}}], values checked.
void read_country_groups(const nlohmann::ordered_json& groups,
                         std::vector<domain::CountryGroup>& out, std::vector<ImportIssue>& issues);

}  // namespace refgate::codec
