#include "refgate/linkcheck/checker.hpp"

#include <algorithm>

#include "refgate/runtime/log.hpp"

namespace refgate::linkcheck {
namespace {

domain::SysSeconds whole_seconds(std::chrono::system_clock::time_point t) {
    return std::chrono::floor<std::chrono::seconds>(t);
}

// The link's own Location, then each rule's branches in order.
void add_link_targets(const domain::Snapshot& snapshot, const domain::LinkEntry& entry,
                      std::vector<CheckTarget>& out) {
    const std::size_t first = out.size();
    out.push_back({.link_id = entry.id,
                   .slug = entry.slug,
                   .location = std::string(entry.location),
                   .destination = std::string(entry.destination),
                   .partner = snapshot.partner(entry)});
    for (std::uint32_t i = 0; i < entry.rule_count; ++i) {
        const domain::TargetRule& rule = snapshot.rules()[entry.first_rule + i];
        for (std::uint16_t b = 0; b < rule.branch_count; ++b) {
            const domain::TargetBranch& branch = snapshot.branches()[rule.first_branch + b];
            std::string name = "rules[" + std::to_string(i) + "]";
            if (rule.split) name += ".split[" + std::to_string(b) + "]";
            out.push_back({.link_id = entry.id,
                           .slug = entry.slug,
                           .branch = std::move(name),
                           .location = branch.location,
                           .destination = rule.split ? rule.source.split[b].destination
                                                     : rule.source.destination,
                           .partner = snapshot.partners()[branch.partner_index]});
        }
    }
    std::vector<std::string> names;
    for (std::size_t i = first; i < out.size(); ++i) names.push_back(out[i].branch);
    for (std::size_t i = first; i < out.size(); ++i) out[i].link_branches = names;
}

}  // namespace

bool checkable(const domain::LinkEntry& entry, domain::SysSeconds now) {
    if (entry.status != domain::LinkStatus::active || !entry.partner_active) return false;
    return entry.expires_at == 0 || entry.expires_at > now.time_since_epoch().count();
}

std::vector<CheckTarget> link_targets(const domain::Snapshot& snapshot,
                                      const domain::LinkEntry& entry) {
    std::vector<CheckTarget> out;
    add_link_targets(snapshot, entry, out);
    return out;
}

std::vector<CheckTarget> check_targets(const domain::Snapshot& snapshot, domain::SysSeconds now,
                                       const std::string& slug, const std::string& partner) {
    std::vector<CheckTarget> out;
    for (const auto& entry : snapshot.entries()) {
        if (!checkable(entry, now)) continue;
        if (!slug.empty() && entry.slug != slug) continue;
        if (!partner.empty() && snapshot.partner(entry).slug != partner) continue;
        add_link_targets(snapshot, entry, out);
    }
    return out;
}

CheckReport LinkChecker::check(const CheckTarget& target) {
    auto started = std::chrono::steady_clock::now();
    CheckReport report{.link_id = target.link_id,
                       .slug = target.slug,
                       .branch = target.branch,
                       .link_branches = target.link_branches};
    report.chain = follow_chain(fetcher_, target.location, pace_);
    report.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    if (stopping_ != nullptr && stopping_->load()) {
        report.aborted = true;
        runtime::log::info("link_check_aborted",
                           {{"slug", target.slug}, {"branch", target.branch}});
        return report;
    }
    report.seen = domain::judge_chain(report.chain, target.destination, target.partner);
    report.at = whole_seconds(clock_.now());
    report.record = domain::next_record(store_.record(target.link_id, target.branch), report.seen,
                                        report.at, confirm_after_);
    auto switches = store_.save(report);
    for (const auto& s : switches) {
        runtime::log::info("link_fallback_switched",
                           {{"slug", s.slug},
                            {"branch", s.branch},
                            {"serving", s.to_fallback ? "fallback" : "destination"},
                            {"reason", s.reason},
                            {"detail", s.detail}});
        if (stats_ != nullptr)
            stats_->fallback_switches[s.to_fallback ? 0 : 1].fetch_add(1,
                                                                       std::memory_order_relaxed);
    }
    if (stats_ != nullptr) {
        stats_->checks[static_cast<std::size_t>(report.seen.finding)].fetch_add(
            1, std::memory_order_relaxed);
        stats_->duration.observe(report.duration);
    }
    runtime::log::info("link_checked", {{"slug", target.slug},
                                        {"branch", target.branch},
                                        {"finding", to_string(report.seen.finding)},
                                        {"detail", report.seen.detail},
                                        {"state", to_string(report.record.state.finding)},
                                        {"hops", report.chain.hops.size()},
                                        {"duration_ms", report.duration.count()}});
    return report;
}

FetcherOptions fetcher_options(const config::LinkCheckConfig& config, const std::string& version,
                               const std::atomic<bool>* stopping) {
    return {.ca_file = config.ca_file,
            .resolve = config.resolve,
            .user_agent = user_agent(version, config.contact_url),
            .connect_timeout = std::min(config.timeout, std::chrono::milliseconds{5'000}),
            .timeout = config.timeout,
            .stopping = stopping};
}

namespace {

runtime::PeriodicWorkerOptions worker_options(const config::LinkCheckConfig& config) {
    // Plan often enough that a link's moment is met within a twentieth of the interval.
    auto tick = std::clamp<std::chrono::milliseconds>(config.interval / 20, std::chrono::seconds{1},
                                                      std::chrono::seconds{60});
    return {.name = "rg-linkcheck",
            .priority = runtime::BackgroundPriority::idle,
            .interval = tick,
            .min_backoff = std::chrono::seconds{5},
            .max_backoff = std::chrono::seconds{60}};
}

}  // namespace

HealthWorker::HealthWorker(const config::Config& config, const runtime::SnapshotStore& snapshots,
                           metrics::LinkHealthStats& stats, HostPace& pace,
                           const std::string& version)
    : config_(config.linkcheck),
      snapshots_(snapshots),
      stats_(stats),
      pace_(pace),
      fetcher_(make_curl_fetcher(fetcher_options(config.linkcheck, version, &pace.stopping()))),
      store_(make_pg_health_store(config.database_url)),
      worker_(worker_options(config.linkcheck), [this] { return round(); }) {}

HealthWorker::~HealthWorker() { stop(); }

void HealthWorker::stop() {
    pace_.stop();
    worker_.stop();
}

void HealthWorker::refresh_counts() {
    auto counts = store_->state_counts();
    for (domain::Finding f : domain::kAllFindings) {
        auto it = counts.find(f);
        stats_.links[static_cast<std::size_t>(f)].store(it == counts.end() ? 0 : it->second);
    }
}

runtime::RoundOutcome HealthWorker::round() {
    try {
        if (!store_->try_lock()) {
            if (leading_) runtime::log::info("linkcheck_standby", {});
            leading_ = false;
            refresh_counts();
            return runtime::RoundOutcome::done;
        }
        if (!leading_) runtime::log::info("linkcheck_leader", {});
        leading_ = true;
        auto snapshot = snapshots_.current();
        if (!snapshot) return runtime::RoundOutcome::done;
        auto now = whole_seconds(clock_.now());
        std::vector<std::int64_t> ids;
        for (const auto& entry : snapshot->entries()) {
            if (checkable(entry, now)) ids.push_back(entry.id);
        }
        auto due = domain::due_links(store_->plan(ids), now, config_.interval);
        std::sort(due.begin(), due.end());  // a set of 100,000 ids held 4.8 MiB for the round
        LinkChecker checker(
            *fetcher_, *store_, clock_, config_.confirm_after,
            [this](const std::string& host) { pace_.wait(host); }, &stats_, &pace_.stopping());
        // The snapshot's order, as before; a link's targets exist only while it is checked.
        for (const auto& entry : snapshot->entries()) {
            if (pace_.stopping().load()) break;
            if (!std::binary_search(due.begin(), due.end(), entry.id)) continue;
            for (const auto& target : link_targets(*snapshot, entry)) {
                if (pace_.stopping().load()) break;
                checker.check(target);
            }
        }
        refresh_counts();
        return runtime::RoundOutcome::done;
    } catch (const std::exception& e) {
        runtime::log::warn("linkcheck_failed", {{"error", e.what()}});
        return runtime::RoundOutcome::failed;
    }
}

}  // namespace refgate::linkcheck
