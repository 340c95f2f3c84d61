#pragma once

// A response as bytes on the wire: status line, headers, framing, body.

#include <string>
#include <string_view>

#include "refgate/http/response.hpp"

namespace refgate::http {

struct Framing {
    bool head = false;  // the request was HEAD: the body is left out, its length stays
    bool keep_alive = true;
    int request_version = 11;  // an HTTP/1.0 client is told when the connection stays open
    std::string_view date;     // the Date header's value (IMF-fixdate)
};

// Appends `response` to `out` (pipelined answers go out in one write).
void append_response(std::string& out, const Response& response, const Framing& framing);

}  // namespace refgate::http
