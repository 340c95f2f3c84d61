#include "refgate/admin/pg_admin_store.hpp"

#include <mutex>
#include <utility>
#include <vector>

#include "refgate/codec/import_document.hpp"
#include "refgate/pg/connection_pool.hpp"
#include "refgate/pg/partner_sql.hpp"
#include "token_rows.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

const std::string kPartnerJson = pg::kPartnerObjectJson + "::text";
const std::string kLinkJson = std::string(pg::kLinkObjectJson) + "::text";

constexpr const char* kDisclosureJson = R"sql(json_build_object(
    'key', d.key, 'locale', d.locale, 'text', d.text, 'html', d.html, 'html_given', d.html_given,
    'version', d.version,
    'updated_at', to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'updated_by', d.created_by)::text)sql";

const std::string kSelectDisclosure = std::string("SELECT ") + kDisclosureJson +
                                      " FROM refgate_disclosures d WHERE d.key = $1 AND "
                                      "d.locale = $2 ORDER BY d.version DESC LIMIT 1";

const std::string kSelectPartner =
    std::string("SELECT p.id, ") + kPartnerJson + " FROM refgate_partners p WHERE p.slug = $1";
const std::string kSelectLink = std::string("SELECT l.id, ") + kLinkJson +
                                " FROM refgate_links l JOIN refgate_partners p ON p.id = "
                                "l.partner_id WHERE l.slug = $1";

// A kind of stored object: its audit name, how to read one by slug, how to lock it.
struct Entity {
    const char* name;
    const std::string& select;
    const char* lock;
};
const Entity kPartners{"partner", kSelectPartner, " FOR UPDATE OF p"};
const Entity kLinks{"link", kSelectLink, " FOR UPDATE OF l"};

std::string domains_json(const Partner& p) { return nlohmann::json(p.allowed_domains).dump(); }

std::string extras_json(const Partner& p) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& [key, value] : p.extra_params) pairs.push_back({key, value});
    return pairs.dump();
}

// The import-format part of a stored object: what an editor may write.
Json writable(Json object) {
    object.erase("scheduled_codes");
    object.erase("created_at");
    object.erase("updated_at");
    object.erase("version");
    return object;
}

std::vector<FieldError> field_errors(const std::vector<ImportIssue>& issues) {
    std::vector<FieldError> errors;
    for (const auto& issue : issues) errors.push_back({issue.field, issue.message});
    return errors;
}

Outcome invalid(std::vector<FieldError> errors) {
    Outcome o;
    o.kind = OutcomeKind::invalid;
    o.errors = std::move(errors);
    return o;
}

Outcome simple(OutcomeKind kind, std::string detail) {
    Outcome o;
    o.kind = kind;
    o.detail = std::move(detail);
    return o;
}

Outcome object(OutcomeKind kind, Json body) {
    Outcome o;
    o.kind = kind;
    o.version = body.value("version", std::int64_t{0});
    o.body = std::move(body);
    return o;
}

bool precondition_holds(const Precondition& p, const Json& current) {
    return p.any || current.value("version", std::int64_t{0}) == p.version;
}

struct Row {
    std::int64_t id = 0;
    Json json;
};

std::optional<Row> select_row(pqxx::transaction_base& tx, const std::string& sql,
                              const std::string& slug, const char* lock) {
    auto rows = tx.exec_params(sql + lock, slug);
    if (rows.empty()) return std::nullopt;
    return Row{rows[0][0].as<std::int64_t>(), Json::parse(rows[0][1].c_str())};
}

void record_audit(pqxx::transaction_base& tx, const Actor& actor, const char* entity,
                  const std::string& slug, const char* action, const Json* before,
                  const Json* after) {
    tx.exec_params(
        "INSERT INTO refgate_audit (actor, entity, slug, action, before, after) "
        "VALUES ($1, $2, $3, $4, NULLIF($5, '')::jsonb, NULLIF($6, '')::jsonb)",
        actor.name, entity, slug, action, before ? before->dump() : std::string(),
        after ? after->dump() : std::string());
}

