#pragma once

// The admin service's rows in PostgreSQL: one statement per method, no rules.

#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <string_view>

#include "refgate/admin/admin_rows.hpp"
#include "refgate/pg/connection_pool.hpp"
#include "refgate/pg/stored_rows.hpp"

namespace refgate::admin {

class PgAdminRows final : public AdminRows {
  public:
    explicit PgAdminRows(pqxx::dbtransaction& tx) : tx_(tx) {}

    std::optional<PartnerRow> partner(const std::string& slug, RowLock lock) override;
    std::vector<PartnerRow> partners(const std::string& query) override;
    bool insert_partner(const domain::Partner& partner) override;
    void update_partner(std::int64_t id, const domain::Partner& partner) override;
    void touch_partner(std::int64_t id) override;
    void delete_partner(std::int64_t id) override;
    std::int64_t count_links(std::int64_t partner_id) override;

    void apply_due_codes() override;
    std::vector<CodeHistoryRow> code_history(std::int64_t partner_id) override;
    void schedule_code(std::int64_t partner_id, const domain::ScheduledCode& code,
                       const std::string& actor) override;
    bool cancel_code(std::int64_t partner_id, domain::SysSeconds at) override;

    std::optional<LinkRow> link(const std::string& slug, RowLock lock) override;
    std::vector<LinkRow> links(const LinkFilter& filter, std::size_t limit) override;
    std::vector<domain::Link> links_naming(const std::string& partner_slug) override;
    std::optional<LinkRow> link_by_id(std::int64_t id) override;
    bool insert_link(const domain::Link& link) override;
    void update_link(std::int64_t id, const domain::Link& link) override;
    void delete_link(std::int64_t id) override;

    void insert_audit(const AuditRecord& record) override;
    std::vector<AuditRow> audit(const AuditFilter& filter) override;

    std::optional<TokenRow> live_token_by_hash(const std::string& hash_hex) override;
    std::vector<TokenRow> tokens(const std::string& live_name) override;
    void touch_token(std::int64_t id) override;
    bool lock_live_token(const std::string& name) override;
    void insert_token(const TokenRow& row) override;
    std::optional<std::string> revoke_token(const std::string& name) override;

    void lock_disclosure(const std::string& key, const std::string& locale) override;
    void lock_readable_tokens(const std::string& partner_slug) override;
    std::optional<DisclosureRow> disclosure(const std::string& key,
                                            const std::string& locale) override;
    std::vector<DisclosureRow> disclosures() override;
    bool insert_disclosure(const domain::Disclosure& disclosure, const std::string& actor) override;
    std::vector<DisclosureRow> disclosure_versions(const std::string& key,
                                                   const std::string& locale) override;

    std::vector<CountryGroupRow> country_groups() override;
    std::optional<CountryGroupRow> country_group(const std::string& family, RowLock lock) override;
    bool put_country_group(const domain::CountryGroup& group, bool create) override;
    void delete_country_group(const std::string& family) override;

    std::vector<codec::DomainView> domains() override;
    std::optional<codec::DomainView> domain(const std::string& host, RowLock lock) override;
    bool put_domain(const domain::Domain& domain, bool create) override;
    void delete_domain(const std::string& host) override;
    std::int64_t count_domain_links(const std::string& host) override;
    std::optional<LinkRow> link_on(const std::string& host, const std::string& slug,
                                   RowLock lock) override;

    codec::ImportResult import_document(const codec::ParsedImport& parsed,
                                        const domain::UrlPolicy& policy,
                                        const std::string& actor) override;
    codec::ImportDocument export_document() override;

    void commit() override;

  private:
    pqxx::dbtransaction& tx_;
};

// Pooled connections; database failures and pool timeouts become StoreError (the API's 503).
class PgAdminRepository final : public AdminRepository {
  public:
    // The pool may be shared with the console's users and sessions.
    explicit PgAdminRepository(std::shared_ptr<pg::ConnectionPool> pool) : pool_(std::move(pool)) {}

    void run(Access access, const std::function<void(AdminRows&)>& work) override;

  private:
    std::shared_ptr<pg::ConnectionPool> pool_;
};

}  // namespace refgate::admin
