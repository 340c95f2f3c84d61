#include "refgate/domain/link_health.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <set>

#include "refgate/domain/ascii.hpp"
#include "refgate/domain/destination.hpp"
#include "refgate/domain/placement.hpp"

namespace refgate::domain {
namespace {

constexpr std::string_view kFindingNames[] = {"ok",    "broken",      "code_dropped",  "homepage",
                                              "moved", "unavailable", "redirect_loop", "refused"};

bool is_root(std::string_view path) { return path.empty() || path == "/"; }

using ascii::lowered;

// The placement check of the final URL: empty when it carries the code of the click's channel
// and, for a partner with a sub-ID parameter, that parameter (its name in any case, as the
// redirect sets it) with a value. The code is checked first: a chain that drops everything is
// "missing".
std::string code_problem(const boost::urls::url_view& url, const Partner& partner,
                         std::string_view channel) {
    const std::string& code = code_for_channel(partner, channel);
    bool found = false;
    bool subid = partner.subid_param.empty();
    for (auto param : url.params()) {
        if (param.key == partner.ref_param) {
            if (!param.has_value || param.value != code) return "other_code";
            found = true;
        } else if (!subid && param.has_value && !param.value.empty() &&
                   lowered(param.key) == lowered(partner.subid_param)) {
            subid = true;
        }
    }
    if (!found) return "missing";
    return subid ? "" : "subid_missing";
}

// A chain that never got a final answer: the last hop failed or kept redirecting.
std::optional<Verdict> transfer_verdict(const Chain& chain) {
    const Hop& last = chain.hops.back();
    switch (last.failure) {
        case HopFailure::none:
            break;
        case HopFailure::ssrf:
        case HopFailure::scheme:
            return Verdict{Finding::refused, std::string(to_string(last.failure))};
        default:
            return Verdict{Finding::broken, std::string(to_string(last.failure))};
    }
    if (last.status >= 300 && last.status < 400 && !last.location.empty()) {
        return Verdict{Finding::redirect_loop, repeats_url(chain.hops) ? "loop" : "too_many_hops"};
    }
    if (last.status < 200 || last.status >= 300)
        return Verdict{Finding::broken, "http_" + std::to_string(last.status)};
    return std::nullopt;
}

}  // namespace

std::string_view to_string(Finding finding) { return kFindingNames[static_cast<int>(finding)]; }

std::optional<Finding> parse_finding(std::string_view text) {
    for (Finding f : kAllFindings) {
        if (to_string(f) == text) return f;
    }
    return std::nullopt;
}

std::string_view to_string(HopFailure failure) {
    switch (failure) {
        case HopFailure::none:
            return "none";
        case HopFailure::dns:
            return "dns";
        case HopFailure::tls:
            return "tls";
        case HopFailure::connect:
            return "connect";
        case HopFailure::timeout:
            return "timeout";
        case HopFailure::ssrf:
            return "ssrf";
        case HopFailure::scheme:
            return "scheme";
        case HopFailure::other:
            return "other";
    }
    return "other";
}

bool repeats_url(const std::vector<Hop>& hops) {
    std::set<std::string_view> seen;
    for (const auto& hop : hops) {
        if (!seen.insert(hop.url).second) return true;
    }
    return !hops.empty() && seen.count(hops.back().location) != 0;
}

HealthRecord next_record(const std::optional<HealthRecord>& stored, const Verdict& seen,
                         SysSeconds now, std::chrono::seconds confirm_after) {
    HealthRecord record = stored.value_or(HealthRecord{.state = {Finding::ok, ""}, .since = now});
    if (seen.finding == Finding::ok || seen.finding == record.state.finding) {
        if (seen.finding != record.state.finding) record.since = now;
        record.state = seen;
        record.pending.reset();
        record.confirm_at.reset();
        return record;
    }
    if (record.pending && record.pending->finding == seen.finding && record.confirm_at) {
        if (*record.confirm_at <= now) {
            record = HealthRecord{.state = seen, .since = now};
        } else {
            record.pending = seen;
        }
        return record;
    }
    record.pending = seen;
    record.confirm_at = now + confirm_after;
    return record;
}

Verdict judge_chain(const Chain& chain, std::string_view destination, const Partner& partner,
                    std::string_view channel) {
    if (chain.hops.empty()) return {Finding::broken, "other"};
    if (auto v = transfer_verdict(chain)) return *v;
    auto final_url = boost::urls::parse_uri(chain.hops.back().url);
    if (!final_url) return {Finding::broken, "other"};
    std::string host = lowered(final_url->encoded_host());
    if (!host_within(host, partner.allowed_domains)) return {Finding::moved, host};
    auto start = boost::urls::parse_uri(destination);
    if (start && !is_root(start->encoded_path()) && is_root(final_url->encoded_path()))
        return {Finding::homepage, ""};
    if (auto problem = code_problem(*final_url, partner, channel); !problem.empty())
        return {Finding::code_dropped, problem};
    if (chain.unavailable) return {Finding::unavailable, *chain.unavailable};
    return {Finding::ok, ""};
}

}  // namespace refgate::domain
