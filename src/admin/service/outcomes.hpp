#pragma once

// How the admin service states its decisions.

#include <string>
#include <vector>

#include "refgate/admin/admin_rows.hpp"
#include "refgate/admin/admin_store.hpp"
#include "refgate/codec/import_document.hpp"

namespace refgate::admin {

// A refusal, for any typed answer: not found, a conflict, a stale If-Match, invalid.
struct Refusal {
    OutcomeKind kind = OutcomeKind::invalid;
    std::string detail;
    std::vector<codec::FieldError> errors;

    template <typename View>
    operator Result<View>() const {
        return Result<View>{.kind = kind, .detail = detail, .errors = errors};
    }
};

inline Refusal refused(OutcomeKind kind, std::string detail) {
    return Refusal{.kind = kind, .detail = std::move(detail)};
}

inline Refusal refused(std::vector<codec::FieldError> errors) {
    return Refusal{.kind = OutcomeKind::invalid, .errors = std::move(errors)};
}

// A single object's version is the answer's ETag; other views have none.
inline std::int64_t version_of(const codec::PartnerView& view) { return view.stamps.version; }
inline std::int64_t version_of(const codec::LinkView& view) { return view.stamps.version; }
inline std::int64_t version_of(const codec::CountryGroupView& view) { return view.version; }
inline std::int64_t version_of(const codec::DomainView& view) { return view.stamps.version; }
inline std::int64_t version_of(const TokenView& view) { return view.version; }
inline std::int64_t version_of(const CreatedToken& view) { return view.token.version; }
inline std::int64_t version_of(const codec::DisclosureView& view) {
    return view.disclosure.version;
}
template <typename View>
std::int64_t version_of(const View&) {
    return 0;
}

template <typename View>
Result<View> answered(OutcomeKind kind, View view) {
    std::int64_t version = version_of(view);
    return Result<View>{.kind = kind, .view = std::move(view), .version = version};
}

inline std::vector<codec::FieldError> field_errors(const std::vector<codec::ImportIssue>& issues) {
    std::vector<codec::FieldError> errors;
    for (const auto& issue : issues) errors.push_back({issue.field, issue.message});
    return errors;
}

inline bool precondition_holds(const Precondition& p, std::int64_t version) {
    return p.any || version == p.version;
}

}  // namespace refgate::admin
