#pragma once

// The admin API's objects as C++ values, with no JSON type in sight: what the service is asked
// (commands: a new partner, a partner's patch, ...) and what it answers (views). Their JSON,
// read and written, is in import_document.hpp (commands) and stored_objects.hpp (views), the
// one place each shape is defined.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/domain/disclosure.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/targeting.hpp"

namespace refgate::codec {

// When a row was written and which version it is (ETag and If-Match).
struct Stamps {
    std::int64_t created_us = 0;  // microseconds since the epoch, UTC
    std::int64_t updated_us = 0;
    std::int64_t version = 0;
};

// A rule a request breaks, named by the field of its body (or query) it is about.
struct FieldError {
    std::string field;
    std::string message;
};

// ---- Views ----

struct PartnerView {
    domain::Partner partner;  // with what is scheduled, by valid_from
    Stamps stamps;
};

struct LinkView {
    domain::Link link;
    Stamps stamps;
};

// A page of a collection; next_cursor: where the next page starts (none: this is the last).
template <typename T>
struct Page {
    std::vector<T> items;
    std::optional<std::string> next_cursor;
};

// A code a partner had, has or will have: live from its moment until the next took over.
struct CodeView {
    std::string ref_param;
    std::string ref_code;
    std::int64_t live_from_us = 0;
    std::optional<std::int64_t> live_until_us;  // none: still live
    bool scheduled = false;
    std::vector<domain::ChannelCode> channel_codes;  // the per-channel codes live with it
};

// A branch of a link's rules that no reader gets: "rules[0]" or "rules[1].split[0]".
struct SkippedBranch {
    std::string branch;
    std::string partner;
    std::string reason;  // "partner_inactive"
    bool rule_skipped = false;
};

// What a reader would get from a link as it would be stored.
// What a click of one channel carries to a partner with placements (issue 42): the code, and
// the sub-ID token when the partner has a sub-ID parameter and the token is known (an opaque one
// needs the link's id: none before the link is saved; a prefix pattern names no one channel).
struct PreviewPlacement {
    std::string channel;  // "direct", or a channel (or "prefix*") of the partner's channel_codes
    std::string ref_code;
    std::optional<std::string> token;
    std::optional<std::string> location;  // that click's Location, when it is known
};

struct LinkPreviewView {
    std::optional<std::string> location;    // none: the link answers 404 or its fallback
    std::optional<std::string> public_url;  // when the preview names its slug
    std::vector<SkippedBranch> skipped_branches;
    std::optional<std::uint32_t> rule;  // with a reader: the rule taken (0: none)
    std::optional<std::vector<std::string>> split_locations;  // the split's, when it splits
    std::vector<PreviewPlacement> placements;  // per channel, for a partner with placements
};

// A link's public URL and the snippet /snippet/ serves; both none without a public base URL.
struct LinkShareView {
    std::optional<std::string> public_url;
    std::optional<std::string> html_snippet;
};

// A placement of a link (issue 42): its channel, the token its Locations carry, the human clicks.
struct PlacementView {
    std::string channel;
    std::string token;
    std::uint64_t human_clicks = 0;
};

// A link's placements, every channel with clicks (no pages: a link has at most the channels its
// daily cap lets through).
struct LinkPlacements {
    std::vector<PlacementView> items;
    // Whether the link's Locations carry these tokens (its partner, or a rule's, has a sub-ID
    // parameter); not in the answer.
    bool carried = false;
};

// What a placement token names: the link, and its channel (none: no channel of the link with
// clicks, nor "direct" or "other", gives the token).
struct PlacementFound {
    std::string token;
    std::string link;
    std::optional<std::string> channel;
    std::string domain;  // the link's domain as stored (issue 46): empty on the default domain
};

// The import document (import_document.hpp), and the export: every partner and link, the
// current disclosures and the country groups.
struct ImportDocument {
    std::vector<domain::Partner> partners;
    std::vector<domain::Link> links;
    // Optional "disclosures": [{"key", "locale", "text", "html"?}], html already sanitised.
    std::vector<domain::Disclosure> disclosures;
    // Optional "country_groups": [{"family", "fallbacks": {"AT": "DE", ...}}].
    std::vector<domain::CountryGroup> country_groups;
    // Optional "domains" (issue 46): [{"host", "default", "not_found"}].
    std::vector<domain::Domain> domains;
};

// A branded domain as stored; `version` is the ETag.
struct DomainView {
    domain::Domain domain;
    Stamps stamps;
};

// PUT /domains/{host}: the whole domain.
struct DomainPut {
    domain::Domain domain;
    std::vector<FieldError> errors;
};

// A partner family's country fallbacks as stored; `version` is the ETag.
struct CountryGroupView {
    domain::CountryGroup group;
    std::int64_t updated_us = 0;
    std::int64_t version = 0;
};

// The current version of a disclosure text and who wrote it.
struct DisclosureView {
    domain::Disclosure disclosure;
    std::int64_t created_us = 0;
    std::string created_by;
};

// One version in a disclosure's history.
struct DisclosureVersionView {
    domain::Disclosure disclosure;
    std::int64_t created_us = 0;
    std::string created_by;
};

// A disclosure text as pages would show it.
struct DisclosurePreviewView {
    std::string html;
    std::string fragment;
};

// ---- Commands ----
// Each carries the rules its body broke (`errors`); the service answers those where it always
// has: a create before it looks anything up, a patch once the object is found and If-Match holds.

struct NewPartner {
    domain::Partner partner;  // allowed domains canonical
    std::vector<FieldError> errors;
};

struct NewLink {
    domain::Link link;
    std::vector<FieldError> errors;
};

// An extra parameter a partner patch sets (value), removes (null) or sets to something that is
// not a string (neither).
struct ParamEdit {
    std::string name;
    std::optional<std::string> value;
    bool remove = false;
};

// PATCH {"ref_code": C, "valid_from": T}: C takes over at T; a null code cancels what is
// scheduled at T.
struct CodeSchedule {
    domain::SysSeconds valid_from{};
    std::optional<std::string> ref_code;  // none (and no channel_codes): cancel
    std::optional<std::vector<domain::ChannelCode>>
        channel_codes;  // issue 42: switched at valid_from
};

// A JSON merge patch (RFC 7396) of a partner, read field by field as the import reads them:
// `fields` holds the values of the fields named in `given` (a null gives the field its default,
// or "is required"), extra parameters merge name by name.
struct PartnerPatch {
    domain::Partner fields;
    std::vector<std::string> given;
    std::vector<ParamEdit> extra_params;
    std::optional<CodeSchedule> schedule;  // valid_from given: a code scheduled instead
    std::vector<FieldError> errors;