// A partner as the validation rules see it (canonical domains), from its stored object.
std::optional<Partner> to_partner(const Json& stored) {
    auto parsed = parse_import(Json{{"partners", Json::array({writable(stored)})}});
    if (!parsed.issues.empty() || parsed.document.partners.empty()) return std::nullopt;
    return parsed.document.partners.front();
}

class PgAdminStore final : public AdminStore {
  public:
    explicit PgAdminStore(PgAdminStoreOptions options) : options_(std::move(options)) {}

    std::optional<StoredToken> find_token(const std::string& hash_hex) override {
        return with_connection([&](pqxx::connection& c) -> std::optional<StoredToken> {
            pqxx::work tx(c);
            auto rows = tx.exec_params(
                "SELECT id, name, role, encode(token_hash, 'hex') FROM refgate_api_tokens "
                "WHERE token_hash = decode($1, 'hex') AND revoked_at IS NULL",
                hash_hex);
            if (rows.empty()) return std::nullopt;
            auto role = parse_role(rows[0][2].as<std::string>());
            if (!role) return std::nullopt;
            // The last-used day is written once a day at most.
            tx.exec_params(
                "UPDATE refgate_api_tokens SET last_used_on = current_date "
                "WHERE id = $1 AND last_used_on IS DISTINCT FROM current_date",
                rows[0][0].as<std::int64_t>());
            tx.commit();
            return StoredToken{{rows[0][1].as<std::string>(), *role}, rows[0][3].as<std::string>()};
        });
    }

    Outcome list_partners() override {
        return with_connection([&](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            auto rows = tx.exec(std::string("SELECT ") + kPartnerJson +
                                " FROM refgate_partners p ORDER BY p.slug");
            Json items = Json::array();
            for (const auto& row : rows) items.push_back(Json::parse(row[0].c_str()));
            return object(OutcomeKind::ok, Json{{"items", items}, {"next_cursor", nullptr}});
        });
    }

    Outcome get_partner(const std::string& slug) override {
        return with_connection([&](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            auto row = select_row(tx, kSelectPartner, slug, "");
            if (!row) return simple(OutcomeKind::not_found, "no partner '" + slug + "'");
            return object(OutcomeKind::ok, row->json);
        });
    }

    Outcome create_partner(const Actor& actor, const Json& body) override {
        auto parsed = parse_import(Json{{"partners", Json::array({body})}});
        if (!parsed.issues.empty()) return invalid(field_errors(parsed.issues));
        const Partner& p = parsed.document.partners.front();
        return with_connection([&](pqxx::connection& c) {
            pqxx::work tx(c);
            if (select_row(tx, kSelectPartner, p.slug, "")) {
                return simple(OutcomeKind::conflict, "a partner '" + p.slug + "' exists");
            }
            try {
                pqxx::subtransaction insert(tx);
                insert.exec_params(
                    "INSERT INTO refgate_partners (slug, name, ref_param, ref_code, "
                    "allowed_domains, extra_params, active) VALUES ($1, $2, $3, $4, "
                    "ARRAY(SELECT jsonb_array_elements_text($5::jsonb)), $6::jsonb, $7)",
                    p.slug, p.name, p.ref_param, p.ref_code, domains_json(p), extras_json(p),
                    p.active);
                insert.commit();
            } catch (const pqxx::unique_violation&) {
                return simple(OutcomeKind::conflict, "a partner '" + p.slug + "' exists");
            }
            auto after = select_row(tx, kSelectPartner, p.slug, "");
            record_audit(tx, actor, "partner", p.slug, "create", nullptr, &after->json);
            tx.commit();
            return object(OutcomeKind::created, after->json);
        });
    }

