#pragma once

// Link health: what a link's redirect chain says about it. Pure: a hop chain in, a finding out;
// the fetcher (src/linkcheck) builds the chain, nothing here touches the network.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/time.hpp"

namespace refgate::domain {

// Why a hop got no HTTP answer, or was not attempted.
enum class HopFailure {
    none,
    dns,      // the host does not resolve
    tls,      // handshake, certificate (expired, wrong name, unknown CA)
    connect,  // refused, unreachable
    timeout,  // connect or transfer past the timeout
    ssrf,     // the host resolves to an address the checker may not contact
    scheme,   // a redirect to something other than http or https
    other,    // anything else the transfer reported
};

struct Hop {
    std::string url;       // as requested, referral code included
    int status = 0;        // 0 when failure != none
    std::string location;  // the Location header of a 3xx, resolved against url
    HopFailure failure = HopFailure::none;
    std::string address;  // the address connected to (empty when none)
};

// A followed chain: each hop, the body of the last one (read up to the cap) and whether the cap
// cut it. A chain that stopped at the hop limit or on a repeated URL ends with a 3xx hop.
struct Chain {
    std::vector<Hop> hops;
    std::string body;
    bool body_capped = false;
    std::uint64_t body_bytes = 0;  // bytes read of the last body
    // What the last page states of its schema.org availability when it is OutOfStock,
    // Discontinued or SoldOut (read from the body by the checker, linkcheck/page_availability).
    std::optional<std::string> unavailable;
};

enum class Finding {
    ok,
    broken,
    code_dropped,
    homepage,
    moved,
    unavailable,
    redirect_loop,
    refused
};

inline constexpr Finding kAllFindings[] = {
    Finding::ok,    Finding::broken,      Finding::code_dropped,  Finding::homepage,
    Finding::moved, Finding::unavailable, Finding::redirect_loop, Finding::refused};

std::string_view to_string(Finding finding);
std::optional<Finding> parse_finding(std::string_view text);
std::string_view to_string(HopFailure failure);

// A finding with the detail that says which: "dns", "tls", "connect", "timeout", "http_404",
// "ssrf", "scheme", "missing", "other_code", "subid_missing", "OutOfStock", "too_many_hops", ...
struct Verdict {
    Finding finding = Finding::ok;
    std::string detail;
    bool operator==(const Verdict&) const = default;
};

inline constexpr std::size_t kMaxHops = 10;

// What the chain of `destination` (the link's stored destination) says, given its partner's
// referral parameter, the code in effect for a click of `channel` (its channel_codes), its
// sub-ID parameter and its allowed domains. The final URL must carry that code ("missing",
// "other_code") and, when the partner has a sub-ID parameter, that parameter ("subid_missing"):
// all three are code_dropped, the click would earn nothing the publisher can attribute.
Verdict judge_chain(const Chain& chain, std::string_view destination, const Partner& partner,
                    std::string_view channel = kDirectChannel);

// A link's stored health: the confirmed state (what alerts and filters count) and a finding seen
// once that waits for its second check.
struct HealthRecord {
    Verdict state;
    SysSeconds since{};  // when `state` began
    std::optional<Verdict> pending;
    std::optional<SysSeconds> confirm_at;
};

// The record after a check saw `seen` at `now`. ok counts at once; any other finding is pending
// until a check at or after confirm_at (now + confirm_after) sees the same finding again.
HealthRecord next_record(const std::optional<HealthRecord>& stored, const Verdict& seen,
                         SysSeconds now, std::chrono::seconds confirm_after);

// True when the same URL appears twice in the hops, or the last hop redirects back into them.
bool repeats_url(const std::vector<Hop>& hops);

}  // namespace refgate::domain
