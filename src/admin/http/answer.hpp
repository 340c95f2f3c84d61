#pragma once

// How the admin API writes its answers: JSON with an ETag, RFC 9457 problem details.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_store.hpp"
#include "refgate/codec/commissions_input.hpp"
#include "refgate/codec/stored_objects.hpp"
#include "refgate/http/response.hpp"

namespace refgate::admin {

// A decision with its object as JSON: what a typed Result is written as.
struct Outcome {
    OutcomeKind kind = OutcomeKind::ok;
    nlohmann::ordered_json body;            // the object, or {"items": [...], "next_cursor": ...}
    std::int64_t version = 0;               // of a single object; 0 for collections
    std::string detail;                     // for conflicts and not-found answers
    std::vector<codec::FieldError> errors;  // for invalid
};

class Answer {
  public:
    explicit Answer(http::Response& response) : response_(response) {}

    // 200 or 201 with the object; its ETag is "version" when given, else a hash of the body.
    void json(int status, const nlohmann::ordered_json& body, std::int64_t version = 0);
    // A problem answer; at 422 with per-field `errors`.
    // `extra` (an object) adds members, such as an import's report.
    void problem(int status, std::string_view type, std::string_view detail,
                 const std::vector<codec::FieldError>& errors = {},
                 const nlohmann::ordered_json& extra = nullptr);
    // A problem answer whose title is not the status's reason phrase.
    void titled_problem(int status, std::string_view type, std::string_view title,
                        std::string_view detail);
    // 422 for a query that breaks the rules in `errors`.
    void invalid_query(const std::vector<codec::FieldError>& errors);
    // What the service decided; `location` names a created resource.
    void outcome(const Outcome& outcome, std::string_view location = {});
    // The same for a typed answer: its view as the codec shapes it (view_json).
    // A refusal shows no view, but an import's report beside its errors.
    template <typename View>
    void outcome(const Result<View>& result, std::string_view location = {}) {
        bool shown = result.kind == OutcomeKind::ok || result.kind == OutcomeKind::created;
        bool report =
            result.kind == OutcomeKind::invalid &&
            (std::is_same_v<View, ImportReport> || std::is_same_v<View, codec::CommissionsReport>);
        outcome(Outcome{.kind = result.kind,
                        .body = shown || report ? view_json(result.view) : nlohmann::ordered_json(),
                        .version = result.version,
                        .detail = result.detail,
                        .errors = result.errors},
                location);
    }
    void csv(std::string body);

    http::Response& response() { return response_; }

  private:
    void write_problem(int status, std::string_view type, std::string_view title,
                       std::string_view detail, const std::vector<codec::FieldError>& errors,
                       const nlohmann::ordered_json& extra);

    http::Response& response_;
};

}  // namespace refgate::admin
