#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include "refgate/linkcheck/fetcher.hpp"
#include "refgate/linkcheck/page_availability.hpp"

namespace refgate::linkcheck {
namespace {

// The host of an http or https URL; empty for anything else.
std::string web_host(const std::string& url) {
    auto parsed = boost::urls::parse_uri(url);
    if (!parsed || (parsed->scheme_id() != boost::urls::scheme::https &&
                    parsed->scheme_id() != boost::urls::scheme::http))
        return "";
    return std::string(parsed->encoded_host());
}

bool points_back(const domain::Chain& chain, const std::string& location) {
    for (const auto& hop : chain.hops) {
        if (hop.url == location) return true;
    }
    return false;
}

}  // namespace

std::string user_agent(const std::string& version, const std::string& contact_url) {
    std::string ua = "refgate-linkcheck/" + version;
    if (!contact_url.empty()) ua += " (+" + contact_url + ")";
    return ua;
}

domain::Chain follow_chain(HopFetcher& fetcher, const std::string& url, const Pace& pace) {
    domain::Chain chain;
    std::string next = url;
    while (true) {
        std::string host = web_host(next);
        if (host.empty()) {
            chain.hops.push_back(domain::Hop{.url = next, .failure = domain::HopFailure::scheme});
            return chain;
        }
        if (pace) pace(host);
        HopResult r = fetcher.fetch(next);
        chain.hops.push_back(r.hop);
        const domain::Hop& hop = chain.hops.back();
        bool redirect = hop.failure == domain::HopFailure::none && hop.status >= 300 &&
                        hop.status < 400 && !hop.location.empty();
        if (!redirect) {
            if (hop.failure == domain::HopFailure::none) {
                chain.body_bytes = r.body.size();
                chain.body_capped = r.body_capped;
                chain.body = std::move(r.body);
                chain.unavailable = unavailable_marker(chain.body);
            }
            return chain;
        }
        if (chain.hops.size() >= domain::kMaxHops || points_back(chain, hop.location)) return chain;
        next = hop.location;
    }
}

}  // namespace refgate::linkcheck
