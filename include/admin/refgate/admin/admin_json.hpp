#pragma once

// The admin API's objects: a partner and a link as refgate/codec/stored_objects.hpp shapes them
// (the import format's objects plus what the database adds), disclosures, tokens, users and
// audit entries. What editors send back is read by parse_import.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "refgate/admin/admin_rows.hpp"
#include "refgate/admin/console_rows.hpp"
#include "refgate/codec/stored_objects.hpp"

namespace refgate::admin {

// "2026-11-29T16:00:00.123456Z" from microseconds since the epoch.
using refgate::format_micros;

// {slug, name, ref_param, ref_code, allowed_domains, extra_params, active, scheduled_codes,
//  created_at, updated_at, version}
nlohmann::ordered_json partner_object(const PartnerRow& row);
// {slug, partner, destination, status, expires_at, fallback, utm_passthrough, created_at,
//  updated_at, version}
nlohmann::ordered_json link_object(const LinkRow& row);
// {key, locale, text, html, html_given, version, updated_at, updated_by}
nlohmann::ordered_json disclosure_object(const DisclosureRow& row);
// {version, text, html, created_at, created_by}: one version in a disclosure's history
nlohmann::ordered_json disclosure_version_object(const DisclosureRow& row);
// {family, fallbacks: {"AT": "DE"}, updated_at, version}
nlohmann::ordered_json country_group_object(const CountryGroupRow& row);
// {name, role, created_at, last_used_on, revoked_at, version}
nlohmann::ordered_json token_object(const TokenRow& row);
// {name, role, disabled, created_at, updated_at, last_sign_in_at, version}; never the hash
nlohmann::ordered_json user_object(const UserRow& row);
// {id, at, actor, entity, slug, action, before, after}
nlohmann::ordered_json audit_object(const AuditRow& row);
// The audit entry of a change: `before` and `after` as objects of this file (null: none).
AuditRecord audit_record(std::string actor, std::string entity, std::string slug,
                         std::string action, const nlohmann::ordered_json& before,
                         const nlohmann::ordered_json& after);

// The import-format part of an object: what an editor may send back in a PATCH.
nlohmann::ordered_json writable(nlohmann::ordered_json object);

// {"items": [...], "next_cursor": cursor}
nlohmann::ordered_json collection(nlohmann::ordered_json items,
                                  nlohmann::ordered_json next_cursor = nullptr);

}  // namespace refgate::admin
