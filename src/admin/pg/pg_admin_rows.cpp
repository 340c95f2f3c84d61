#include "pg_admin_rows.hpp"

#include "refgate/codec/import_document.hpp"
#include "refgate/pg/array_text.hpp"
#include "refgate/pg/importer.hpp"
#include "refgate/pg/stored_rows.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

// A timestamptz from microseconds since the epoch, exactly.
std::string from_micros(std::string_view parameter) {
    return "('epoch'::timestamptz + " + std::string(parameter) +
           "::bigint * interval '1 microsecond')";
}

// Each row struct's columns, named as its reader below reads them.

// DisclosureRow: disclosure_row().
const std::string kDisclosureFields = "d.key, d.locale, d.text, d.html, d.html_given, d.version, " +
                                      pg::micros("d.created_at") +
                                      " AS created_us, d.created_by FROM refgate_disclosures d ";

// CodeHistoryRow.
const std::string kCodeHistory = "SELECT ref_param, ref_code, " + pg::micros("live_from") +
                                 " AS live_from_us, " + pg::micros("live_until") +
                                 " AS live_until_us, channel_codes::text AS channel_codes "
                                 "FROM refgate_partner_codes "
                                 "WHERE partner_id = $1 ORDER BY live_from, id";

// AuditRow.
const std::string kAudit = "SELECT id, " + pg::micros("at") +
                           " AS at_us, actor, entity, slug, action, before::text AS before, "
                           "after::text AS after "
                           "FROM refgate_audit WHERE ($1 = '' OR entity = $1) "
                           "AND ($2 = '' OR slug = $2) AND ($4 = '' OR actor = $4) "
                           "AND ($5::bigint < 0 OR at >= " +
                           from_micros("$5") + ") AND ($6::bigint < 0 OR at < " +
                           from_micros("$6") + ") ORDER BY id DESC LIMIT $3";

std::string lock_clause(RowLock lock, std::string_view table) {
    switch (lock) {
        case RowLock::share:
            return " FOR SHARE OF " + std::string(table);
        case RowLock::update:
            return " FOR UPDATE OF " + std::string(table);
        default:
            return "";
    }
}

PartnerRow partner_row(pg::StoredPartner stored) {
    std::int64_t id = stored.partner.id;
    return {id, std::move(stored.partner), stored.stamps};
}

LinkRow link_row(pg::StoredLink stored) {
    std::int64_t id = stored.link.id;
    return {id, std::move(stored.link), stored.stamps};
}

DisclosureRow disclosure_row(const pqxx::row& row) {
    DisclosureRow r;
    domain::Disclosure& d = r.disclosure;
    d.key = row["key"].c_str();
    d.locale = row["locale"].c_str();
    d.text = row["text"].c_str();
    d.html = row["html"].c_str();
    d.html_given = row["html_given"].as<bool>();
    d.version = row["version"].as<std::int64_t>();
    r.created_us = row["created_us"].as<std::int64_t>();
    r.created_by = row["created_by"].c_str();
    return r;
}

// A text[] column read as array_to_string(column, ' '): its words (slugs, hosts and scopes hold no
// space).
std::vector<std::string> words(std::string_view text) {
    std::vector<std::string> out;
    while (!text.empty()) {
        auto word = text.substr(0, text.find(' '));
        if (!word.empty()) out.emplace_back(word);
        text.remove_prefix(std::min(text.size(), word.size() + 1));
    }
    return out;
}

// Issue 46's columns, as kTokenGrantColumns selects them.
constexpr const char* kTokenGrantColumns =
    "scopes IS NULL AS all_scopes, coalesce(array_to_string(scopes, ' '), '') AS scope_words, "
    "array_to_string(partners, ' ') AS partner_words, "
    "array_to_string(domains, ' ') AS domain_words, "
    "coalesce(to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '') "
    "AS expires_at, coalesce(expires_at <= now(), false) AS expired";

void read_grant(const pqxx::row& row, TokenRow& t) {
    if (!row["all_scopes"].as<bool>()) t.scopes = words(row["scope_words"].c_str());
    t.partners = words(row["partner_words"].c_str());
    t.domains = words(row["domain_words"].c_str());
    t.expires_at = row["expires_at"].c_str();
    t.expired = row["expired"].as<bool>();
}

std::string array_of(const std::vector<std::string>& values) {
    pg::ArrayText text;
    for (const auto& v : values) text.add(v);
    return text.finish();
}

// TokenRow's columns as tokens() selects them (no hash: it is never shown).
TokenRow token_row(const pqxx::row& row) {
    TokenRow t;
    t.id = row["id"].as<std::int64_t>();
    t.name = row["name"].c_str();
    t.role = row["role"].c_str();
    t.created_at = row["created_at"].c_str();
    t.last_used_on = row["last_used_on"].c_str();
    t.revoked_at = row["revoked_at"].c_str();
    read_grant(row, t);
    return t;
}

}  // namespace

