#pragma once

// Outbound requests of the link-health checker: one hop at a time, each host resolved once and
// the connection pinned to that address, private and loopback addresses refused.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "refgate/config/config.hpp"
#include "refgate/domain/link_health.hpp"

namespace refgate::linkcheck {

inline constexpr std::size_t kMaxBodyBytes = 512 * 1024;

struct FetcherOptions {
    std::string ca_file;  // PEM; empty: the system's trust store
    std::vector<config::ResolveEntry>
        resolve;  // test-only fixed addresses, also let past the refusal
    std::string user_agent = "refgate-linkcheck";
    std::chrono::milliseconds connect_timeout{5'000};
    std::chrono::milliseconds timeout{10'000};  // the whole hop
    std::size_t max_body = kMaxBodyBytes;
    // When set and true, a transfer in flight is aborted (within about a second: curl's progress
    // callback) and no new one starts: a stop never waits for a hop's timeout.
    const std::atomic<bool>* stopping = nullptr;
};

// One hop's answer: the hop, and its body up to the cap.
struct HopResult {
    domain::Hop hop;
    std::string body;
    bool body_capped = false;
};

// A GET of one URL, redirects not followed. An interface so that the chain's logic is tested
// without a network.
class HopFetcher {
  public:
    virtual ~HopFetcher() = default;
    virtual HopResult fetch(const std::string& url) = 0;
    // A POST of `body` with `headers` ("Name: value") under the same rules as fetch() (resolved
    // once, pinned, private addresses refused; a redirect is an answer, not followed): webhook
    // deliveries. The answer's body is kept up to max_body.
    virtual HopResult post(const std::string& url, const std::vector<std::string>& headers,
                           const std::string& body) {
        (void)headers;
        (void)body;
        return {.hop = {.url = url, .failure = domain::HopFailure::other}};
    }
};

// libcurl (Debian's libcurl4): GET, http and https only, no cookies or credentials, TLS verified
// against the CA file or the system store, pinned to the address resolved once.
std::unique_ptr<HopFetcher> make_curl_fetcher(FetcherOptions options);

// Why a webhook's `url` is refused when it is saved, or "" when it is not: https only, no
// userinfo or fragment, and a host with at least one address the fetcher would contact (global,
// or fixed by `fixed`, the test-only resolve list).
std::string outbound_refusal(const std::string& url,
                             const std::vector<config::ResolveEntry>& fixed);

// "refgate-linkcheck/1.2.0 (+https://contact)" or without the contact when it is empty.
std::string user_agent(const std::string& version, const std::string& contact_url);

// Called before each hop with its host: the per-host pace waits here.
using Pace = std::function<void(const std::string& host)>;

// Follows the redirects of `url` hop by hop: at most kMaxHops, stopping at a failure, a final
// answer, a Location that points back into the chain, or a scheme other than http or https.
domain::Chain follow_chain(HopFetcher& fetcher, const std::string& url, const Pace& pace = {});

}  // namespace refgate::linkcheck
