#include "wire.hpp"

#include <charconv>

namespace refgate::http {

void append_response(std::string& out, const Response& response, const Framing& framing) {
    char digits[24];
    auto status = response.status();
    out.append("HTTP/1.1 ");
    out.append(digits, std::to_chars(digits, digits + sizeof digits, status).ptr);
    out.push_back(' ');
    out.append(reason_phrase(status));
    out.append("\r\n");
    out.append(response.headers());
    // A 304 has no body, and a Content-Length there would have to be the full body's length.
    if (status != 304) {
        out.append("Content-Length: ");
        out.append(digits,
                   std::to_chars(digits, digits + sizeof digits, response.body().size()).ptr);
        out.append("\r\n");
    }
    out.append("Date: ");
    out.append(framing.date);
    if (!framing.keep_alive) {
        out.append("\r\nConnection: close");
    } else if (framing.request_version == 10) {
        out.append("\r\nConnection: keep-alive");
    }
    out.append("\r\n\r\n");
    if (!framing.head && status != 304) out.append(response.body());
}

}  // namespace refgate::http