    Outcome update_partner(const Actor& actor, const std::string& slug, const Precondition& pre,
                           const Json& patch) override {
        return change(kPartners, actor, slug, pre, "update",
                      [&](pqxx::work& tx, const Row& row) -> std::optional<Outcome> {
                          if (patch.contains("scheduled_codes"))
                              return invalid({{"scheduled_codes",
                                               "is read-only; schedule a code "
                                               "with ref_code and valid_from"}});
                          if (patch.contains("valid_from"))
                              return schedule_code(tx, actor, row, patch);
                          return update_partner_row(tx, row, slug, patch);
                      });
    }

    Outcome delete_partner(const Actor& actor, const std::string& slug,
                           const Precondition& pre) override {
        return change(kPartners, actor, slug, pre, "delete",
                      [&](pqxx::work& tx, const Row& row) -> std::optional<Outcome> {
                          auto count = tx.exec_params(
                                             "SELECT count(*) FROM refgate_links WHERE "
                                             "partner_id = $1",
                                             row.id)[0][0]
                                           .as<std::int64_t>();
                          if (count > 0) {
                              return simple(OutcomeKind::conflict,
                                            "partner '" + slug + "' still has " +
                                                std::to_string(count) +
                                                " link(s); delete or move them first");
                          }
                          tx.exec_params("DELETE FROM refgate_partners WHERE id = $1", row.id);
                          return std::nullopt;
                      });
    }

    Outcome partner_codes(const std::string& slug) override {
        return with_connection([&](pqxx::connection& c) {
            {
                // A code whose moment passed while no instance was running is written first,
                // so the history answers with the moment it took over.
                pqxx::work apply(c);
                apply.exec("SELECT refgate_apply_due_codes()");
                apply.commit();
            }
            pqxx::read_transaction tx(c);
            auto partner = tx.exec_params("SELECT id FROM refgate_partners WHERE slug = $1", slug);
            if (partner.empty()) return simple(OutcomeKind::not_found, "no partner '" + slug + "'");
            // Past and current codes, then the scheduled ones, each live until the next.
            auto rows = tx.exec_params(
                "SELECT j FROM (SELECT 0 AS part, id AS k, json_build_object('ref_param', "
                "ref_param, 'ref_code', ref_code, 'live_from', to_char(live_from AT TIME ZONE "
                "'UTC', "
                "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'live_until', to_char(coalesce(live_until, "
                "(SELECT min(valid_from) FROM refgate_code_schedule s WHERE s.partner_id = "
                "$1)) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'scheduled', "
                "false)::text AS j FROM refgate_partner_codes WHERE partner_id = $1 "
                "UNION ALL SELECT 1, s.id, json_build_object('ref_param', p.ref_param, 'ref_code', "
                "s.ref_code, 'live_from', to_char(s.valid_from AT TIME ZONE 'UTC', "
                "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'live_until', to_char(lead(s.valid_from) "
                "OVER (ORDER BY s.valid_from) AT TIME ZONE 'UTC', "
                "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'scheduled', true)::text "
                "FROM refgate_code_schedule s JOIN refgate_partners p ON p.id = s.partner_id "
                "WHERE s.partner_id = $1) AS codes ORDER BY part, "
                "(j::json->>'live_from'), k",
                partner[0][0].as<std::int64_t>());
            Json items = Json::array();
            for (const auto& row : rows) items.push_back(Json::parse(row[0].c_str()));
            return object(OutcomeKind::ok, Json{{"items", items}, {"next_cursor", nullptr}});
        });
    }

    Outcome list_links(const LinkFilter& f) override {
        return with_connection([&](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            // One more than asked, to know whether there is a next page.
            auto rows = tx.exec_params(std::string("SELECT l.slug, ") + kLinkJson +
                                           " FROM refgate_links l JOIN refgate_partners p ON "
                                           "p.id = l.partner_id WHERE ($1 = '' OR p.slug = $1) "
                                           "AND ($2 = '' OR l.status = $2) AND l.slug > $3 "
                                           "ORDER BY l.slug LIMIT $4",
                                       f.partner, f.status, f.cursor,
                                       static_cast<std::int64_t>(f.limit + 1));
            Json items = Json::array();
            Json next = nullptr;
            for (std::size_t i = 0; i < rows.size(); ++i) {
                if (i == f.limit) {
                    next = rows[i - 1][0].as<std::string>();
                    break;
                }
                items.push_back(Json::parse(rows[i][1].c_str()));
            }
            return object(OutcomeKind::ok, Json{{"items", items}, {"next_cursor", next}});
        });
    }

