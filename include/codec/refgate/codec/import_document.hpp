#pragma once

// The editors' JSON format for partners and links (`refgate import`, `refgate export`), parsed and
// validated without touching a database, so every rule lives in one place.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refgate/codec/admin_objects.hpp"
#include "refgate/domain/destination.hpp"
#include "refgate/domain/disclosure.hpp"
#include "refgate/domain/model.hpp"

namespace refgate::codec {

struct ImportIssue {
    std::string entry;    // e.g. "links[2] (tailscale)"
    std::string field;    // e.g. "destination"
    std::string message;  // e.g. "must use https"

    std::string to_string() const;
};

struct ParsedImport {
    ImportDocument document;
    std::vector<ImportIssue> issues;
};

// Checks shape, types, unknown fields, slugs, parameter names and domains. Partners come back
// with canonical allowed domains.
ParsedImport parse_import(const nlohmann::ordered_json& doc);

// The admin API's commands, read by the import's rules with the import's messages (the field
// errors carry no entry name). A partner or link object, as POST sends it:
NewPartner parse_new_partner(const nlohmann::ordered_json& object);
NewLink parse_new_link(const nlohmann::ordered_json& object);
// A JSON merge patch of a partner: its fields; or "valid_from" with "ref_code", a code schedule;
// "scheduled_codes" is read-only. Errors found here come first in PatchedPartner::errors.
PartnerPatch parse_partner_patch(const nlohmann::ordered_json& patch);
LinkPatch parse_link_patch(const nlohmann::ordered_json& patch);
// A link object whose slug is optional, with an optional "reader" (its errors alone, first).
LinkPreview parse_link_preview(const nlohmann::ordered_json& body);

// {fallbacks} (a "family" the body names must be the path's), read as the import reads
// "country_groups".
CountryGroupPut parse_country_group_put(const std::string& family,
                                        const nlohmann::ordered_json& body);
// What GET answered may be sent back: its read-only fields are ignored, key and locale must name
// the path's (the locale normalised); the rest is read as the import reads "disclosures".
DisclosureInput parse_disclosure_put(const std::string& key, const std::string& locale,
                                     const nlohmann::ordered_json& body);
// {text, html?, key?, locale?}: the key "general" and the locale "en" unless given.
DisclosureInput parse_disclosure_preview(const nlohmann::ordered_json& body);

// The import format's objects, with keys in the documented order.
nlohmann::ordered_json partner_to_json(const domain::Partner& partner);
nlohmann::ordered_json link_to_json(const domain::Link& link);
nlohmann::ordered_json rule_to_json(const domain::LinkRule& rule);
// The inverse of partner_to_json for what refgate wrote itself (the snapshot file): no rules
// checked, a member absent from older files is the field's default; throws on a wrong type.
domain::Partner partner_from_json(const nlohmann::ordered_json& object);
// A link's "rules" and the document's "country_groups" as stored (PostgreSQL, the snapshot file):
// the import format's shape; throw std::runtime_error naming the first problem.
std::vector<domain::LinkRule> rules_from_json(const nlohmann::ordered_json& rules);
std::vector<domain::CountryGroup> country_groups_from_json(const nlohmann::ordered_json& groups);
nlohmann::ordered_json country_group_to_json(const domain::CountryGroup& group);

// Finds the partner a link refers to: from the document or already stored.
using PartnerLookup = std::function<const domain::Partner*(const std::string& slug)>;

// Validates each link's destination and fallback against its partner's allowed domains and
// replaces them by their canonical form. Returns the issues found.
std::vector<ImportIssue> validate_links(std::vector<domain::Link>& links,
                                        const PartnerLookup& partners,
                                        const domain::UrlPolicy& policy,
                                        const std::string& what = "links");

nlohmann::ordered_json export_document(const std::vector<domain::Partner>& partners,
                                       const std::vector<domain::Link>& links,
                                       const std::vector<domain::Disclosure>& disclosures = {},
                                       const std::vector<domain::CountryGroup>& country_groups = {},
                                       const std::vector<domain::Domain>& domains = {});

}  // namespace refgate::codec
