#include "refgate/pg/importer.hpp"

#include <map>
#include <set>

#include "refgate/codec/import_diff.hpp"
#include "refgate/domain/placement.hpp"
#include "refgate/pg/array_text.hpp"
#include "refgate/pg/connection.hpp"
#include "refgate/pg/database.hpp"
#include "refgate/pg/stored_rows.hpp"
#include "snapshot_reader.hpp"

namespace refgate::pg {
namespace {

// One row per partner or link for jsonb_to_recordset: the whole import is one statement per
// table, so the change trigger (one version bump each) fires twice, not once per row.
std::string partner_rows(const std::vector<domain::Partner>& partners) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& p : partners) rows.push_back(partner_record(p));
    return rows.dump();
}

std::string link_rows(const std::vector<domain::Link>& links) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& l : links) rows.push_back(link_record(l));
    return rows.dump();
}

// Audit rows for an import, one per changed partner or link, with the objects as the admin API
// shows them and records them (refgate/codec/stored_objects.hpp): [{slug, action, before,
// after}] in the order given.
constexpr const char* kInsertAudit = R"sql(
INSERT INTO refgate_audit (actor, entity, slug, action, before, after)
SELECT $1, $2, r.slug, r.action, r.before, r.after
FROM ROWS FROM (jsonb_to_recordset($3::jsonb) AS (slug text, action text, before jsonb, after jsonb))
     WITH ORDINALITY AS r(slug, action, before, after, ord)
ORDER BY r.ord
)sql";

// The ids a RETURNING id gave, as a bigint[] parameter.
std::string id_array(const pqxx::result& rows) {
    std::vector<std::int64_t> ids;
    for (const auto& row : rows) ids.push_back(row["id"].as<std::int64_t>());
    return bigint_array(ids);
}

using Objects = std::vector<std::pair<std::string, nlohmann::ordered_json>>;  // by slug

// Upserts `entities` (as `rows`, with `upsert`) and audits each one that really changed, with its
// object before and after as `objects` reads them (those that match the condition, by slug);
// returns how many changed.
template <typename Entity, typename Read>
std::size_t upsert_audited(pqxx::transaction_base& tx, const std::string& actor, const char* entity,
                           const std::vector<Entity>& entities, const char* upsert,
                           const std::string& rows, Read&& objects) {
    std::vector<std::string> slugs;  // a link's slug on any domain; `objects` keys them
    for (const auto& e : entities) slugs.push_back(e.slug);
    std::map<std::string, nlohmann::ordered_json> before;
    for (auto& [slug, object] : objects("slug = ANY($1::text[])", text_array(slugs)))
        before[slug] = std::move(object);
    auto changed = tx.exec_params(upsert, rows);
    if (changed.empty()) return 0;
    nlohmann::ordered_json audit = nlohmann::ordered_json::array();
    for (auto& [slug, object] : objects("id = ANY($1::bigint[])", id_array(changed))) {
        auto it = before.find(slug);
        bool created = it == before.end();
        audit.push_back({{"slug", slug},
                         {"action", created ? "create" : "update"},
                         {"before", created ? nlohmann::ordered_json() : std::move(it->second)},
                         {"after", std::move(object)}});
    }
    tx.exec_params(kInsertAudit, actor, entity, audit.dump());
    return changed.size();
}

std::size_t upsert_partners(pqxx::transaction_base& tx, const std::string& actor,
                            const std::vector<domain::Partner>& partners) {
    auto objects = [&tx](const std::string& condition, const std::string& values) {
        Objects out;
        for (const auto& s : read_partners(tx, "WHERE p." + condition + " ORDER BY p.slug", values))
            out.emplace_back(s.partner.slug, codec::stored_partner_object(s.partner, s.stamps));
        return out;
    };
    return upsert_audited(tx, actor, "partner", partners,
                          partner_write_sql(RowWrite::upsert).c_str(), partner_rows(partners),
                          objects);
}

std::size_t upsert_links(pqxx::transaction_base& tx, const std::string& actor,
                         const std::vector<domain::Link>& links) {
    auto objects = [&tx](const std::string& condition, const std::string& values) {
        Objects out;
        for (const auto& s : read_links(tx, "WHERE l." + condition + " ORDER BY l.slug", values))
            out.emplace_back(domain::link_key(s.link), codec::stored_link_object(s.link, s.stamps));
        return out;
    };
    return upsert_audited(tx, actor, "link", links, link_write_sql(RowWrite::upsert).c_str(),
                          link_rows(links), objects);
}

