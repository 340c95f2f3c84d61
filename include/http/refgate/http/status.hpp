#pragma once

// Every HTTP status refgate answers with, and its reason phrase (RFC 9110). One table for the
// status line and the metrics' status labels, so that a status the service sends can neither
// come out with an unknown phrase nor land in the "other" label.

#include <array>
#include <string_view>

namespace refgate::http {

struct HttpStatus {
    int code;
    std::string_view reason;
};

inline constexpr std::array<HttpStatus, 27> kHttpStatuses = {{
    {100, "Continue"},
    {200, "OK"},
    {201, "Created"},
    {204, "No Content"},
    {301, "Moved Permanently"},
    {302, "Found"},
    {304, "Not Modified"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {403, "Forbidden"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {406, "Not Acceptable"},
    {408, "Request Timeout"},
    {409, "Conflict"},
    {410, "Gone"},
    {412, "Precondition Failed"},
    {413, "Content Too Large"},
    {414, "URI Too Long"},
    {415, "Unsupported Media Type"},
    {422, "Unprocessable Content"},
    {428, "Precondition Required"},
    {429, "Too Many Requests"},
    {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {503, "Service Unavailable"},
}};

}  // namespace refgate::http
