#include "pg/snapshot_reader.hpp"

#include "refgate/core/snapshot.hpp"

namespace refgate::pg {
namespace {

// Built as json (not jsonb) so that extra parameters keep the order editors gave them.
constexpr const char* kSelectPartners = R"sql(
SELECT coalesce(json_agg(json_build_object(
    'id', p.id, 'slug', p.slug, 'name', p.name, 'ref_param', p.ref_param, 'ref_code', p.ref_code,
    'allowed_domains', p.allowed_domains,
    'extra_params', (SELECT coalesce(json_object_agg(e.pair->>0, e.pair->>1 ORDER BY e.ord), '{}'::json)
                     FROM jsonb_array_elements(p.extra_params) WITH ORDINALITY AS e(pair, ord)),
    'active', p.active,
    'scheduled_codes', (SELECT coalesce(json_agg(json_build_object(
                            'ref_code', s.ref_code,
                            'valid_from', to_char(s.valid_from AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
                            ORDER BY s.valid_from), '[]'::json)
                        FROM refgate_code_schedule s WHERE s.partner_id = p.id)) ORDER BY p.id), '[]'::json)::text
FROM refgate_partners p
)sql";

constexpr const char* kSelectLinks = R"sql(
SELECT coalesce(json_agg(json_build_object(
    'id', l.id, 'slug', l.slug, 'partner', p.slug, 'destination', l.destination, 'status', l.status,
    'expires_at', to_char(l.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    'fallback', l.fallback, 'utm_passthrough', l.utm_passthrough) ORDER BY l.id), '[]'::json)::text
FROM refgate_links l JOIN refgate_partners p ON p.id = l.partner_id
)sql";

constexpr const char* kSelectDisclosures = R"sql(
SELECT coalesce(json_agg(json_build_object(
    'key', d.key, 'locale', d.locale, 'version', d.version, 'text', d.text, 'html', d.html,
    'html_given', d.html_given,
    'updated_at', to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
    ORDER BY d.key, d.locale, d.version), '[]'::json)::text
FROM refgate_disclosures d
)sql";

}  // namespace

std::uint64_t read_version(pqxx::transaction_base& tx) {
    return tx.exec("SELECT version FROM refgate_snapshot_version")[0][0].as<std::uint64_t>();
}

StoredData read_all(pqxx::transaction_base& tx) {
    StoredData data;
    data.version = read_version(tx);
    data.partners =
        partners_from_json(nlohmann::ordered_json::parse(tx.exec(kSelectPartners)[0][0].c_str()));
    data.links =
        links_from_json(nlohmann::ordered_json::parse(tx.exec(kSelectLinks)[0][0].c_str()));
    data.disclosures = disclosures_from_json(
        nlohmann::ordered_json::parse(tx.exec(kSelectDisclosures)[0][0].c_str()));
    return data;
}

}  // namespace refgate::pg
