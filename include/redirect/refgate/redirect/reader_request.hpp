#pragma once

// What a redirect reads about its reader, read once per request and shared by the targeting
// rules and the click count: the header fields both look at, found in one pass over the headers
// (the first of each name, as Request::header would give), and the client address (the socket
// peer, or the trusted X-Forwarded-For hop). Views into the request: valid while it is, and kept
// by nobody past the call.

#include <cstdint>
#include <string_view>
#include <vector>

#include "refgate/clicks/salts.hpp"
#include "refgate/domain/ip_network.hpp"
#include "refgate/http/request.hpp"

namespace refgate::redirect {

struct ReaderRequest {
    std::string_view user_agent, accept_language, purpose, sec_purpose, x_purpose, x_moz, dnt,
        sec_gpc, forwarded_for;
    domain::IpBytes address{};

    // The keyed hash of the reader, link and day under the day's salt (unique_hash), once one of
    // its users computed it: a split's draw and the unique estimate's sample are the same hash.
    struct SaltedHash {
        clicks::SaltKey salt{};
        std::int64_t link_id = 0;
        std::uint64_t value = 0;
        bool known = false;
    };
    SaltedHash salted_hash;

    // The hash of this reader for `link_id` under `salt`, computed at most once per request.
    std::uint64_t hash(const clicks::SaltKey& salt, std::int64_t link_id);

    static ReaderRequest of(const http::Request& request,
                            const std::vector<domain::IpNetwork>& trusted_proxies);
};

}  // namespace refgate::redirect
