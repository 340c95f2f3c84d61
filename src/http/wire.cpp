#include "wire.hpp"

#include <charconv>
#include <cstring>

namespace refgate::http {
namespace {

char* put(char* to, std::string_view text) {
    if (!text.empty()) std::memcpy(to, text.data(), text.size());  // an empty view may be null
    return to + text.size();
}

}  // namespace

void append_response(std::string& out, const Response& response, const Framing& framing) {
    const int status = response.status();
    char status_digits[16];
    const std::string_view status_text(
        status_digits,
        std::to_chars(status_digits, status_digits + sizeof status_digits, status).ptr);
    // A 304 has no body, and a Content-Length there would have to be the full body's length.
    const bool has_length = status != 304;
    char length_digits[24];
    const std::string_view length_text(
        length_digits,
        std::to_chars(length_digits, length_digits + sizeof length_digits, response.body().size())
            .ptr);
    const std::string_view reason = reason_phrase(status);
    const std::string_view connection = !framing.keep_alive ? "\r\nConnection: close"
                                        : framing.request_version == 10
                                            ? "\r\nConnection: keep-alive"
                                            : "";
    const std::string_view body =
        framing.head || !has_length ? std::string_view{} : std::string_view(response.body());

    constexpr std::string_view kVersion = "HTTP/1.1 ",
                               kLength = "Content-Length: ", kDate = "Date: ";
    // Sized once and written through a pointer: no capacity check per piece.
    const std::size_t size =
        kVersion.size() + status_text.size() + 1 + reason.size() + 2 + response.headers().size() +
        (has_length ? kLength.size() + length_text.size() + 2 : 0) + kDate.size() +
        framing.date.size() + connection.size() + 4 + body.size();
    const std::size_t start = out.size();
    out.resize(start + size);
    char* to = put(out.data() + start, kVersion);
    to = put(to, status_text);
    *to++ = ' ';
    to = put(to, reason);
    to = put(to, "\r\n");
    to = put(to, response.headers());
    if (has_length) {
        to = put(to, kLength);
        to = put(to, length_text);
        to = put(to, "\r\n");
    }
    to = put(to, kDate);
    to = put(to, framing.date);
    to = put(to, connection);
    to = put(to, "\r\n\r\n");
    put(to, body);
}

}  // namespace refgate::http