std::string disclosure_rows(const std::vector<domain::Disclosure>& disclosures) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& d : disclosures) {
        rows.push_back({{"key", d.key},
                        {"locale", d.locale},
                        {"text", d.text},
                        {"html", d.html},
                        {"html_given", d.html_given}});
    }
    return rows.dump();
}

// A disclosure that differs from its current version becomes a new version (the table is
// append-only); an unchanged one adds nothing. Each new version is audited like an API write.
constexpr const char* kInsertDisclosures = R"sql(
WITH r AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb)
        AS r(key text, locale text, text text, html text, html_given boolean)
), cur AS (
    SELECT DISTINCT ON (key, locale) key, locale, version, text, html, html_given
    FROM refgate_disclosures ORDER BY key, locale, version DESC
), ins AS (
    INSERT INTO refgate_disclosures (key, locale, version, text, html, html_given, created_by)
    SELECT r.key, r.locale, coalesce(c.version, 0) + 1, r.text, r.html, r.html_given, $2
    FROM r LEFT JOIN cur c ON c.key = r.key AND c.locale = r.locale
    WHERE c.version IS NULL
       OR (c.text, c.html, c.html_given) IS DISTINCT FROM (r.text, r.html, r.html_given)
    RETURNING key, locale, version, text, html, html_given
)
INSERT INTO refgate_audit (actor, entity, slug, action, before, after)
SELECT $2, 'disclosure', ins.key || '/' || ins.locale,
       CASE WHEN ins.version = 1 THEN 'create' ELSE 'update' END, NULL,
       jsonb_build_object('key', ins.key, 'locale', ins.locale, 'version', ins.version,
                          'text', ins.text, 'html', ins.html, 'html_given', ins.html_given)
FROM ins
RETURNING id
)sql";

// The highest version of each (key, locale); `versions` is sorted by key, locale, version.
std::vector<domain::Disclosure> current_disclosures(
    const std::vector<domain::Disclosure>& versions) {
    std::vector<domain::Disclosure> current;
    for (std::size_t i = 0; i < versions.size(); ++i) {
        bool last = i + 1 == versions.size() || versions[i + 1].key != versions[i].key ||
                    versions[i + 1].locale != versions[i].locale;
        if (last) current.push_back(versions[i]);
    }
    return current;
}

// A group in the document replaces the stored one of its family; other families stay. A change
// is audited as the admin API's PUT /api/v1/country-groups/{family} is (the trigger of migration
// 012 bumps the version).
constexpr const char* kUpsertCountryGroup = R"sql(
WITH b AS (
    SELECT fallbacks, version FROM refgate_country_groups WHERE family = $1
), up AS (
    INSERT INTO refgate_country_groups (family, fallbacks) VALUES ($1, $2::jsonb)
    ON CONFLICT (family) DO UPDATE SET fallbacks = EXCLUDED.fallbacks
    WHERE refgate_country_groups.fallbacks IS DISTINCT FROM EXCLUDED.fallbacks
    RETURNING family, fallbacks, version
)
INSERT INTO refgate_audit (actor, entity, slug, action, before, after)
SELECT $3, 'country_group', up.family, CASE WHEN b.version IS NULL THEN 'create' ELSE 'update' END,
       CASE WHEN b.version IS NOT NULL THEN
           jsonb_build_object('family', up.family, 'fallbacks', b.fallbacks, 'version', b.version)
       END,
       jsonb_build_object('family', up.family, 'fallbacks', up.fallbacks, 'version', up.version)
FROM up LEFT JOIN b ON true
)sql";

void upsert_country_groups(pqxx::transaction_base& tx,
                           const std::vector<domain::CountryGroup>& groups,
                           const std::string& actor) {
    for (const auto& g : groups)
        tx.exec_params(kUpsertCountryGroup, g.family,
                       codec::country_group_to_json(g)["fallbacks"].dump(), actor);
}

