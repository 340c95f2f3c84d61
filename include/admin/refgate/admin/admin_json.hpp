#pragma once

// The admin API's objects: a partner and a link as refgate/codec/stored_objects.hpp shapes them
// (the import format's objects plus what the database adds), disclosures, tokens, users and
// audit entries. What editors send back is read by parse_import.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "refgate/admin/admin_rows.hpp"
#include "refgate/admin/console_rows.hpp"
#include "refgate/admin/console_service.hpp"
#include "refgate/codec/stored_objects.hpp"

namespace refgate::admin {

// "2026-11-29T16:00:00.123456Z" from microseconds since the epoch.
using refgate::codec::format_micros;

// {slug, name, ref_param, ref_code, allowed_domains, extra_params, active, scheduled_codes,
//  created_at, updated_at, version}
nlohmann::ordered_json partner_object(const PartnerRow& row);
// {slug, partner, destination, status, expires_at, fallback, utm_passthrough, created_at,
//  updated_at, version}
nlohmann::ordered_json link_object(const LinkRow& row);
// {name, role, created_at, last_used_on, revoked_at, version}
nlohmann::ordered_json view_json(const TokenView& view);
// The token's object and its text, "token".
nlohmann::ordered_json view_json(const CreatedToken& view);
// POST /tokens: {name, role}; any other member is refused.
NewToken parse_new_token(const nlohmann::ordered_json& body);
// {name, role, disabled, created_at, updated_at, last_sign_in_at, version}; never the hash
nlohmann::ordered_json view_json(const UserView& view);
// The user's object and, when the server made it, "password".
nlohmann::ordered_json view_json(const CreatedUser& view);
// POST /users: {name, role, password?}; PATCH /users/{name}: {role, disabled, password} (what
// GET answered may be sent back); PUT /session/password: {current, new}.
NewUser parse_new_user(const nlohmann::ordered_json& body);
UserPatch parse_user_patch(const std::string& name, const nlohmann::ordered_json& patch);
PasswordChange parse_password_change(const nlohmann::ordered_json& body);
// The rule a new password for the user `name` breaks, as a field error, or none.
std::optional<codec::FieldError> password_error(const std::string& password,
                                                const std::string& name, const char* field);
// {dry_run, applied, created, changed, unchanged, refused}
nlohmann::ordered_json view_json(const ImportReport& view);
// {id, at, actor, entity, slug, action, before, after}
nlohmann::ordered_json view_json(const AuditView& view);
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
