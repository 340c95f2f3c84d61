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
    domain::UrlPolicy url_policy;
    const domain::Clock* clock =
        nullptr;                        // decides which schedules lie in the future; none: system
    std::string public_base_url;        // of /go/ links; empty: links have no public URL
    std::string default_locale = "en";  // the snippet's disclosure, as /snippet/ picks it
};

class AdminService final : public AdminStore {
  public:
    explicit AdminService(std::unique_ptr<AdminRepository> repository,
                          AdminServiceOptions options = {});

    std::optional<StoredToken> find_token(const std::string& hash_hex) override;

    Result<codec::Page<codec::PartnerView>> list_partners(const std::string& query) override;
    Result<codec::PartnerView> get_partner(const std::string& slug) override;
    Result<codec::PartnerView> create_partner(const Actor& actor,
                                              const codec::NewPartner& partner) override;
    Result<codec::PartnerView> update_partner(const Actor& actor, const std::string& slug,
                                              const Precondition& if_match,
                                              const codec::PartnerPatch& patch) override;
    Result<codec::PartnerView> delete_partner(const Actor& actor, const std::string& slug,
                                              const Precondition& if_match) override;
    Result<codec::Page<codec::CodeView>> partner_codes(const std::string& slug) override;

    Result<codec::Page<codec::LinkView>> list_links(const LinkFilter& filter) override;
    Result<codec::LinkView> get_link(const std::string& slug) override;
    Result<codec::LinkView> create_link(const Actor& actor, const codec::NewLink& link) override;
    Result<codec::LinkView> update_link(const Actor& actor, const std::string& slug,
                                        const Precondition& if_match,
                                        const codec::LinkPatch& patch) override;
    Result<codec::LinkView> delete_link(const Actor& actor, const std::string& slug,
                                        const Precondition& if_match) override;
    Result<codec::LinkPreviewView> preview_link(const codec::LinkPreview& preview) override;
    Result<codec::LinkShareView> share_link(const std::string& slug,
                                            const std::string& src) override;
    Result<codec::LinkPlacements> link_placements(
        const std::string& slug,
        const std::vector<std::pair<std::string, std::uint64_t>>& channels) override;
    Result<codec::PlacementFound> find_placement(
        const std::string& token,
        const std::function<std::vector<std::string>(const std::string& link)>& channels_of)
        override;

    Result<codec::Page<AuditView>> audit(const AuditFilter& filter) override;

    Result<codec::Page<TokenView>> list_tokens() override;
    Result<CreatedToken> create_token(const Actor& actor, const NewToken& token) override;
    Result<TokenView> revoke_token(const Actor& actor, const std::string& name,
                                   const Precondition& if_match) override;
    // The CLI's token commands: the same rows and audit entries as the API's.
    // Throws std::invalid_argument on a bad name or a name that names a live token.
    // Also when the token would exceed its role or names an unknown partner.
    std::string create_token_text(const std::string& actor, const NewToken& token);
    std::vector<TokenView> token_list();
    bool revoke_token_named(const std::string& actor, const std::string& name);

    Result<codec::Page<codec::CountryGroupView>> list_country_groups() override;
    Result<codec::CountryGroupView> get_country_group(const std::string& family) override;
    Result<codec::CountryGroupView> put_country_group(const Actor& actor, const std::string& family,
                                                      const PutPrecondition& pre,
                                                      const codec::CountryGroupPut& put) override;
    Result<codec::CountryGroupView> delete_country_group(const Actor& actor,
                                                         const std::string& family,
                                                         const Precondition& pre) override;

    Result<codec::Page<codec::DomainView>> list_domains() override;
    Result<codec::DomainView> get_domain(const std::string& host) override;
    Result<codec::DomainView> put_domain(const Actor& actor, const std::string& host,
                                         const PutPrecondition& pre,
                                         const codec::DomainPut& put) override;
    Result<codec::DomainView> delete_domain(const Actor& actor, const std::string& host,
                                            const Precondition& pre) override;

    Result<codec::Page<codec::DisclosureView>> list_disclosures() override;
    Result<codec::DisclosureView> get_disclosure(const std::string& key,
                                                 const std::string& locale) override;
    Result<codec::DisclosureView> put_disclosure(const Actor& actor, const std::string& key,
                                                 const std::string& locale,
                                                 const PutPrecondition& pre,
                                                 const codec::DisclosureInput& put) override;
    Result<codec::Page<codec::DisclosureVersionView>> disclosure_versions(
        const std::string& key, const std::string& locale) override;
    Result<codec::DisclosurePreviewView> preview_disclosure(
        const codec::DisclosureInput& preview) override;

    Result<ImportReport> import_document(const Actor& actor, const ImportRequest& request) override;
    Result<codec::ImportDocument> export_document() override;

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
    std::optional<Result<codec::PartnerView>> schedule_code(AdminRows& rows, const Actor& actor,
                                                            const PartnerRow& row,
                                                            const codec::CodeSchedule& schedule);
    std::optional<Result<codec::PartnerView>> update_partner_row(AdminRows& rows,
                                                                 const PartnerRow& row,
                                                                 const codec::PartnerPatch& patch);
    std::vector<codec::FieldError> validate(AdminRows& rows, domain::Link& link);
    const domain::Clock& clock() const;
    // "<public_base_url>/go/<slug>", or none without a public base URL; on `host` (issue 46: the
    // link's domain) the base URL's scheme and path with that host.
    std::optional<std::string> public_url(const std::string& slug,
                                          const std::string& host = {}) const;
    // The host of the link's domain: its own, else the default domain's (empty: none defined).
    static std::string link_host(AdminRows& rows, const domain::Link& link);

    std::unique_ptr<AdminRepository> repository_;
    AdminServiceOptions options_;
    domain::SystemClock system_clock_;
};

}  // namespace refgate::admin
