#pragma once

// What the admin API's resource handlers ask, and how the answer comes back: typed commands in
// (refgate/codec/admin_objects.hpp and below), a decision with a typed view out (Result); no
// JSON type (the HTTP layer reads bodies into commands and writes views with the codec).
// AdminService (admin_service.hpp) implements it over a row repository; handler tests use a fake.

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "refgate/admin/scopes.hpp"
#include "refgate/codec/admin_objects.hpp"
#include "refgate/codec/import_diff.hpp"

namespace refgate::admin {

enum class Role { viewer = 0, editor = 1, admin = 2 };

std::string_view to_string(Role role);
std::optional<Role> parse_role(std::string_view text);

// Who is asking: the token's name (or "user:<name>" for a console session) and role.
struct Actor {
    std::string name;
    Role role = Role::viewer;
    std::string session;  // a console session's id hash (hex); empty for a token
    // A token's scopes (issue 46); all: whatever the role allows (a console session).
    Scopes scopes = scope::all;
    Reach reach;  // a token's partner and domain restrictions; none for a console session
};

// A live token found by its hash; the handler compares the hash again in constant time.
struct StoredToken {
    Actor actor;
    std::string hash_hex;
    std::string expires_at;  // RFC 3339; empty: never
    bool expired = false;    // expires_at has passed: the token is refused (401)
};

using refgate::codec::FieldError;

enum class OutcomeKind {
    ok,
    created,
    deleted,
    not_found,
    conflict,
    stale,
    invalid,
    precondition_required,
    bad_request  // a body that is not what its media type says (400)
};

// What the service decided, with the view it answers (ok and created: the object now; deleted:
// the object as it was). `version` is a single object's (its ETag), 0 for other answers.
template <typename View>
struct Result {
    OutcomeKind kind = OutcomeKind::ok;
    View view{};
    std::int64_t version = 0;
    std::string detail;                     // for conflicts and not-found answers
    std::vector<codec::FieldError> errors;  // for invalid
};

// A token as the API shows it; never its hash. Its version is its row's id.
struct TokenView {
    std::string name;
    std::string role;
    std::string created_at;    // RFC 3339, whole seconds
    std::string last_used_on;  // "YYYY-MM-DD"; empty: never
    std::string revoked_at;    // RFC 3339; empty: live
    std::int64_t version = 0;
    std::vector<std::string> scopes;    // issue 46: what it may do, within its role
    std::vector<std::string> partners;  // empty: every partner
    std::vector<std::string> domains;   // empty: every domain
    std::string expires_at;             // RFC 3339; empty: never
};

// A token just created, with its text: shown this once.
struct CreatedToken {
    TokenView token;
    std::string text;
};

// POST /tokens: {name, role}, and the rules the body broke.
struct NewToken {
    std::string name;
    Role role = Role::viewer;
    std::optional<Scopes> scopes;  // none given: what the role allows
    Reach reach;
    std::string expires_at;  // RFC 3339, UTC; empty: never
    std::vector<codec::FieldError> errors;
};

// An audit entry as the API shows it; `before` and `after` are the objects' JSON text as the
// change recorded them (empty: none).
struct AuditView {
    std::int64_t id = 0;
    std::int64_t at_us = 0;
    std::string actor;
    std::string entity;
    std::string slug;
    std::string action;
    std::string before;
    std::string after;
};

// What an import did or would do: {dry_run, applied, created, changed, unchanged, refused}.
struct ImportReport {
    codec::ImportDiff diff;
    std::vector<codec::ImportRefusal> refused;
    bool dry_run = false;
    bool applied = false;
};

// An If-Match precondition: a version, or any (`*`).
struct Precondition {
    bool any = false;
    std::int64_t version = 0;
};

// The preconditions of a PUT that creates or replaces: If-Match (none given: nullopt) and
// If-None-Match: *.
struct PutPrecondition {
    std::optional<Precondition> if_match;
    bool if_none_match_any = false;
};

struct LinkFilter {
    std::string partner;  // empty: any
    std::string status;   // empty: any
    std::string query;    // a substring of the slug or the destination, any case; empty: any
    std::optional<int> expiring_within_days;  // expires_at between now and now + N days
    std::string health;  // a confirmed link-health state (code_dropped, ...); empty: any
    std::string cursor;  // the last slug of the previous page; empty: from the start
    std::size_t limit = 50;
};

// An import file as the API received it.
struct ImportRequest {
    std::string text;
    bool csv = false;      // text/csv: links; else the JSON import document
    bool dry_run = false;  // report what would change, apply nothing
};

struct AuditFilter {
    std::string entity;                    // empty: any
    std::string slug;                      // empty: any
    std::string actor;                     // exact; empty: any
    std::optional<std::int64_t> since_us;  // at or after, microseconds since the epoch
    std::optional<std::int64_t> until_us;  // before
    std::size_t limit = 100;
};

// PostgreSQL could not be reached, or could not serve the statement now (the API's 503).
class StoreError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// PostgreSQL refused a value of the request (text that is not UTF-8, a number out of range): the
// client's mistake (400), not an outage.
class RejectedInput : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Every write records an audit row in its own transaction. Methods throw StoreError when the
// database fails; the handler answers 503 then. Implementations are thread-safe.
class AdminStore {
  public:
    virtual ~AdminStore() = default;

    virtual std::optional<StoredToken> find_token(const std::string& hash_hex) = 0;