    Outcome get_link(const std::string& slug) override {
        return with_connection([&](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            auto row = select_row(tx, kSelectLink, slug, "");
            if (!row) return simple(OutcomeKind::not_found, "no link '" + slug + "'");
            return object(OutcomeKind::ok, row->json);
        });
    }

    Outcome create_link(const Actor& actor, const Json& body) override {
        auto parsed = parse_import(Json{{"links", Json::array({body})}});
        if (!parsed.issues.empty()) return invalid(field_errors(parsed.issues));
        Link link = parsed.document.links.front();
        return with_connection([&](pqxx::connection& c) {
            pqxx::work tx(c);
            if (auto errors = validate(tx, link); !errors.empty()) return invalid(errors);
            if (select_row(tx, kSelectLink, link.slug, "")) {
                return simple(OutcomeKind::conflict, "a link '" + link.slug + "' exists");
            }
            try {
                pqxx::subtransaction insert(tx);
                insert.exec_params(
                    "INSERT INTO refgate_links (slug, partner_id, destination, status, "
                    "expires_at, fallback, utm_passthrough) VALUES ($1, (SELECT id FROM "
                    "refgate_partners WHERE slug = $2), $3, $4, NULLIF($5, '')::timestamptz, "
                    "NULLIF($6, ''), $7)",
                    link.slug, link.partner, link.destination, std::string(to_string(link.status)),
                    link.expires_at ? format_rfc3339(*link.expires_at) : std::string(),
                    link.fallback.value_or(""), link.utm_passthrough);
                insert.commit();
            } catch (const pqxx::unique_violation&) {
                return simple(OutcomeKind::conflict, "a link '" + link.slug + "' exists");
            }
            auto after = select_row(tx, kSelectLink, link.slug, "");
            record_audit(tx, actor, "link", link.slug, "create", nullptr, &after->json);
            tx.commit();
            return object(OutcomeKind::created, after->json);
        });
    }

    Outcome update_link(const Actor& actor, const std::string& slug, const Precondition& pre,
                        const Json& patch) override {
        return change(kLinks, actor, slug, pre, "update",
                      [&](pqxx::work& tx, const Row& row) -> std::optional<Outcome> {
                          Json merged = writable(row.json);
                          merged.merge_patch(patch);
                          if (merged.value("slug", std::string()) != slug)
                              return invalid({{"slug", "cannot be changed"}});
                          auto parsed = parse_import(Json{{"links", Json::array({merged})}});
                          if (!parsed.issues.empty()) return invalid(field_errors(parsed.issues));
                          Link link = parsed.document.links.front();
                          if (auto errors = validate(tx, link); !errors.empty())
                              return invalid(errors);
                          if (link_to_json(link) == writable(row.json))
                              return object(OutcomeKind::ok, row.json);  // nothing changed
                          tx.exec_params(
                              "UPDATE refgate_links SET partner_id = (SELECT id FROM "
                              "refgate_partners WHERE slug = $2), destination = $3, status = $4, "
                              "expires_at = NULLIF($5, '')::timestamptz, fallback = NULLIF($6, "
                              "''), utm_passthrough = $7, updated_at = now(), version = version + "
                              "1 WHERE id = $1",
                              row.id, link.partner, link.destination,
                              std::string(to_string(link.status)),
                              link.expires_at ? format_rfc3339(*link.expires_at) : std::string(),
                              link.fallback.value_or(""), link.utm_passthrough);
                          return std::nullopt;
                      });
    }