// Issue 46: a document's domain replaces the stored one of its host (others stay); the default
// moves when the document names another one. Audited as PUT /api/v1/domains/{host} is.
constexpr const char* kUpsertDomain = R"sql(
WITH b AS (
    SELECT host, is_default, not_found, version FROM refgate_domains WHERE host = $1
), up AS (
    INSERT INTO refgate_domains AS t (host, is_default, not_found) VALUES ($1, $2, NULLIF($3, ''))
    ON CONFLICT (host) DO UPDATE SET is_default = EXCLUDED.is_default,
        not_found = EXCLUDED.not_found, updated_at = now(), version = t.version + 1
    WHERE (t.is_default, t.not_found) IS DISTINCT FROM (EXCLUDED.is_default, EXCLUDED.not_found)
    RETURNING host, is_default, not_found, version
)
INSERT INTO refgate_audit (actor, entity, slug, action, before, after)
SELECT $4, 'domain', up.host, CASE WHEN b.version IS NULL THEN 'create' ELSE 'update' END,
       CASE WHEN b.version IS NOT NULL THEN
           jsonb_build_object('host', b.host, 'default', b.is_default, 'not_found', b.not_found,
                              'version', b.version)
       END,
       jsonb_build_object('host', up.host, 'default', up.is_default, 'not_found', up.not_found,
                          'version', up.version)
FROM up LEFT JOIN b ON true
)sql";

void upsert_domains(pqxx::transaction_base& tx, const std::vector<domain::Domain>& domains,
                    const std::string& actor) {
    // The one-default index is checked row by row: the old default steps down first.
    for (const auto& d : domains) {
        if (!d.is_default) continue;
        tx.exec_params(
            "UPDATE refgate_domains SET is_default = false, updated_at = now(), "
            "version = version + 1 WHERE is_default AND host <> $1",
            d.host);
    }
    for (const auto& d : domains)
        tx.exec_params(kUpsertDomain, d.host, d.is_default, d.not_found, actor);
}

// The domains as they will be, and the document's links against them: a link names a domain
// that exists (a link naming the default domain's host is stored on the default domain).
std::vector<codec::ImportIssue> check_domains(const StoredData& stored,
                                              codec::ImportDocument& incoming) {
    std::map<std::string, domain::Domain> domains;
    for (const auto& d : stored.domains) domains[d.host] = d;
    bool new_default = false;
    for (const auto& d : incoming.domains) new_default = new_default || d.is_default;
    if (new_default) {
        for (auto& [host, d] : domains) d.is_default = false;
    }
    for (const auto& d : incoming.domains) domains[d.host] = d;
    std::vector<codec::ImportIssue> issues;
    std::string default_host;
    for (const auto& [host, d] : domains) {
        if (d.is_default) default_host = host;
    }
    if (!domains.empty() && default_host.empty())
        issues.push_back({"document", "domains", "exactly one domain must be the default"});
    for (std::size_t i = 0; i < incoming.links.size(); ++i) {
        domain::Link& l = incoming.links[i];
        if (l.domain.empty()) continue;
        if (l.domain == default_host) {
            l.domain.clear();
        } else if (!domains.contains(l.domain)) {
            issues.push_back({"links[" + std::to_string(i) + "] (" + l.slug + ")", "domain",
                              "'" + l.domain + "' is not a domain (see \"domains\")"});
        }
    }
    return issues;
}

// The links of the document against the partners they will have, and the stored links of each
// changed partner against its (possibly narrowed) domains. Canonicalises the document's links.
std::vector<codec::ImportIssue> validate_against(const StoredData& stored,
                                                 codec::ImportDocument& incoming,
                                                 const domain::UrlPolicy& policy) {
    std::map<std::string, domain::Partner> partners;
    for (const auto& p : stored.partners) partners[p.slug] = p;
    std::set<std::string> changed_partners;
    for (const auto& p : incoming.partners) {
        partners[p.slug] = p;
        changed_partners.insert(p.slug);
    }
    auto lookup = [&partners](const std::string& slug) -> const domain::Partner* {
        auto it = partners.find(slug);
        return it == partners.end() ? nullptr : &it->second;
    };
    auto issues = codec::validate_links(incoming.links, lookup, policy);
    std::set<std::string> incoming_links;
    for (const auto& l : incoming.links) incoming_links.insert(domain::link_key(l));
    std::vector<domain::Link> affected;
    for (const auto& l : stored.links) {
        if (incoming_links.count(domain::link_key(l)) != 0) continue;
        bool uses_changed = changed_partners.count(l.partner) != 0;
        for (const auto& rule : l.rules) {
            uses_changed = uses_changed || changed_partners.count(rule.partner) != 0;
            for (const auto& b : rule.split)
                uses_changed = uses_changed || changed_partners.count(b.partner) != 0;
        }
        if (uses_changed) affected.push_back(l);
    }
    auto more = codec::validate_links(affected, lookup, policy, "stored links");
    issues.insert(issues.end(), more.begin(), more.end());
    // Readable placement tokens: over every link as it will be, per partner that writes them.
    std::vector<domain::Link> all = incoming.links;
    for (const auto& l : stored.links) {
        if (incoming_links.count(domain::link_key(l)) == 0) all.push_back(l);
    }
    for (const auto& [slug, partner] : partners) {
        if (auto problem = domain::readable_token_problem(partner, all))
            issues.push_back({"partners (" + slug + ")", "subid_style", *problem});
    }
    return issues;
}

}  // namespace

