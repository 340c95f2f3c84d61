#pragma once

// A parsed request as handlers see it: views into buffers the connection reuses. Valid only
// during the handler call. No Beast type appears here, so handlers build without Beast.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace refgate::http {

enum class Method { get, head, post, put, patch, del, options, other };

struct HeaderField {
    std::string_view name;
    std::string_view value;
};

// The socket peer, kept only in memory for the length of one request.
struct PeerAddress {
    std::array<std::uint8_t, 16> bytes{};  // IPv4 as IPv4-mapped IPv6
};

// What handlers worked out about a request before handling it (Handler::prepare), kept with the
// request for handle(): so that a route or a key is worked out once per request, and nothing is
// shared between requests (a request answered on the blocking pool carries its own). Zeroed for
// each request; a handler that finds its part unset works it out again.
struct RequestNotes {
    // The router's: the route the path resolves to, noted by that router (`router`).
    const void* router = nullptr;
    const void* route = nullptr;
    // The answering handler's own (`handler`: the one that noted them), set by its prepare()
    // and read by its handle().
    const void* handler = nullptr;
    std::uint32_t steps = 0;  // its prepare() calls so far (a handler that loads in steps)
    std::uint64_t values[2] = {};
    // Set while the notes were made for a path read ahead of the parser (Parsed::arrived): the
    // parser keeps them only when its request line has that very path (RequestStorage::confirm).
    std::string_view arrived;
};

struct Request {
    Method method = Method::other;
    std::string_view method_name;
    std::string_view target;     // origin-form (path and query of an absolute-form target)
    std::string_view authority;  // an absolute-form target's authority, else empty
    int version = 11;            // 10 or 11
    const std::vector<HeaderField>* fields = nullptr;
    std::string_view body;
    PeerAddress peer;
    RequestNotes notes;

    std::string_view path() const {
        auto q = target.find('?');
        return q == std::string_view::npos ? target : target.substr(0, q);
    }
    std::string_view query() const {
        auto q = target.find('?');
        return q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
    }
    // The first field of that name (case-insensitive); empty when absent.
    std::string_view header(std::string_view name) const;
    bool has_header(std::string_view name) const;
};

// ASCII case-insensitive equality (header names, tokens). Inline: the redirect path compares a
// few field names per request, mostly bytes that are equal outright.
inline bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
        if (x == y) continue;
        // Equal but for case: they differ in bit 5 alone, and are letters.
        const auto folded = static_cast<unsigned char>(x | 0x20);
        if ((x ^ y) != 0x20 || folded < 'a' || folded > 'z') return false;
    }
    return true;
}

// The part after the authority of an absolute-form request target ("http://h/go/x?a" ->
// "/go/x?a"; "http://h" -> ""; "http://h?a" -> "?a"): what remains of its origin-form once a
// leading '/' is supplied. nullopt when `target` is not an http or https URI with a host.
std::optional<std::string_view> absolute_form_path(std::string_view target);

}  // namespace refgate::http
