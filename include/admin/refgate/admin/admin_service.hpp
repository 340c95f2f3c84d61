#pragma once

// The admin API's rules over a row repository: validation (the import format's rules, a link's
// destination within its partner's domains), decisions (preconditions, conflicts, "the partner
// still has links") and the audit record of every change. No SQL and no HTTP here, so every rule
// is unit-tested against a repository kept in memory.

#include <memory>

#include "refgate/admin/admin_rows.hpp"
#include "refgate/admin/admin_store.hpp"
#include "refgate/admin/tokens.hpp"
#include "refgate/domain/clock.hpp"
#include "refgate/domain/destination.hpp"

namespace refgate::admin {

struct AdminServiceOptions {
    UrlPolicy url_policy;
    const Clock* clock = nullptr;       // decides which schedules lie in the future; none: system
    std::string public_base_url;        // of /go/ links; empty: links have no public URL
    std::string default_locale = "en";  // the snippet's disclosure, as /snippet/ picks it
};

class AdminService final : public AdminStore {
  public:
    explicit AdminService(std::unique_ptr<AdminRepository> repository,
                          AdminServiceOptions options = {});

    std::optional<StoredToken> find_token(const std::string& hash_hex) override;

    Result<Page<PartnerView>> list_partners(const std::string& query) override;
    Result<PartnerView> get_partner(const std::string& slug) override;
    Result<PartnerView> create_partner(const Actor& actor, const NewPartner& partner) override;
    Result<PartnerView> update_partner(const Actor& actor, const std::string& slug,
                                       const Precondition& if_match,
                                       const PartnerPatch& patch) override;
    Result<PartnerView> delete_partner(const Actor& actor, const std::string& slug,
                                       const Precondition& if_match) override;
    Result<Page<CodeView>> partner_codes(const std::string& slug) override;

    Result<Page<LinkView>> list_links(const LinkFilter& filter) override;
    Result<LinkView> get_link(const std::string& slug) override;
    Result<LinkView> create_link(const Actor& actor, const NewLink& link) override;
    Result<LinkView> update_link(const Actor& actor, const std::string& slug,
                                 const Precondition& if_match, const LinkPatch& patch) override;
    Result<LinkView> delete_link(const Actor& actor, const std::string& slug,
                                 const Precondition& if_match) override;
    Result<LinkPreviewView> preview_link(const LinkPreview& preview) override;
    Result<LinkShareView> share_link(const std::string& slug, const std::string& src) override;
    Result<LinkPlacements> link_placements(
        const std::string& slug,
        const std::vector<std::pair<std::string, std::uint64_t>>& channels) override;
    Result<PlacementFound> find_placement(
        const std::string& token,
        const std::function<std::vector<std::string>(const std::string& link)>& channels_of)
        override;

    Result<Page<AuditView>> audit(const AuditFilter& filter) override;

    Result<Page<TokenView>> list_tokens() override;
    Result<CreatedToken> create_token(const Actor& actor, const NewToken& token) override;
    Result<TokenView> revoke_token(const Actor& actor, const std::string& name,
                                   const Precondition& if_match) override;
    // The CLI's token commands: the same rows and audit entries as the API's.
    // Throws std::invalid_argument on a bad name or a name that names a live token.
    // Also when the token would exceed its role or names an unknown partner.
    std::string create_token_text(const std::string& actor, const NewToken& token);
    std::vector<TokenView> token_list();
    bool revoke_token_named(const std::string& actor, const std::string& name);

    Result<Page<CountryGroupView>> list_country_groups() override;
    Result<CountryGroupView> get_country_group(const std::string& family) override;
    Result<CountryGroupView> put_country_group(const Actor& actor, const std::string& family,
                                               const PutPrecondition& pre,
                                               const CountryGroupPut& put) override;
    Result<CountryGroupView> delete_country_group(const Actor& actor, const std::string& family,
                                                  const Precondition& pre) override;

    Result<Page<DomainView>> list_domains() override;
    Result<DomainView> get_domain(const std::string& host) override;
    Result<DomainView> put_domain(const Actor& actor, const std::string& host,
                                  const PutPrecondition& pre, const DomainPut& put) override;
    Result<DomainView> delete_domain(const Actor& actor, const std::string& host,
                                     const Precondition& pre) override;

    Result<Page<DisclosureView>> list_disclosures() override;
    Result<DisclosureView> get_disclosure(const std::string& key,
                                          const std::string& locale) override;
    Result<DisclosureView> put_disclosure(const Actor& actor, const std::string& key,
                                          const std::string& locale, const PutPrecondition& pre,
                                          const DisclosureInput& put) override;
    Result<Page<DisclosureVersionView>> disclosure_versions(const std::string& key,
                                                            const std::string& locale) override;
    Result<DisclosurePreviewView> preview_disclosure(const DisclosureInput& preview) override;

    Result<ImportReport> import_document(const Actor& actor, const ImportRequest& request) override;
    Result<ImportDocument> export_document() override;

  private:
    // Runs `work` in a transaction and returns what it decided.
    template <typename R>
    R run(AdminRepository::Access access, const std::function<R(AdminRows&)>& work) {
        R result;
        repository_->run(access, [&](AdminRows& rows) { result = work(rows); });
        return result;
    }
    template <typename R>
    R write(const std::function<R(AdminRows&)>& work) {
        return run(AdminRepository::Access::write, work);
    }
    template <typename R>
    R read(const std::function<R(AdminRows&)>& work) {
        return run(AdminRepository::Access::read, work);
    }
    std::optional<Result<PartnerView>> schedule_code(AdminRows& rows, const Actor& actor,
                                                     const PartnerRow& row,
                                                     const CodeSchedule& schedule);
    std::optional<Result<PartnerView>> update_partner_row(AdminRows& rows, const PartnerRow& row,
                                                          const PartnerPatch& patch);
    std::vector<FieldError> validate(AdminRows& rows, Link& link);
    const Clock& clock() const;
    // "<public_base_url>/go/<slug>", or none without a public base URL; on `host` (issue 46: the
    // link's domain) the base URL's scheme and path with that host.
    std::optional<std::string> public_url(const std::string& slug,
                                          const std::string& host = {}) const;
    // The host of the link's domain: its own, else the default domain's (empty: none defined).
    static std::string link_host(AdminRows& rows, const Link& link);

    std::unique_ptr<AdminRepository> repository_;
    AdminServiceOptions options_;
    SystemClock system_clock_;
};

}  // namespace refgate::admin