    bool sets(std::string_view field) const;
};

// The stored partner with the patch applied, and every rule the result breaks, in the order the
// import reports them.
struct PatchedPartner {
    domain::Partner partner;
    std::vector<FieldError> errors;
};
PatchedPartner apply_patch(const PartnerPatch& patch, domain::Partner stored);

struct LinkPatch {
    domain::Link fields;
    std::vector<std::string> given;
    std::vector<FieldError> errors;

    bool sets(std::string_view field) const;
};
domain::Link apply_patch(const LinkPatch& patch, domain::Link stored);

// Whether two partners (links) have the same import-format fields (not ids nor schedules).
bool same_fields(const domain::Partner& a, const domain::Partner& b);
bool same_fields(const domain::Link& a, const domain::Link& b);

// A reader of a link preview: each trait optional.
struct PreviewReader {
    domain::CountryCode country = 0;
    domain::Platform platform = domain::Platform::unknown;
    std::string language;
};

// POST /links/preview: a link as create would read it (the slug optional) and a reader.
struct LinkPreview {
    domain::Link link;
    bool named = false;  // the body gave a slug: the answer has the public URL
    std::optional<PreviewReader> reader;
    std::vector<FieldError> errors;
};

// PUT /country-groups/{family}: the family's whole mapping.
struct CountryGroupPut {
    domain::CountryGroup group;
    std::vector<FieldError> errors;
};

// PUT /disclosures/{key}/{locale}, and a preview: the text (and HTML) as the import reads it.
struct DisclosureInput {
    domain::Disclosure disclosure;
    std::vector<FieldError> errors;
};

}  // namespace refgate::codec
