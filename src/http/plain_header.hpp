#pragma once

// The request header nearly every client sends, read in one pass without Beast: the parser's
// fast path. Anything outside its shape is left to Beast, which then reads the request from its
// first byte as if this had never looked.

#include <cstddef>
#include <optional>
#include <string_view>

#include "refgate/config/config.hpp"
#include "refgate/http/request_parser.hpp"
#include "refgate/http/server.hpp"

namespace refgate::http {

struct PlainHeader {
    std::size_t size = 0;  // bytes of the header, its empty line included
    bool keep_alive = true;
};

// Reads the header at the start of `input` when it is whole there, within the limits, and plain:
// a GET or HEAD of an origin-form target of visible ASCII, HTTP/1.1 or 1.0, CRLF line ends, fields
// of visible ASCII (and tabs) without folding, no Content-Length, Transfer-Encoding or Upgrade,
// and a Connection (or Proxy-Connection) that is one "close" or "keep-alive" if any. Stores it as
// the Beast path would (the same fields, values trimmed, the same Host count and keep-alive) and
// tells `early` the path at the request line and at the header's end. nullopt for anything else:
// `storage` is then reset (and `early` may have been told the request line, which Beast then
// tells again).
std::optional<PlainHeader> read_plain_header(std::string_view input,
                                             const config::HttpLimits& limits,
                                             RequestStorage& storage, Handler* early);

// The path of the request line `input` starts with, before it is parsed: a GET or HEAD of an
// origin-form target whose end (a space, or a '?' before it) is there. Empty otherwise. A hint
// for prefetches only (Handler::Parsed::arrived): the parser decides what the request is.
std::string_view arriving_path(std::string_view input, const config::HttpLimits& limits);

}  // namespace refgate::http
