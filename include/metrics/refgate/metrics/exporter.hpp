#pragma once

// /metrics: a prometheus-cpp Collectable that builds every family at scrape time from the figures
// the service already keeps (per-thread request counters, the counting pipeline's and the
// workers' atomics, the snapshot, /proc/self). Nothing is updated on the request path for it, and
// label values come from fixed sets or from the partners in the snapshot, never from requests.

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "refgate/domain/clock.hpp"
#include "refgate/domain/snapshot.hpp"
#include "refgate/http/server.hpp"
#include "refgate/metrics/click_stats.hpp"
#include "refgate/metrics/commission_stats.hpp"
#include "refgate/metrics/link_health_stats.hpp"
#include "refgate/metrics/metrics.hpp"
#include "refgate/metrics/webhook_stats.hpp"
#include "refgate/runtime/health_state.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace refgate::metrics {

struct ListenerFigures {
    std::string name;  // "public", "admin"
    const http::ServerStats* stats = nullptr;
};

struct Sources {
    const RequestMetrics* requests = nullptr;
    ClickStats* clicks = nullptr;  // its link_clicks are taken at each scrape
    const runtime::HealthState* health = nullptr;
    const runtime::SnapshotStore* snapshots = nullptr;
    // Admin API calls answered 503 because the database was unreachable or busy past its bound.
    const std::atomic<std::uint64_t>* admin_unavailable = nullptr;
    // Console sign-ins answered ok, refused (401) and limited (429).
    const std::array<std::atomic<std::uint64_t>, 3>* console_sign_ins = nullptr;
    std::vector<ListenerFigures> listeners;
    const http::Server* server = nullptr;  // its I/O threads' figures
    std::string version;
    std::string commit;
    const domain::Clock* clock = nullptr;          // for ages and lags; none: the system clock
    const LinkHealthStats* link_health = nullptr;  // none: no link-health families
    const CommissionStats* commissions = nullptr;  // none: no commission families
    const WebhookStats* webhooks = nullptr;        // none: no webhook families
};

// Figures of the process itself, from /proc/self and getrlimit.
struct ProcessFigures {
    double cpu_seconds = 0;
    double resident_bytes = 0;
    double virtual_bytes = 0;
    double open_fds = 0;
    double max_fds = 0;
    double start_time_seconds = 0;
    bool ok = false;
};
ProcessFigures read_process_figures();

class Exporter final : public prometheus::Collectable {
  public:
    explicit Exporter(Sources sources) : sources_(std::move(sources)) {}
    // Set once the server exists, before it starts.
    void set_listeners(std::vector<ListenerFigures> listeners,
                       const http::Server* server = nullptr) {
        sources_.listeners = std::move(listeners);
        sources_.server = server;
    }

    std::vector<prometheus::MetricFamily> Collect() const override;
    // The text exposition format (version 0.0.4).
    std::string scrape() const;

  private:
    void collect_clicks(std::vector<prometheus::MetricFamily>& out) const;
    void collect_unavailable(std::vector<prometheus::MetricFamily>& out) const;

    Sources sources_;
    // Clicks by partner: link deltas taken from the sender are resolved to partners with the
    // snapshot of the moment and added here, so the totals only ever grow.
    mutable std::mutex clicks_mutex_;
    mutable std::map<std::string, std::array<std::uint64_t, domain::kClickClassCount>>
        partner_clicks_;
    mutable std::uint64_t partner_map_generation_ = 0;
    // Per link id, sorted: its partner's index into link_partner_slugs_ and its domain's into
    // domain_labels_; 16 bytes a link, kept from the first scrape on (hash maps of slugs held
    // 5 MiB at 100,000 links).
    struct LinkLabels {
        std::int64_t id;
        std::uint32_t partner;
        std::uint16_t domain;
    };
    mutable std::vector<LinkLabels> link_labels_;
    mutable std::vector<std::string> link_partner_slugs_;
    // The same clicks by branded domain (issue 46): a handful of series, never one per link.
    mutable std::map<std::string, std::array<std::uint64_t, domain::kClickClassCount>>
        domain_clicks_;
    mutable std::vector<std::string> domain_labels_;
};

// What the caller may see, from its Authorization header.
enum class Access { allowed, unauthorized, forbidden, unavailable };
using Authorizer = std::function<Access(std::string_view authorization)>;

// GET /metrics. With an authorizer, a token of the viewer role (or higher) is needed. A verdict
// of allowed or forbidden is remembered for kVerdictTime, so that a scraper's repeated token is
// answered on the I/O thread without asking PostgreSQL: a revoked token keeps reading metrics for
// at most that long. Unknown tokens are never remembered (nobody can fill the memory with them).
class MetricsHandler final : public http::Handler {
  public:
    static constexpr std::chrono::seconds kVerdictTime{30};
    static constexpr std::size_t kMaxVerdicts = 64;

    MetricsHandler(const Exporter& exporter, Authorizer authorizer)
        : exporter_(exporter), authorizer_(std::move(authorizer)) {}
    void handle(const http::Request& request, http::Response& response) override;
    // Checking a token asks PostgreSQL, unless its verdict is remembered.
    bool blocking(const http::Request& request) const override;
    bool may_block() const override { return static_cast<bool>(authorizer_); }

  private:
    Access authorize(std::string_view authorization);
    // A verdict still valid `margin` from now.
    std::optional<Access> remembered(std::string_view authorization,
                                     std::chrono::seconds margin = {}) const;

    struct Verdict {
        Access access;
        std::chrono::steady_clock::time_point until;
    };
    const Exporter& exporter_;
    Authorizer authorizer_;
    mutable std::mutex verdicts_mutex_;
    std::map<std::string, Verdict, std::less<>> verdicts_;
};

}  // namespace refgate::metrics