    // Partners whose slug or name contains `query` (any case); empty: all.
    virtual Result<codec::Page<codec::PartnerView>> list_partners(const std::string& query) = 0;
    virtual Result<codec::PartnerView> get_partner(const std::string& slug) = 0;
    virtual Result<codec::PartnerView> create_partner(const Actor& actor,
                                                      const codec::NewPartner& partner) = 0;
    virtual Result<codec::PartnerView> update_partner(const Actor& actor, const std::string& slug,
                                                      const Precondition& if_match,
                                                      const codec::PartnerPatch& patch) = 0;
    virtual Result<codec::PartnerView> delete_partner(const Actor& actor, const std::string& slug,
                                                      const Precondition& if_match) = 0;
    virtual Result<codec::Page<codec::CodeView>> partner_codes(const std::string& slug) = 0;

    virtual Result<codec::Page<codec::LinkView>> list_links(const LinkFilter& filter) = 0;
    virtual Result<codec::LinkView> get_link(const std::string& slug) = 0;
    virtual Result<codec::LinkView> create_link(const Actor& actor, const codec::NewLink& link) = 0;
    virtual Result<codec::LinkView> update_link(const Actor& actor, const std::string& slug,
                                                const Precondition& if_match,
                                                const codec::LinkPatch& patch) = 0;
    virtual Result<codec::LinkView> delete_link(const Actor& actor, const std::string& slug,
                                                const Precondition& if_match) = 0;
    // What a reader would get from a link as create would store it, with nothing stored;
    // invalid: the errors create would give.
    virtual Result<codec::LinkPreviewView> preview_link(const codec::LinkPreview& preview) = 0;
    // The link's public URL and the snippet GET /snippet/{slug} serves (both none without a
    // public base URL), for the channel `src` when it is not empty (`?src=` in both; the caller
    // checked it with counted_channel()); not_found for an unknown slug.
    virtual Result<codec::LinkShareView> share_link(const std::string& slug,
                                                    const std::string& src = {}) = 0;
    // Placements (issue 42; src/admin/placements.cpp adds the clicks). The link's token for each
    // of `channels` (channel, human clicks); not_found for an unknown slug.
    virtual Result<codec::LinkPlacements> link_placements(
        const std::string& slug,
        const std::vector<std::pair<std::string, std::uint64_t>>& channels) {
        (void)channels;
        return {OutcomeKind::not_found, {}, 0, "no link '" + slug + "'", {}};
    }
    // The link a token names and its channel, none when the token names the link but none of
    // "direct", "other" and `channels_of(link slug)`; not_found when it names no link.
    virtual Result<codec::PlacementFound> find_placement(
        const std::string& token,
        const std::function<std::vector<std::string>(const std::string& link)>& channels_of) {
        (void)channels_of;
        return {OutcomeKind::not_found, {}, 0, "no placement '" + token + "'", {}};
    }

    // Newest first.
    virtual Result<codec::Page<AuditView>> audit(const AuditFilter& filter) = 0;

    // The token text itself appears once, in the answer to create.
    virtual Result<codec::Page<TokenView>> list_tokens() = 0;
    virtual Result<CreatedToken> create_token(const Actor& actor, const NewToken& token) = 0;
    virtual Result<TokenView> revoke_token(const Actor& actor, const std::string& name,
                                           const Precondition& if_match) = 0;

    // An import, all or nothing; with a refusal and no dry run, invalid with the report too
    // (nothing applied); bad_request for a body that is not JSON.
    virtual Result<ImportReport> import_document(const Actor& actor,
                                                 const ImportRequest& request) = 0;
    // Everything, as the import document holds it.
    virtual Result<codec::ImportDocument> export_document() = 0;

    // The partner families' country fallbacks, by family.
    virtual Result<codec::Page<codec::CountryGroupView>> list_country_groups() = 0;
    virtual Result<codec::CountryGroupView> get_country_group(const std::string& family) = 0;
    // Creates (201) or replaces (200; If-Match needed) one family's whole mapping.
    virtual Result<codec::CountryGroupView> put_country_group(
        const Actor& actor, const std::string& family, const PutPrecondition& pre,
        const codec::CountryGroupPut& put) = 0;
    virtual Result<codec::CountryGroupView> delete_country_group(const Actor& actor,
                                                                 const std::string& family,
                                                                 const Precondition& pre) = 0;

    // Branded domains (issue 46), by host. Creates (201) or replaces (200; If-Match needed).
    virtual Result<codec::Page<codec::DomainView>> list_domains() {
        throw StoreError("no domains here");
    }
    virtual Result<codec::DomainView> get_domain(const std::string& /*host*/) {
        throw StoreError("no domains here");
    }
    virtual Result<codec::DomainView> put_domain(const Actor& /*actor*/,
                                                 const std::string& /*host*/,
                                                 const PutPrecondition& /*pre*/,
                                                 const codec::DomainPut& /*put*/) {
        throw StoreError("no domains here");
    }
    virtual Result<codec::DomainView> delete_domain(const Actor& /*actor*/,
                                                    const std::string& /*host*/,
                                                    const Precondition& /*pre*/) {
        throw StoreError("no domains here");
    }

    // Disclosure texts by (key, locale); every change stores a new version.
    virtual Result<codec::Page<codec::DisclosureView>> list_disclosures() = 0;
    virtual Result<codec::DisclosureView> get_disclosure(const std::string& key,
                                                         const std::string& locale) = 0;
    // Creates version 1 (201) or the next version (200); replacing needs If-Match.
    virtual Result<codec::DisclosureView> put_disclosure(const Actor& actor, const std::string& key,
                                                         const std::string& locale,
                                                         const PutPrecondition& pre,
                                                         const codec::DisclosureInput& put) = 0;
    // Every version, newest first.
    virtual Result<codec::Page<codec::DisclosureVersionView>> disclosure_versions(
        const std::string& key, const std::string& locale) = 0;
    // The text (and optional HTML) as pages would show it, nothing stored.
    virtual Result<codec::DisclosurePreviewView> preview_disclosure(
        const codec::DisclosureInput& preview) = 0;
};

}  // namespace refgate::admin
