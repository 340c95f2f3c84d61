#pragma once

// The server's HTTP/1.1 request parser: a fast path for the plain header nearly every client
// sends, Beast's basic_parser for everything else, both storing what they read into buffers
// the connection reuses (no allocation per request). Its interface has no Beast type, so that
// only request_parser.cpp instantiates the parser and tests can feed it bytes.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/config/config.hpp"
#include "refgate/http/request.hpp"

namespace refgate::http {

class Handler;

// What the parser stores about one request. Owned by the connection and reused: the strings
// keep their capacity, and `arena` is reserved to the header limit once, so views into it stay
// valid while a request is parsed.
struct RequestStorage {
    Method method = Method::other;
    std::string method_name;
    std::string target;
    // An absolute-form target's authority ("go.example.com:8080"), else empty.
    std::string authority;
    int version = 11;
    std::string arena;
    std::vector<HeaderField> fields;
    std::string body;
    int host_fields = 0;
    bool transfer_encoding = false;
    RequestNotes notes;  // the handler's (Handler::prepare), passed on in Request::notes

    void reset();
    // The parser read the request line of `path`: notes made for another path before it was
    // parsed are dropped.
    void confirm(std::string_view path) {
        if (notes.arrived.empty()) return;
        if (notes.arrived == path) {
            notes.arrived = {};
        } else {
            notes = {};
        }
    }
    bool bodiless() const { return method == Method::get || method == Method::head; }
    // The client waits for "100 Continue" before it sends its body (RFC 9110 10.1.1).
    bool expects_continue() const;
};

// A request the server answers itself, before any handler: this status, then the connection
// closes.
struct Refusal {
    int status = 400;
    std::string_view title = "Bad Request";
};

// How a parser reads a header: the common plain shape by a fast path of its own, anything else
// by Beast (the default); or all of it by Beast (tests compare the two).
enum class HeaderReading { plain_first, beast_only };

class RequestParser {
  public:
    // `storage` is reset; both must outlive the parser. One parser per request. `early` (when
    // set) is told the request's path as its request line and its header are parsed
    // (Handler::prepare, with storage.notes).
    RequestParser(RequestStorage& storage, const config::HttpLimits& limits,
                  Handler* early = nullptr, HeaderReading reading = HeaderReading::plain_first);
    ~RequestParser();
    RequestParser(const RequestParser&) = delete;
    RequestParser& operator=(const RequestParser&) = delete;

    struct Step {
        std::size_t used = 0;            // bytes of the input taken
        bool need_more = false;          // the input ends inside the request
        std::optional<Refusal> refusal;  // the request is refused; feed nothing more
    };
    // Parses as much of `input` as makes up the request (never a byte of the next one).
    Step put(std::string_view input);

    bool got_some() const;
    bool header_done() const;
    bool done() const;
    bool keep_alive() const;
    // The fast path read the header (HeaderReading).
    bool plain() const;

    // Checks of a complete header, before its body is read.
    std::optional<Refusal> check_header() const;
    // The announced Content-Length; 0 when none.
    std::uint64_t content_length() const;

  private:
    class Impl;
    Impl& impl();
    const Impl& impl() const;

    // The Beast parser lives here rather than on the heap: a parser per request costs no
    // allocation. request_parser.cpp checks that it fits.
    static constexpr std::size_t kImplSize = 192;
    alignas(std::max_align_t) unsigned char impl_[kImplSize];
};

}  // namespace refgate::http
