#pragma once

// The host a request names (issue 46: a domain's links are picked by it): the Host field, or the
// authority of an absolute-form target, without its port. Views into the request; nothing
// allocates (the redirect path reads it for every click when domains are defined).

#include <array>
#include <cstddef>
#include <string_view>

namespace refgate::domain {

// A DNS name is at most 253 bytes; an IPv6 literal with its brackets far less.
constexpr std::size_t kMaxRequestHost = 253;

// The host of an authority: "Go.Example.com:8080" -> "Go.Example.com", "[::1]:80" -> "[::1]",
// "go.example.com." -> "go.example.com" (the root's dot). Empty when there is none or it is not
// a host a client may send: user info, a port that is not digits, bytes outside letters, digits,
// '-', '.' (and ':' within brackets), longer than kMaxRequestHost.
std::string_view authority_host(std::string_view authority);

// The authority of an absolute-form target ("http://h:1/go/x" -> "h:1"); empty when the target
// is not http(s)://authority...
std::string_view absolute_form_authority(std::string_view target);

// `host` in lower case, written into `out`; a view of `out`.
std::string_view lower_host(std::string_view host, std::array<char, kMaxRequestHost>& out);

}  // namespace refgate::domain
