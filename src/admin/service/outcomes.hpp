#pragma once

// How the admin service states its decisions.

#include <string>
#include <vector>

#include "refgate/admin/admin_store.hpp"
#include "refgate/codec/import_document.hpp"

namespace refgate::admin {

inline Outcome invalid(std::vector<FieldError> errors) {
    return Outcome{.kind = OutcomeKind::invalid, .errors = std::move(errors)};
}

inline Outcome simple(OutcomeKind kind, std::string detail) {
    return Outcome{.kind = kind, .detail = std::move(detail)};
}

// One object; its "version" is the answer's ETag.
inline Outcome object(OutcomeKind kind, nlohmann::ordered_json body) {
    Outcome o{.kind = kind};
    o.version = body.value("version", std::int64_t{0});
    o.body = std::move(body);
    return o;
}

inline std::vector<FieldError> field_errors(const std::vector<ImportIssue>& issues) {
    std::vector<FieldError> errors;
    for (const auto& issue : issues) errors.push_back({issue.field, issue.message});
    return errors;
}

inline bool precondition_holds(const Precondition& p, std::int64_t version) {
    return p.any || version == p.version;
}

}  // namespace refgate::admin
