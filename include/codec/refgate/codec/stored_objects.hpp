#pragma once

// A partner and a link as stored: the import format's object (import_document.hpp) plus what the
// database adds (scheduled codes, times, version). The one definition of these shapes: the admin
// API answers with them, and the audit trail records them, whether the API, `refgate import` or
// the console's import made the change.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "refgate/domain/model.hpp"

namespace refgate {

// When a row was written and which version it is (ETag and If-Match).
struct Stamps {
    std::int64_t created_us = 0;  // microseconds since the epoch, UTC
    std::int64_t updated_us = 0;
    std::int64_t version = 0;
};

// "2026-11-29T16:00:00.123456Z" from microseconds since the epoch.
std::string format_micros(std::int64_t unix_micros);

// {slug, name, ref_param, ref_code, allowed_domains, extra_params, active, scheduled_codes,
//  created_at, updated_at, version}
nlohmann::ordered_json stored_partner_object(const Partner& partner, const Stamps& stamps);
// {slug, partner, destination, status, expires_at, fallback, utm_passthrough, rules (when any),
//  created_at, updated_at, version}
nlohmann::ordered_json stored_link_object(const Link& link, const Stamps& stamps);

}  // namespace refgate
