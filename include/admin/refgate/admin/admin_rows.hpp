#pragma once

// The rows the admin service reads and writes, and the repository that keeps them: PostgreSQL
// rows in, rows out, no rules and no JSON (admin_service.hpp decides, admin_json.hpp shapes; an
// audit entry's objects reach the rows as the text it wrote). A fake in memory stands in for
// PostgreSQL in the service's unit tests.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "refgate/admin/admin_store.hpp"
#include "refgate/codec/import_diff.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/codec/stored_objects.hpp"
#include "refgate/domain/destination.hpp"
#include "refgate/domain/disclosure.hpp"
#include "refgate/domain/model.hpp"

namespace refgate::admin {

// When a row was written and which version it is (ETag and If-Match).
using refgate::codec::Stamps;

// A partner with its row id; `partner.scheduled_codes` holds what is scheduled, by valid_from.
struct PartnerRow {
    std::int64_t id = 0;
    domain::Partner partner;
    codec::Stamps stamps;
};

struct LinkRow {
    std::int64_t id = 0;
    domain::Link link;
    codec::Stamps stamps;
};

// What the API shows of a row.
inline codec::PartnerView view_of(const PartnerRow& row) { return {row.partner, row.stamps}; }
inline codec::LinkView view_of(const LinkRow& row) { return {row.link, row.stamps}; }

// One version of a disclosure text and who wrote it.
struct DisclosureRow {
    domain::Disclosure disclosure;
    std::int64_t created_us = 0;
    std::string created_by;
};

// A code a partner had or has: live from its moment until the next took over (none: current).
struct CodeHistoryRow {
    std::string ref_param;
    std::string ref_code;
    std::int64_t live_from_us = 0;
    std::optional<std::int64_t> live_until_us;
    std::vector<domain::ChannelCode> channel_codes;  // live with the code (issue 42)
};

// A partner family's country fallbacks as stored; `version` is the API's ETag.
struct CountryGroupRow {
    domain::CountryGroup group;
    std::int64_t updated_us = 0;
    std::int64_t version = 0;
};

inline codec::DisclosureView view_of(const DisclosureRow& row) {
    return {row.disclosure, row.created_us, row.created_by};
}
inline codec::CountryGroupView view_of(const CountryGroupRow& row) {
    return {row.group, row.updated_us, row.version};
}

struct TokenRow {
    std::int64_t id = 0;
    std::string name;
    std::string role;
    std::string hash_hex;
    std::string created_at;    // RFC 3339, whole seconds
    std::string last_used_on;  // "YYYY-MM-DD"; empty: never
    std::string revoked_at;    // RFC 3339; empty: live
    // Issue 46: the scopes given (none: everything the role allows), the restrictions, expiry.
    std::optional<std::vector<std::string>> scopes;
    std::vector<std::string> partners;
    std::vector<std::string> domains;
    std::string expires_at;  // RFC 3339; empty: never
    bool expired = false;    // expires_at has passed (by the database's clock)
};

// One audit entry as the service builds it (audit_record() in admin_json.hpp): the objects as
// the API shows them, as JSON text (empty: none).
struct AuditRecord {
    std::string actor;
    std::string entity;  // "partner", "link", "token", "disclosure", "country_group"
    std::string slug;
    std::string action;  // "create", "update", "delete", "revoke"
    std::string before;
    std::string after;
};

struct AuditRow {
    std::int64_t id = 0;
    std::int64_t at_us = 0;
    AuditRecord record;
};

inline TokenView view_of(const TokenRow& row) {
    TokenView view{row.name, row.role, row.created_at, row.last_used_on, row.revoked_at, row.id};
    if (row.scopes) {
        view.scopes = *row.scopes;
    } else if (auto role = parse_role(row.role)) {
        for (auto name : scope_names(role_scopes(*role))) view.scopes.emplace_back(name);
    }
    view.partners = row.partners;
    view.domains = row.domains;
    view.expires_at = row.expires_at;
    return view;
}
inline AuditView view_of(const AuditRow& row) {
    const AuditRecord& r = row.record;
    return {row.id, row.at_us, r.actor, r.entity, r.slug, r.action, r.before, r.after};
}

enum class RowLock { none, share, update };

// One transaction. Nothing is kept unless commit() is called before the work returns.
class AdminRows {
  public:
    virtual ~AdminRows() = default;

    virtual std::optional<PartnerRow> partner(const std::string& slug, RowLock lock) = 0;
    // Partners whose slug or name contains `query` (any case; empty: all), by slug.
    virtual std::vector<PartnerRow> partners(const std::string& query) = 0;
    // False when the slug is taken.
    virtual bool insert_partner(const domain::Partner& partner) = 0;
    // Writes the editable fields; a new version.
    virtual void update_partner(std::int64_t id, const domain::Partner& partner) = 0;
    // A new version without other changes (a code was scheduled).
    virtual void touch_partner(std::int64_t id) = 0;
    virtual void delete_partner(std::int64_t id) = 0;
    virtual std::int64_t count_links(std::int64_t partner_id) = 0;

    // Writes codes whose moment passed (while no instance ran) into the partners' history.
    virtual void apply_due_codes() = 0;
    // Past and current codes, by live_from.
    virtual std::vector<CodeHistoryRow> code_history(std::int64_t partner_id) = 0;
    // Inserts or replaces the code scheduled at `at`.
    virtual void schedule_code(std::int64_t partner_id, const domain::ScheduledCode& code,
                               const std::string& actor) = 0;
    // False when nothing was scheduled at `at`.
    virtual bool cancel_code(std::int64_t partner_id, domain::SysSeconds at) = 0;