std::optional<PartnerRow> PgAdminRows::partner(const std::string& slug, RowLock lock) {
    auto found = pg::read_partners(tx_, "WHERE p.slug = $1" + lock_clause(lock, "p"), slug);
    if (found.empty()) return std::nullopt;
    return partner_row(std::move(found.front()));
}

std::vector<PartnerRow> PgAdminRows::partners(const std::string& query) {
    std::vector<PartnerRow> rows;
    for (auto& stored : pg::read_partners(tx_,
                                          "WHERE strpos(lower(p.slug), lower($1)) > 0 "
                                          "OR strpos(lower(p.name), lower($1)) > 0 ORDER BY p.slug",
                                          query))
        rows.push_back(partner_row(std::move(stored)));
    return rows;
}

bool PgAdminRows::insert_partner(const domain::Partner& p) {
    try {
        pqxx::subtransaction insert(tx_);
        insert.exec_params(pg::partner_write_sql(pg::RowWrite::insert),
                           pg::partner_record(p).dump());
        insert.commit();
        return true;
    } catch (const pqxx::unique_violation&) {
        return false;
    }
}

void PgAdminRows::update_partner(std::int64_t id, const domain::Partner& p) {
    tx_.exec_params(pg::partner_write_sql(pg::RowWrite::update), id, pg::partner_record(p).dump());
}

void PgAdminRows::touch_partner(std::int64_t id) {
    tx_.exec_params(
        "UPDATE refgate_partners SET updated_at = now(), version = version + 1 WHERE id = $1", id);
}

void PgAdminRows::delete_partner(std::int64_t id) {
    tx_.exec_params("DELETE FROM refgate_partners WHERE id = $1", id);
}

std::int64_t PgAdminRows::count_links(std::int64_t partner_id) {
    return tx_
        .exec_params("SELECT count(*) AS links FROM refgate_links WHERE partner_id = $1",
                     partner_id)[0]["links"]
        .as<std::int64_t>();
}

void PgAdminRows::apply_due_codes() { tx_.exec("SELECT refgate_apply_due_codes()"); }

std::vector<CodeHistoryRow> PgAdminRows::code_history(std::int64_t partner_id) {
    std::vector<CodeHistoryRow> history;
    auto rows = tx_.exec_params(kCodeHistory, partner_id);
    for (const auto& row : rows) {
        CodeHistoryRow h{row["ref_param"].c_str(), row["ref_code"].c_str(),
                         row["live_from_us"].as<std::int64_t>(), std::nullopt};
        if (auto until = row["live_until_us"]; !until.is_null())
            h.live_until_us = until.as<std::int64_t>();
        for (const auto& code : nlohmann::json::parse(row["channel_codes"].c_str()))
            h.channel_codes.push_back(
                {code.at("channel").get<std::string>(), code.at("ref_code").get<std::string>()});
        history.push_back(std::move(h));
    }
    return history;
}

void PgAdminRows::schedule_code(std::int64_t partner_id, const domain::ScheduledCode& code,
                                const std::string& actor) {
    std::optional<std::string> codes;
    if (code.channel_codes) {
        Json list = Json::array();
        for (const auto& c : *code.channel_codes)
            list.push_back({{"channel", c.channel}, {"ref_code", c.ref_code}});
        codes = list.dump();
    }
    std::optional<std::string> ref_code;
    if (!code.ref_code.empty()) ref_code = code.ref_code;
    tx_.exec_params(
        "INSERT INTO refgate_code_schedule (partner_id, ref_code, channel_codes, valid_from, "
        "created_by) VALUES ($1, $2, $3::jsonb, $4, $5) ON CONFLICT (partner_id, valid_from) DO "
        "UPDATE SET ref_code = EXCLUDED.ref_code, channel_codes = EXCLUDED.channel_codes, "
        "created_by = EXCLUDED.created_by, created_at = now()",
        partner_id, ref_code, codes, domain::format_rfc3339(code.valid_from), actor);
}

bool PgAdminRows::cancel_code(std::int64_t partner_id, domain::SysSeconds at) {
    auto removed = tx_.exec_params(
        "DELETE FROM refgate_code_schedule WHERE partner_id = $1 AND valid_from = $2", partner_id,
        domain::format_rfc3339(at));
    return removed.affected_rows() > 0;
}

std::optional<LinkRow> PgAdminRows::link(const std::string& slug, RowLock lock) {
    // "host/slug" (issue 46: ?domain=HOST) or a bare slug, as pg::link_named_sql() finds them.
    auto name = pg::parse_link_name(slug);
    auto found = pg::read_links(tx_, "WHERE " + pg::link_named_sql(1) + lock_clause(lock, "l"),
                                name.host, name.slug);
    if (found.empty()) return std::nullopt;
    return link_row(std::move(found.front()));
}

