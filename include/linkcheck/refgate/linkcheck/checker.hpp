#pragma once

// The link-health checker: what to check (every active link's Location, exactly what a reader
// gets), one check (the chain, its finding, the confirmation rule, the store) and the schedule
// (a background worker, one per fleet by an advisory lock, spread over the interval).

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "refgate/config/config.hpp"
#include "refgate/domain/clock.hpp"
#include "refgate/domain/snapshot.hpp"
#include "refgate/linkcheck/fetcher.hpp"
#include "refgate/linkcheck/health_store.hpp"
#include "refgate/linkcheck/host_pace.hpp"
#include "refgate/metrics/link_health_stats.hpp"
#include "refgate/runtime/periodic_worker.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace refgate::linkcheck {

// One Location a reader of a link can get: the link's own ("default") or a targeting rule's
// branch ("rules[i]", "rules[i].split[j]"), each with its own partner and code.
struct CheckTarget {
    std::int64_t link_id = 0;
    std::string slug;
    std::string branch = kDefaultBranch;
    std::string location;                    // the redirect's Location, referral code included
    std::string destination;                 // as the editor saved it
    domain::Partner partner;                 // the branch's partner, with the code in effect
    std::vector<std::string> link_branches;  // every branch of the link (stale ones are dropped)
};

// Whether a reader can follow the link now: active, its partner active, not expired.
bool checkable(const domain::LinkEntry& entry, domain::SysSeconds now);

// Every Location of one link, one target per branch: its own, then each rule's branches.
std::vector<CheckTarget> link_targets(const domain::Snapshot& snapshot,
                                      const domain::LinkEntry& entry);

// Every Location of the links a reader can follow now, one target per branch, optionally only
// one slug's or one partner's links. A target copies its partner: the scheduled round does not
// gather them for every link (at 100,000 links that held about 95 MiB for the whole round), it
// takes link_targets() of one due link at a time.
std::vector<CheckTarget> check_targets(const domain::Snapshot& snapshot, domain::SysSeconds now,
                                       const std::string& slug = "",
                                       const std::string& partner = "");

class LinkChecker {
  public:
    // `stopping`: when it turns true, the check in flight is abandoned, not stored.
    LinkChecker(HopFetcher& fetcher, HealthStore& store, const domain::Clock& clock,
                std::chrono::seconds confirm_after, Pace pace = {},
                metrics::LinkHealthStats* stats = nullptr,
                const std::atomic<bool>* stopping = nullptr)
        : fetcher_(fetcher),
          store_(store),
          clock_(clock),
          confirm_after_(confirm_after),
          pace_(std::move(pace)),
          stats_(stats),
          stopping_(stopping) {}

    // Follows the target's chain, judges it and stores the outcome (unless stopped meanwhile:
    // then report.aborted and nothing is stored).
    CheckReport check(const CheckTarget& target);

  private:
    HopFetcher& fetcher_;
    HealthStore& store_;
    const domain::Clock& clock_;
    std::chrono::seconds confirm_after_;
    Pace pace_;
    metrics::LinkHealthStats* stats_;
    const std::atomic<bool>* stopping_;
};

// Fetcher options from the settings; `version` goes into the User-Agent; transfers abort when
// `stopping` turns true.
FetcherOptions fetcher_options(const config::LinkCheckConfig& config, const std::string& version,
                               const std::atomic<bool>* stopping = nullptr);

// The scheduled checks: a background thread that, every tick, takes the fleet's lock (or, when
// another instance holds it, only refreshes the state figures), plans and checks the due links
// at the process's per-host pace (shared with the API's checks); stop() stops that pace too,
// which aborts every check in flight.
class HealthWorker {
  public:
    HealthWorker(const config::Config& config, const runtime::SnapshotStore& snapshots,
                 metrics::LinkHealthStats& stats, HostPace& pace, const std::string& version);
    ~HealthWorker();
    void start() { worker_.start(); }
    void stop();

  private:
    runtime::RoundOutcome round();
    void refresh_counts();

    const config::LinkCheckConfig& config_;
    const runtime::SnapshotStore& snapshots_;
    metrics::LinkHealthStats& stats_;
    HostPace& pace_;
    domain::SystemClock clock_;
    std::unique_ptr<HopFetcher> fetcher_;
    std::unique_ptr<HealthStore> store_;
    bool leading_ = false;
    runtime::PeriodicWorker worker_;
};

}  // namespace refgate::linkcheck