    virtual std::optional<LinkRow> link(const std::string& slug, RowLock lock) = 0;
    // Links by slug after filter.cursor; at most `limit` rows.
    virtual std::vector<LinkRow> links(const LinkFilter& filter, std::size_t limit) = 0;
    // Links that name the partner anywhere: as their own partner or in a rule or split branch.
    virtual std::vector<domain::Link> links_naming(const std::string& partner_slug) = 0;
    // A link by its database id (placement tokens name it so); none by default.
    virtual std::optional<LinkRow> link_by_id(std::int64_t id) {
        (void)id;
        return std::nullopt;
    }
    // False when the slug is taken.
    virtual bool insert_link(const domain::Link& link) = 0;
    virtual void update_link(std::int64_t id, const domain::Link& link) = 0;
    virtual void delete_link(std::int64_t id) = 0;

    virtual void insert_audit(const AuditRecord& record) = 0;
    // Newest first.
    virtual std::vector<AuditRow> audit(const AuditFilter& filter) = 0;

    // The live token with that hash, or (name given) with that name; every token when both empty.
    virtual std::optional<TokenRow> live_token_by_hash(const std::string& hash_hex) = 0;
    virtual std::vector<TokenRow> tokens(const std::string& live_name) = 0;
    // Records the day a token was last used (once a day at most).
    virtual void touch_token(std::int64_t id) = 0;
    // Locks the live token of that name, if any; true when there is one.
    virtual bool lock_live_token(const std::string& name) = 0;
    // `row`'s name, role, hash, scopes, partners, domains and expires_at.
    virtual void insert_token(const TokenRow& row) = 0;
    // The role of the token revoked; nullopt when no live token has that name.
    virtual std::optional<std::string> revoke_token(const std::string& name) = 0;

    // Writers of one (key, locale) take turns until the transaction ends.
    virtual void lock_disclosure(const std::string& key, const std::string& locale) = 0;
    // Link saves that check the readable placement tokens of one partner take turns until the
    // transaction ends: the check reads the partner's other links, which a concurrent save
    // could be adding (the partner row's share lock lets both through). Taken in slug order.
    virtual void lock_readable_tokens(const std::string& partner_slug) = 0;
    virtual std::optional<DisclosureRow> disclosure(const std::string& key,
                                                    const std::string& locale) = 0;
    // The current version of each (key, locale).
    virtual std::vector<DisclosureRow> disclosures() = 0;
    // False when that version exists already.
    virtual bool insert_disclosure(const domain::Disclosure& disclosure,
                                   const std::string& actor) = 0;
    // Every version of a (key, locale), newest first.
    virtual std::vector<DisclosureRow> disclosure_versions(const std::string& key,
                                                           const std::string& locale) = 0;

    // Every partner family's country fallbacks, by family.
    virtual std::vector<CountryGroupRow> country_groups() = 0;
    virtual std::optional<CountryGroupRow> country_group(const std::string& family,
                                                         RowLock lock) = 0;
    // Replaces the family's fallbacks (a new version), or with `create` inserts them: false when
    // the family has a group by now (another writer, an import, created it meanwhile).
    virtual bool put_country_group(const domain::CountryGroup& group, bool create) = 0;
    virtual void delete_country_group(const std::string& family) = 0;

    // Branded domains (issue 46), by host; a store that keeps none has none, and its writes
    // throw StoreError.
    virtual std::vector<codec::DomainView> domains() { return {}; }
    virtual std::optional<codec::DomainView> domain(const std::string& /*host*/, RowLock /*lock*/) {
        return std::nullopt;
    }
    // Inserts (create: false when the host exists by now) or replaces the domain; a new default
    // takes over from the old one.
    virtual bool put_domain(const domain::Domain& /*domain*/, bool /*create*/) {
        throw StoreError("no domains here");
    }
    virtual void delete_domain(const std::string& /*host*/) { throw StoreError("no domains here"); }
    // How many links are on the domain.
    virtual std::int64_t count_domain_links(const std::string& /*host*/) {
        throw StoreError("no domains here");
    }
    // The link `slug` on the domain `host` (empty: the default domain).
    virtual std::optional<LinkRow> link_on(const std::string& host, const std::string& slug,
                                           RowLock lock) {
        if (!host.empty()) return std::nullopt;
        return link(slug, lock);
    }

    // The import of a parsed document in this transaction (refgate/pg/importer.hpp: validated
    // whole with the issues parsing found, changes audited as `actor`); commit() applies it.
    virtual codec::ImportResult import_document(const codec::ParsedImport& parsed,
                                                const domain::UrlPolicy& policy,
                                                const std::string& actor) = 0;
    // Every partner and link, the current disclosures and the country groups.
    virtual codec::ImportDocument export_document() = 0;

    virtual void commit() = 0;
};

// Runs work in one transaction; throws StoreError when the database fails.
class AdminRepository {
  public:
    virtual ~AdminRepository() = default;
    enum class Access { read, write };
    virtual void run(Access access, const std::function<void(AdminRows&)>& work) = 0;
};

}  // namespace refgate::admin
