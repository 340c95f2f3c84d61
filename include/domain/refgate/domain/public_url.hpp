#pragma once

// The public URL of a link (issue 46: on the link's own domain). Everything that prints a link's
// URL builds it here: the share answer and its QR codes, the link preview, /snippet/.

#include <string>
#include <string_view>

namespace refgate::domain {

// "<base_url>/go/<slug>" where base_url is REFGATE_PUBLIC_BASE_URL (an origin and a path); on
// `host` when it is not empty (the link's domain, or the default domain's host for a link without
// one): the base URL's scheme and path kept, its authority replaced by `host`. Empty when
// `base_url` is (no public URL configured).
std::string public_link_url(std::string_view base_url, std::string_view host,
                            std::string_view slug);

// The host of the base URL's authority, lower case, without a port ("https://Go.Example.com:8443/r"
// -> "go.example.com"); empty when `base_url` is empty or names none.
std::string public_base_host(std::string_view base_url);

}  // namespace refgate::domain
