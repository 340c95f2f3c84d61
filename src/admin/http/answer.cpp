#include "answer.hpp"

#include <charconv>

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

// "\"<version>\"". Built by appending: g++ 12 -O3 warns (-Wrestrict) on "lit" + std::string&&.
std::string version_etag(std::int64_t version) {
    std::string tag = "\"";
    tag.append(std::to_string(version));
    tag.push_back('"');
    return tag;
}

// A weak validator for answers that are not one versioned object.
std::string body_etag(const std::string& body) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : body) h = (h ^ c) * 1099511628211ull;
    char digits[17];
    auto end = std::to_chars(digits, digits + sizeof digits, h, 16).ptr;
    return "W/\"" + std::string(digits, end) + "\"";
}

Json error_list(const std::vector<codec::FieldError>& errors) {
    Json list = Json::array();
    for (const auto& e : errors) {
        Json item{{"field", e.field}, {"message", e.message}};
        // A destination rule is named at the end of its message: "... [not_https]".
        auto open = e.message.rfind(" [");
        if (open != std::string::npos && e.message.ends_with("]"))
            item["rule"] = e.message.substr(open + 2, e.message.size() - open - 3);
        list.push_back(std::move(item));
    }
    return list;
}

// Text echoed from a request (a slug in a path, a search) may not be UTF-8: it is written with
// U+FFFD in place of a bad byte, never thrown over.
std::string to_text(const Json& body) {
    return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

void Answer::json(int status, const Json& body, std::int64_t version) {
    response_.set_status(status);
    response_.add_header("Content-Type", "application/json");
    response_.add_header("Cache-Control", "no-store");
    response_.body() = to_text(body);
    response_.add_header("ETag", version > 0 ? version_etag(version) : body_etag(response_.body()));
}

void Answer::problem(int status, std::string_view type, std::string_view detail,
                     const std::vector<codec::FieldError>& errors, const Json& extra) {
    write_problem(status, type, http::reason_phrase(status), detail, errors, extra);
}

void Answer::titled_problem(int status, std::string_view type, std::string_view title,
                            std::string_view detail) {
    write_problem(status, type, title, detail, {}, nullptr);
}

void Answer::write_problem(int status, std::string_view type, std::string_view title,
                           std::string_view detail, const std::vector<codec::FieldError>& errors,
                           const Json& extra) {
    Json body{{"type", "urn:refgate:problem:" + std::string(type)},
              {"title", std::string(title)},
              {"status", status},
              {"detail", std::string(detail)}};
    if (status == 422) body["errors"] = error_list(errors);
    if (extra.is_object()) body.update(extra);
    response_.set_status(status);
    response_.add_header("Content-Type", "application/problem+json");
    response_.add_header("Cache-Control", "no-store");
    response_.body() = to_text(body);
    response_.add_header("ETag", body_etag(response_.body()));
}

void Answer::invalid_query(const std::vector<codec::FieldError>& errors) {
    problem(422, "validation", "the query breaks the rules in 'errors'", errors);
}

void Answer::outcome(const Outcome& o, std::string_view location) {
    switch (o.kind) {
        case OutcomeKind::ok:
            return json(200, o.body, o.version);
        case OutcomeKind::created:
            json(201, o.body, o.version);
            if (!location.empty()) response_.add_header("Location", location);
            return;
        case OutcomeKind::deleted:
            response_.set_status(204);
            response_.add_header("ETag", version_etag(o.version));
            return;
        case OutcomeKind::not_found:
            return problem(404, "not-found", o.detail);
        case OutcomeKind::conflict:
            return problem(409, "conflict", o.detail);
        case OutcomeKind::stale:
            return problem(412, "stale", o.detail + " (If-Match does not match the ETag)");
        case OutcomeKind::invalid:
            return problem(422, "validation", "the request body breaks the rules in 'errors'",
                           o.errors, o.body);
        case OutcomeKind::bad_request:
            return problem(400, "bad-json", o.detail);
        case OutcomeKind::precondition_required:
            return problem(428, "precondition-required", o.detail);
    }
}

void Answer::csv(std::string body) {
    response_.set_status(200);
    response_.add_header("Content-Type", "text/csv; charset=utf-8; header=present");
    response_.add_header("Cache-Control", "no-store");
    response_.body() = std::move(body);
}

}  // namespace refgate::admin