ImportReport import_in(pqxx::transaction_base& tx, const nlohmann::ordered_json& doc,
                       const domain::UrlPolicy& policy, const std::string& actor) {
    return import_in(tx, codec::parse_import(doc), policy, actor);
}

ImportReport import_in(pqxx::transaction_base& tx, const codec::ParsedImport& parsed,
                       const domain::UrlPolicy& policy, const std::string& actor) {
    ImportReport report;
    // Structural problems and link problems are reported together, so that an editor sees every
    // bad entry of a file at once.
    report.issues = parsed.issues;
    codec::ImportDocument incoming = parsed.document;  // the links are canonicalised in place
    // Editors' other writes wait until this import has been validated and applied whole.
    tx.exec(
        "LOCK TABLE refgate_partners, refgate_links, refgate_disclosures, refgate_country_groups, "
        "refgate_domains IN SHARE ROW EXCLUSIVE MODE");
    StoredData stored = read_all(tx);
    auto more = check_domains(stored, incoming);
    report.issues.insert(report.issues.end(), more.begin(), more.end());
    more = validate_against(stored, incoming, policy);
    report.issues.insert(report.issues.end(), more.begin(), more.end());
    auto disclosures = current_disclosures(stored.disclosures);
    report.diff = codec::diff_import(incoming, {stored.partners, stored.links, disclosures});
    if (!report.issues.empty()) return report;  // the caller rolls back

    if (!incoming.domains.empty()) upsert_domains(tx, incoming.domains, actor);
    if (!incoming.partners.empty()) {
        report.partners_changed = upsert_partners(tx, actor, incoming.partners);
    }
    if (!incoming.links.empty()) {
        report.links_changed = upsert_links(tx, actor, incoming.links);
    }
    if (!incoming.country_groups.empty()) upsert_country_groups(tx, incoming.country_groups, actor);
    if (!incoming.disclosures.empty()) {
        report.disclosures_changed =
            tx.exec_params(kInsertDisclosures, disclosure_rows(incoming.disclosures), actor).size();
    }
    return report;
}

ImportReport import_document(const std::string& database_url, const nlohmann::ordered_json& doc,
                             const domain::UrlPolicy& policy, const std::string& actor,
                             bool dry_run) {
    try {
        auto conn = connect(database_url);
        pqxx::work tx(*conn);
        ImportReport report = import_in(tx, doc, policy, actor);
        if (!dry_run && report.issues.empty()) {
            tx.commit();
            report.applied = true;
        }
        return report;  // a dry run or a refused import rolls back
    } catch (const pqxx::failure& e) {
        throw DatabaseError(std::string("import: ") + e.what());
    }
}

codec::ImportDocument export_data_in(pqxx::transaction_base& tx) {
    StoredData stored = read_all(tx);
    return {std::move(stored.partners), std::move(stored.links),
            current_disclosures(stored.disclosures), std::move(stored.country_groups),
            std::move(stored.domains)};
}

nlohmann::ordered_json export_in(pqxx::transaction_base& tx) {
    codec::ImportDocument data = export_data_in(tx);
    return codec::export_document(data.partners, data.links, data.disclosures, data.country_groups,
                                  data.domains);
}

nlohmann::ordered_json export_document(const std::string& database_url) {
    try {
        auto conn = connect(database_url);
        pqxx::read_transaction tx(*conn);
        return export_in(tx);
    } catch (const pqxx::failure& e) {
        throw DatabaseError(std::string("export: ") + e.what());
    }
}

}  // namespace refgate::pg