std::optional<LinkRow> PgAdminRows::link_by_id(std::int64_t id) {
    auto found = pg::read_links(tx_, "WHERE l.id = $1", id);
    if (found.empty()) return std::nullopt;
    return link_row(std::move(found.front()));
}

std::vector<LinkRow> PgAdminRows::links(const LinkFilter& f, std::size_t limit) {
    std::vector<LinkRow> rows;
    for (auto& stored : pg::read_links(
             tx_,
             "WHERE ($1 = '' OR p.slug = $1) AND ($2 = '' OR l.status = $2) "
             "AND l.slug > $3 AND (strpos(l.slug, lower($5)) > 0 "
             "OR strpos(lower(l.destination), lower($5)) > 0) AND ($6 < 0 OR "
             "(l.expires_at >= now() AND l.expires_at <= now() + make_interval(days => $6))) "
             "AND ($7 = '' OR EXISTS (SELECT 1 FROM refgate_link_health h "
             "WHERE h.link_id = l.id AND h.state = $7)) ORDER BY l.slug LIMIT $4",
             f.partner, f.status, f.cursor, static_cast<std::int64_t>(limit), f.query,
             f.expiring_within_days.value_or(-1), f.health))
        rows.push_back(link_row(std::move(stored)));
    return rows;
}

std::vector<domain::Link> PgAdminRows::links_naming(const std::string& partner_slug) {
    // Lax jsonpath: a rule without "split" matches nothing there rather than failing.
    std::vector<domain::Link> links;
    for (auto& stored : pg::read_links(tx_,
                                       "WHERE p.slug = $1 OR jsonb_path_exists(l.rules, "
                                       "'$[*] ? (@.partner == $p || @.split[*].partner == $p)', "
                                       "jsonb_build_object('p', $1::text)) ORDER BY l.slug, "
                                       "l.domain NULLS FIRST",
                                       partner_slug))
        links.push_back(std::move(stored.link));
    return links;
}

bool PgAdminRows::insert_link(const domain::Link& l) {
    try {
        pqxx::subtransaction insert(tx_);
        insert.exec_params(pg::link_write_sql(pg::RowWrite::insert), pg::link_record(l).dump());
        insert.commit();
        return true;
    } catch (const pqxx::unique_violation&) {
        return false;
    }
}

void PgAdminRows::update_link(std::int64_t id, const domain::Link& l) {
    tx_.exec_params(pg::link_write_sql(pg::RowWrite::update), id, pg::link_record(l).dump());
}

void PgAdminRows::delete_link(std::int64_t id) {
    tx_.exec_params("DELETE FROM refgate_links WHERE id = $1", id);
}

void PgAdminRows::insert_audit(const AuditRecord& r) {
    tx_.exec_params(
        "INSERT INTO refgate_audit (actor, entity, slug, action, before, after) "
        "VALUES ($1, $2, $3, $4, NULLIF($5, '')::jsonb, NULLIF($6, '')::jsonb)",
        r.actor, r.entity, r.slug, r.action, r.before, r.after);
}

std::vector<AuditRow> PgAdminRows::audit(const AuditFilter& f) {
    std::vector<AuditRow> entries;
    auto rows = tx_.exec_params(kAudit, f.entity, f.slug, static_cast<std::int64_t>(f.limit),
                                f.actor, f.since_us.value_or(-1), f.until_us.value_or(-1));
    auto text = [](const pqxx::field& field) {
        return field.is_null() ? std::string() : std::string(field.c_str());
    };
    for (const auto& row : rows) {
        entries.push_back({row["id"].as<std::int64_t>(),
                           row["at_us"].as<std::int64_t>(),
                           {row["actor"].c_str(), row["entity"].c_str(), row["slug"].c_str(),
                            row["action"].c_str(), text(row["before"]), text(row["after"])}});
    }
    return entries;
}

std::optional<TokenRow> PgAdminRows::live_token_by_hash(const std::string& hash_hex) {
    auto rows = tx_.exec_params(
        std::string("SELECT id, name, role, encode(token_hash, 'hex') AS hash_hex, ") +
            kTokenGrantColumns +
            " FROM refgate_api_tokens WHERE token_hash = decode($1, 'hex') AND revoked_at IS NULL",
        hash_hex);
    if (rows.empty()) return std::nullopt;
    TokenRow t;
    const auto& row = rows[0];
    t.id = row["id"].as<std::int64_t>();
    t.name = row["name"].c_str();
    t.role = row["role"].c_str();
    t.hash_hex = row["hash_hex"].c_str();
    read_grant(row, t);
    return t;
}

