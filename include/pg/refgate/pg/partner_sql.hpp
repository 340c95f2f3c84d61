#pragma once

// The members of a partner row `p` as JSON, shared by the snapshot reader and the admin API so
// that both read extra parameters and scheduled codes the same way. Built as json (not jsonb) so
// that extra parameters keep the order editors gave them.

#include <string>

namespace refgate::pg {

inline constexpr const char* kPartnerMembersJson = R"sql(
    'slug', p.slug, 'name', p.name, 'ref_param', p.ref_param, 'ref_code', p.ref_code,
    'allowed_domains', p.allowed_domains,
    'extra_params', (SELECT coalesce(json_object_agg(e.pair->>0, e.pair->>1 ORDER BY e.ord), '{}'::json)
                     FROM jsonb_array_elements(p.extra_params) WITH ORDINALITY AS e(pair, ord)),
    'active', p.active,
    'scheduled_codes', (SELECT coalesce(json_agg(json_build_object(
        'ref_code', s.ref_code,
        'valid_from', to_char(s.valid_from AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
        ORDER BY s.valid_from), '[]'::json)
        FROM refgate_code_schedule s WHERE s.partner_id = p.id))sql";

// A partner row `p` as the admin API answers it and the audit trail records it.
inline const std::string kPartnerObjectJson =
    std::string("json_build_object(") + kPartnerMembersJson + R"sql(,
    'created_at', to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'updated_at', to_char(p.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'version', p.version))sql";

// A link row `l` with its partner row `p`, the same way.
inline constexpr const char* kLinkObjectJson = R"sql(json_build_object(
    'slug', l.slug, 'partner', p.slug, 'destination', l.destination, 'status', l.status,
    'expires_at', to_char(l.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    'fallback', l.fallback, 'utm_passthrough', l.utm_passthrough, 'rules', l.rules,
    'created_at', to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'updated_at', to_char(l.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'version', l.version))sql";

}  // namespace refgate::pg
