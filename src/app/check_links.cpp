// `refgate check-links [--slug S] [--partner P]`: checks the links now, stores what it saw (the
// same record and history the schedule keeps) and prints each link's finding and hop chain.

#include "check_links.hpp"

#include <iostream>
#include <set>

#include "refgate/linkcheck/checker.hpp"
#include "refgate/pg/database.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::app {
namespace {

void print_report(const linkcheck::CheckReport& r) {
    // A targeting branch's line names it after the slug: "slug@rules[0].split[1]".
    std::cout << r.slug;
    if (r.branch != linkcheck::kDefaultBranch) std::cout << "@" << r.branch;
    std::cout << "\t" << to_string(r.seen.finding) << "\t"
              << (r.seen.detail.empty() ? "-" : r.seen.detail) << "\t"
              << (r.record.state.finding == r.seen.finding ? "confirmed" : "pending") << "\t"
              << r.duration.count() << " ms\n";
    for (const auto& hop : r.chain.hops) {
        std::cout << "  ";
        if (hop.failure != domain::HopFailure::none) {
            std::cout << to_string(hop.failure);
        } else {
            std::cout << hop.status;
        }
        std::cout << " " << hop.url;
        if (!hop.location.empty()) std::cout << " -> " << hop.location;
        std::cout << "\n";
    }
    if (!r.chain.hops.empty() && r.chain.hops.back().failure == domain::HopFailure::none)
        std::cout << "  body: " << r.chain.body_bytes << " bytes read"
                  << (r.chain.body_capped ? " (capped)" : "") << "\n";
}

}  // namespace

int check_links(const config::Config& c, const std::string& slug, const std::string& partner,
                const std::string& version) {
    auto snapshot = pg::load_snapshot(c.database_url,
                                      domain::UrlPolicy{.allow_http = c.allow_http_destinations});
    domain::SystemClock clock;
    auto now = std::chrono::floor<std::chrono::seconds>(clock.now());
    auto targets = linkcheck::check_targets(*snapshot, now, slug, partner);
    if (targets.empty()) {
        std::cerr << "refgate check-links: no active link matches\n";
        return 1;
    }
    auto fetcher = linkcheck::make_curl_fetcher(linkcheck::fetcher_options(c.linkcheck, version));
    auto store = linkcheck::make_pg_health_store(c.database_url);
    linkcheck::HostPace pace(c.linkcheck.host_gap);
    linkcheck::LinkChecker checker(*fetcher, *store, clock, c.linkcheck.confirm_after,
                                   [&](const std::string& host) { pace.wait(host); });
    // A link is not ok when one of its branches is not.
    std::set<std::int64_t> links, not_ok;
    for (const auto& target : targets) {
        auto report = checker.check(target);
        print_report(report);
        links.insert(report.link_id);
        if (report.seen.finding != domain::Finding::ok) not_ok.insert(report.link_id);
    }
    std::cout << "checked: " << links.size() << " link(s), " << not_ok.size() << " not ok\n";
    return 0;
}

}  // namespace refgate::app