std::vector<TokenRow> PgAdminRows::tokens(const std::string& live_name) {
    std::vector<TokenRow> tokens;
    auto rows = tx_.exec_params(
        "SELECT name, role, to_char(created_at AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS created_at, "
        "coalesce(last_used_on::text, '') AS last_used_on, "
        "coalesce(to_char(revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '') "
        "AS revoked_at, id, " +
            std::string(kTokenGrantColumns) +
            " FROM refgate_api_tokens WHERE ($1 = '' OR (name = $1 AND revoked_at IS "
            "NULL)) "
            "ORDER BY id",
        live_name);
    for (const auto& row : rows) tokens.push_back(token_row(row));
    return tokens;
}

void PgAdminRows::touch_token(std::int64_t id) {
    tx_.exec_params(
        "UPDATE refgate_api_tokens SET last_used_on = current_date "
        "WHERE id = $1 AND last_used_on IS DISTINCT FROM current_date",
        id);
}

bool PgAdminRows::lock_live_token(const std::string& name) {
    return !tx_.exec_params(
                   "SELECT 1 FROM refgate_api_tokens WHERE name = $1 AND revoked_at IS NULL "
                   "FOR UPDATE",
                   name)
                .empty();
}

void PgAdminRows::insert_token(const TokenRow& row) {
    std::optional<std::string> scopes;
    if (row.scopes) scopes = array_of(*row.scopes);
    std::optional<std::string> expires;
    if (!row.expires_at.empty()) expires = row.expires_at;
    tx_.exec_params(
        "INSERT INTO refgate_api_tokens (name, role, token_hash, scopes, partners, domains, "
        "expires_at) VALUES ($1, $2, decode($3, 'hex'), $4::text[], $5::text[], $6::text[], "
        "$7::timestamptz)",
        row.name, row.role, row.hash_hex, scopes, array_of(row.partners), array_of(row.domains),
        expires);
}

std::optional<std::string> PgAdminRows::revoke_token(const std::string& name) {
    auto rows = tx_.exec_params(
        "UPDATE refgate_api_tokens SET revoked_at = now() "
        "WHERE name = $1 AND revoked_at IS NULL RETURNING role",
        name);
    if (rows.empty()) return std::nullopt;
    return rows[0]["role"].as<std::string>();
}

void PgAdminRows::lock_disclosure(const std::string& key, const std::string& locale) {
    tx_.exec_params("SELECT pg_advisory_xact_lock(hashtext('refgate_disclosure:' || $1))",
                    key + "/" + locale);
}

void PgAdminRows::lock_readable_tokens(const std::string& partner_slug) {
    tx_.exec_params("SELECT pg_advisory_xact_lock(hashtext('refgate_readable_tokens:' || $1))",
                    partner_slug);
}

std::optional<DisclosureRow> PgAdminRows::disclosure(const std::string& key,
                                                     const std::string& locale) {
    auto rows = tx_.exec_params("SELECT " + kDisclosureFields +
                                    "WHERE d.key = $1 AND d.locale = $2 "
                                    "ORDER BY d.version DESC LIMIT 1",
                                key, locale);
    if (rows.empty()) return std::nullopt;
    return disclosure_row(rows[0]);
}

std::vector<DisclosureRow> PgAdminRows::disclosures() {
    std::vector<DisclosureRow> rows;
    for (const auto& row : tx_.exec("SELECT DISTINCT ON (d.key, d.locale) " + kDisclosureFields +
                                    "ORDER BY d.key, d.locale, d.version DESC"))
        rows.push_back(disclosure_row(row));
    return rows;
}

bool PgAdminRows::insert_disclosure(const domain::Disclosure& d, const std::string& actor) {
    try {
        pqxx::subtransaction insert(tx_);
        insert.exec_params(
            "INSERT INTO refgate_disclosures (key, locale, version, text, html, html_given, "
            "created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            d.key, d.locale, d.version, d.text, d.html, d.html_given, actor);
        insert.commit();
        return true;
    } catch (const pqxx::unique_violation&) {
        return false;
    }
}

void PgAdminRows::commit() { tx_.commit(); }

std::vector<DisclosureRow> PgAdminRows::disclosure_versions(const std::string& key,
                                                            const std::string& locale) {
    std::vector<DisclosureRow> rows;
    for (const auto& row :
         tx_.exec_params("SELECT " + kDisclosureFields +
                             "WHERE d.key = $1 AND d.locale = $2 ORDER BY d.version DESC",
                         key, locale))
        rows.push_back(disclosure_row(row));
    return rows;
}

codec::ImportResult PgAdminRows::import_document(const codec::ParsedImport& parsed,
                                                 const domain::UrlPolicy& policy,
                                                 const std::string& actor) {
    auto report = pg::import_in(tx_, parsed, policy, actor);
    return {std::move(report.issues), std::move(report.diff)};
}

codec::ImportDocument PgAdminRows::export_document() { return pg::export_data_in(tx_); }

}  // namespace refgate::admin