    Outcome delete_link(const Actor& actor, const std::string& slug,
                        const Precondition& pre) override {
        return change(kLinks, actor, slug, pre, "delete",
                      [&](pqxx::work& tx, const Row& row) -> std::optional<Outcome> {
                          tx.exec_params("DELETE FROM refgate_links WHERE id = $1", row.id);
                          return std::nullopt;
                      });
    }

    Outcome audit(const AuditFilter& f) override {
        return with_connection([&](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            auto rows = tx.exec_params(
                "SELECT json_build_object('id', id, 'at', to_char(at AT TIME ZONE 'UTC', "
                "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'actor', actor, 'entity', entity, "
                "'slug', slug, 'action', action, 'before', before, 'after', after)::text "
                "FROM refgate_audit WHERE ($1 = '' OR entity = $1) AND ($2 = '' OR slug = $2) "
                "ORDER BY id DESC LIMIT $3",
                f.entity, f.slug, static_cast<std::int64_t>(f.limit));
            Json items = Json::array();
            for (const auto& row : rows) items.push_back(Json::parse(row[0].c_str()));
            return object(OutcomeKind::ok, Json{{"items", items}, {"next_cursor", nullptr}});
        });
    }

    Outcome list_tokens() override {
        return with_connection([&](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            Json items = Json::array();
            for (const auto& t : select_tokens(tx, "")) items.push_back(token_json(t));
            return object(OutcomeKind::ok, Json{{"items", items}, {"next_cursor", nullptr}});
        });
    }

    Outcome create_token(const Actor& actor, const Json& body) override {
        std::vector<FieldError> errors;
        for (const auto& [key, value] : body.items()) {
            if (key != "name" && key != "role") errors.push_back({key, "is not a token field"});
        }
        auto name = body.find("name");
        if (name == body.end() || !name->is_string() || !valid_token_name(name->get<std::string>()))
            errors.push_back({"name", "must match [A-Za-z0-9][A-Za-z0-9_.@-]{0,63}"});
        auto role_field = body.find("role");
        std::optional<Role> role;
        if (role_field != body.end() && role_field->is_string())
            role = parse_role(role_field->get<std::string>());
        if (!role) errors.push_back({"role", "must be viewer, editor or admin"});
        if (!errors.empty()) return invalid(std::move(errors));
        return with_connection([&](pqxx::connection& c) {
            pqxx::work tx(c);
            std::string token;
            try {
                token = insert_token(tx, actor.name, name->get<std::string>(), *role);
            } catch (const std::invalid_argument& e) {
                return simple(OutcomeKind::conflict, e.what());
            }
            auto created = select_tokens(tx, name->get<std::string>());
            tx.commit();
            Json body = token_json(created.at(0));
            body["token"] = token;
            return object(OutcomeKind::created, std::move(body));
        });
    }

    Outcome revoke_token(const Actor& actor, const std::string& name,
                         const Precondition& pre) override {
        return with_connection([&](pqxx::connection& c) {
            pqxx::work tx(c);
            auto live = select_tokens(tx, name);
            if (live.empty()) return simple(OutcomeKind::not_found, "no live token '" + name + "'");
            Json before = token_json(live.front());
            if (!precondition_holds(pre, before))
                return simple(OutcomeKind::stale, "that name names a newer token now");
            mark_revoked(tx, actor.name, name);
            tx.commit();
            return object(OutcomeKind::deleted, before);
        });
    }

    Outcome list_disclosures() override {
        return with_connection([&](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            auto rows =
                tx.exec(std::string("SELECT DISTINCT ON (d.key, d.locale) ") + kDisclosureJson +
                        " FROM refgate_disclosures d ORDER BY d.key, d.locale, "
                        "d.version DESC");
            Json items = Json::array();
            for (const auto& row : rows) items.push_back(Json::parse(row[0].c_str()));
            return object(OutcomeKind::ok, Json{{"items", items}, {"next_cursor", nullptr}});
        });
    }

    Outcome get_disclosure(const std::string& key, const std::string& locale) override {
        return with_connection([&](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            auto current = select_disclosure(tx, key, locale);
            if (!current) return simple(OutcomeKind::not_found, no_disclosure(key, locale));
            return object(OutcomeKind::ok, *current);
        });
    }

    Outcome put_disclosure(const Actor& actor, const std::string& key, const std::string& locale,
                           const PutPrecondition& pre, const Json& body) override {
        // What GET returned may be sent back: its read-only fields are ignored, key and locale
        // must name this resource.
        Json input = body;
        for (const char* read_only : {"version", "updated_at", "updated_by", "html_given"})
            input.erase(read_only);
        std::vector<FieldError> errors;
        if (input.contains("key") && input["key"] != key)
            errors.push_back({"key", "must be the key of the URL"});
        if (input.contains("locale") &&
            (!input["locale"].is_string() ||
             normalize_locale(input["locale"].get<std::string>()) != locale))
            errors.push_back({"locale", "must be the locale of the URL"});
        if (!errors.empty()) return invalid(std::move(errors));
        input["key"] = key;
        input["locale"] = locale;
        auto parsed = parse_import(Json{{"disclosures", Json::array({input})}});
        if (!parsed.issues.empty()) return invalid(field_errors(parsed.issues));
        const Disclosure& d = parsed.document.disclosures.front();
        return with_connection([&](pqxx::connection& c) {
            pqxx::work tx(c);
            // Writers of one (key, locale) take turns, so versions are consecutive.
            tx.exec_params("SELECT pg_advisory_xact_lock(hashtext('refgate_disclosure:' || $1))",
                           key + "/" + locale);
            auto current = select_disclosure(tx, key, locale);
            std::int64_t version = 1;
            if (!current) {
                if (pre.if_match)
                    return simple(OutcomeKind::stale, no_disclosure(key, locale) + " yet");
            } else {
                if (pre.if_none_match_any)
                    return simple(OutcomeKind::stale, "the disclosure exists");
                if (!pre.if_match)
                    return simple(OutcomeKind::precondition_required,
                                  "send If-Match with the ETag of the disclosure you read");
                if (!precondition_holds(*pre.if_match, *current))
                    return simple(OutcomeKind::stale, "the disclosure changed; fetch it again");
                if (current->value("text", "") == d.text && current->value("html", "") == d.html &&
                    current->value("html_given", false) == d.html_given)
                    return object(OutcomeKind::ok, *current);  // nothing changed
                version = current->value("version", std::int64_t{0}) + 1;
            }
            try {
                pqxx::subtransaction insert(tx);
                insert.exec_params(
                    "INSERT INTO refgate_disclosures (key, locale, version, text, html, "
                    "html_given, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    key, locale, version, d.text, d.html, d.html_given, actor.name);
                insert.commit();
            } catch (const pqxx::unique_violation&) {
                return simple(OutcomeKind::stale, "the disclosure changed; fetch it again");
            }
            auto after = select_disclosure(tx, key, locale);
            record_audit(tx, actor, "disclosure", key + "/" + locale, current ? "update" : "create",
                         current ? &*current : nullptr, &*after);
            tx.commit();
            return object(current ? OutcomeKind::ok : OutcomeKind::created, *after);
        });
    }

  private:
    static std::string no_disclosure(const std::string& key, const std::string& locale) {
        return "no disclosure '" + key + "' for locale '" + locale + "'";
    }

    static std::optional<Json> select_disclosure(pqxx::transaction_base& tx, const std::string& key,
                                                 const std::string& locale) {
        auto rows = tx.exec_params(kSelectDisclosure, key, locale);
        if (rows.empty()) return std::nullopt;
        return Json::parse(rows[0][0].c_str());
    }

    static Json token_json(const TokenInfo& t) {
        auto or_null = [](const std::string& text) { return text.empty() ? Json() : Json(text); };
        return Json{{"name", t.name},
                    {"role", t.role},
                    {"created_at", t.created_at},
                    {"last_used_on", or_null(t.last_used_on)},
                    {"revoked_at", or_null(t.revoked_at)},
                    {"version", t.id}};
    }

    // PATCH {"ref_code": C, "valid_from": T}: C takes over at T on every instance. A null
    // ref_code cancels what is scheduled at T; the same T again replaces it.
    std::optional<Outcome> schedule_code(pqxx::work& tx, const Actor& actor, const Row& row,
                                         const Json& patch) {
        std::vector<FieldError> errors;
        for (const auto& [key, value] : patch.items()) {
            if (key != "ref_code" && key != "valid_from")
                errors.push_back({key, "cannot be changed together with valid_from"});
        }
        const Json& when = patch.at("valid_from");
        std::optional<SysSeconds> valid_from;
        if (when.is_string()) valid_from = parse_rfc3339(when.get<std::string>());
        if (!valid_from)
            errors.push_back({"valid_from", "must be an RFC 3339 time, e.g. 2026-12-01T00:00:00Z"});
        auto code = patch.find("ref_code");
        if (code == patch.end()) {
            errors.push_back({"ref_code", "is required with valid_from (null cancels)"});
        } else if (!code->is_null()) {
            Json merged = writable(row.json);
            merged["ref_code"] = *code;
            auto parsed = parse_import(Json{{"partners", Json::array({merged})}});
            for (auto& e : field_errors(parsed.issues)) errors.push_back(std::move(e));
        }
        if (!errors.empty()) return invalid(std::move(errors));
        std::string at = format_rfc3339(*valid_from);
        if (code->is_null()) {
            auto removed = tx.exec_params(
                "DELETE FROM refgate_code_schedule WHERE partner_id = $1 AND valid_from = $2",
                row.id, at);
            if (removed.affected_rows() == 0)
                return simple(OutcomeKind::not_found, "no code is scheduled at " + at);
        } else {
            if (!tx.exec_params("SELECT $1::timestamptz > now()", at)[0][0].as<bool>())
                return invalid({{"valid_from",
                                 "must be in the future; PATCH ref_code alone to change it now"}});
            tx.exec_params(
                "INSERT INTO refgate_code_schedule (partner_id, ref_code, valid_from, created_by) "
                "VALUES ($1, $2, $3, $4) ON CONFLICT (partner_id, valid_from) DO UPDATE SET "
                "ref_code = EXCLUDED.ref_code, created_by = EXCLUDED.created_by, "
                "created_at = now()",
                row.id, code->get<std::string>(), at, actor.name);
        }
        // A new version, so that editors working from the old one get 412.
        tx.exec_params(
            "UPDATE refgate_partners SET updated_at = now(), version = version + 1 WHERE id = $1",
            row.id);
        return std::nullopt;
    }

    // A partner PATCH without valid_from: the merged object must pass the import rules, and the
    // partner's links must still fit its (possibly narrowed) domains.
    std::optional<Outcome> update_partner_row(pqxx::work& tx, const Row& row,
                                              const std::string& slug, const Json& patch) {
        Json merged = writable(row.json);
        merged.merge_patch(patch);
        if (merged.value("slug", std::string()) != slug)
            return invalid({{"slug", "cannot be changed"}});
        auto parsed = parse_import(Json{{"partners", Json::array({merged})}});
        if (!parsed.issues.empty()) return invalid(field_errors(parsed.issues));
        const Partner& p = parsed.document.partners.front();
        if (auto current = to_partner(row.json);
            current && partner_to_json(*current) == partner_to_json(p)) {
            return object(OutcomeKind::ok, row.json);  // nothing changed
        }
        auto links = read_links_of(tx, row.id);
        auto lookup = [&p](const std::string&) -> const Partner* { return &p; };
        auto issues = validate_links(links, lookup, options_.url_policy, "stored links");
        if (!issues.empty()) {
            std::vector<FieldError> errors;
            for (const auto& issue : issues)
                errors.push_back({"allowed_domains", "would exclude " + issue.entry + ": " +
                                                         issue.field + " " + issue.message});
            return invalid(std::move(errors));
        }
        tx.exec_params(
            "UPDATE refgate_partners SET name = $2, ref_param = $3, ref_code = $4, "
            "allowed_domains = ARRAY(SELECT jsonb_array_elements_text($5::jsonb)), "
            "extra_params = $6::jsonb, active = $7, updated_at = now(), "
            "version = version + 1 WHERE id = $1",
            row.id, p.name, p.ref_param, p.ref_code, domains_json(p), extras_json(p), p.active);
        return std::nullopt;
    }

    // What every PATCH and DELETE shares: the object locked, If-Match checked, then `apply`
    // makes the change (nullopt) or answers instead; the audit row and the answer follow in the
    // same transaction.
    template <typename Apply>
    Outcome change(const Entity& entity, const Actor& actor, const std::string& slug,
                   const Precondition& pre, const char* action, Apply&& apply) {
        return with_connection([&](pqxx::connection& c) {
            pqxx::work tx(c);
            auto row = select_row(tx, entity.select, slug, entity.lock);
            if (!row)
                return simple(OutcomeKind::not_found,
                              "no " + std::string(entity.name) + " '" + slug + "'");
            if (!precondition_holds(pre, row->json))
                return simple(OutcomeKind::stale,
                              "the " + std::string(entity.name) + " changed; fetch it again");
            if (std::optional<Outcome> answer = apply(tx, *row)) return std::move(*answer);
            bool deleted = std::string_view(action) == "delete";
            auto after = deleted ? std::nullopt : select_row(tx, entity.select, slug, "");
            record_audit(tx, actor, entity.name, slug, action, &row->json,
                         after ? &after->json : nullptr);
            tx.commit();
            return deleted ? object(OutcomeKind::deleted, row->json)
                           : object(OutcomeKind::ok, after->json);
        });
    }

    // The link's partner must exist (locked against a concurrent narrowing of its domains) and
    // its destination and fallback must be within the partner's domains; both become canonical.
    std::vector<FieldError> validate(pqxx::transaction_base& tx, Link& link) {
        auto row = select_row(tx, kSelectPartner, link.partner, " FOR SHARE OF p");
        std::optional<Partner> partner = row ? to_partner(row->json) : std::nullopt;
        auto lookup = [&partner](const std::string&) -> const Partner* {
            return partner ? &*partner : nullptr;
        };
        std::vector<Link> links{link};
        auto issues = validate_links(links, lookup, options_.url_policy);
        link = links.front();
        return field_errors(issues);
    }

    std::vector<Link> read_links_of(pqxx::transaction_base& tx, std::int64_t partner_id) {
        auto rows = tx.exec_params(std::string("SELECT ") + kLinkJson +
                                       " FROM refgate_links l JOIN refgate_partners p ON p.id = "
                                       "l.partner_id WHERE l.partner_id = $1 ORDER BY l.slug",
                                   partner_id);
        Json links = Json::array();
        for (const auto& row : rows) links.push_back(writable(Json::parse(row[0].c_str())));
        return parse_import(Json{{"links", links}}).document.links;
    }

    // A pooled connection for f; database failures become StoreError (the handler's 503).
    template <typename F>
    auto with_connection(F&& f) -> decltype(f(std::declval<pqxx::connection&>())) {
        try {
            return pool_.run(std::forward<F>(f));
        } catch (const pqxx::failure& e) {
            throw StoreError(e.what());
        } catch (const pg::PoolTimeout& e) {
            throw StoreError(e.what());
        }
    }

    PgAdminStoreOptions options_;
    pg::ConnectionPool pool_{options_.database_url,
                             {.max_idle = options_.max_idle_connections,
                              .max_open = options_.max_open_connections,
                              .wait = options_.connection_wait}};
};

}  // namespace

std::unique_ptr<AdminStore> make_pg_admin_store(PgAdminStoreOptions options) {
    return std::make_unique<PgAdminStore>(std::move(options));
}

}  // namespace refgate::admin
