#include "refgate/metrics/exporter.hpp"

#include <prometheus/text_serializer.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "refgate/domain/click_classifier.hpp"

namespace refgate::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

MetricFamily family(std::string name, std::string help, MetricType type) {
    return MetricFamily{std::move(name), std::move(help), type, {}};
}

void add_value(MetricFamily& f, double value, Labels labels = {}) {
    ClientMetric m;
    m.label = std::move(labels);
    if (f.type == MetricType::Counter) {
        m.counter.value = value;
    } else {
        m.gauge.value = value;
    }
    f.metric.push_back(std::move(m));
}

MetricFamily single(std::string name, std::string help, MetricType type, double value) {
    auto f = family(std::move(name), std::move(help), type);
    add_value(f, value);
    return f;
}

struct HistogramFigures {
    std::array<std::uint64_t, runtime::LatencyHistogram::kBuckets> counts{};
    double sum = 0;
    const runtime::HistogramBounds* bounds = &runtime::kLatencyBounds;
};

void add_histogram(MetricFamily& f, const HistogramFigures& h, Labels labels = {}) {
    ClientMetric m;
    m.label = std::move(labels);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < h.bounds->size(); ++i) {
        cumulative += h.counts[i];
        m.histogram.bucket.push_back({cumulative, (*h.bounds)[i]});
    }
    cumulative += h.counts.back();
    m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = h.sum;
    f.metric.push_back(std::move(m));
}

MetricFamily histogram(std::string name, std::string help,
                       const runtime::LatencyHistogram& source) {
    auto f = family(std::move(name), std::move(help), MetricType::Histogram);
    HistogramFigures h;
    h.bounds = &source.bounds();
    source.add_to(h.counts, h.sum);
    add_histogram(f, h);
    return f;
}

double up(runtime::DependencyState state) { return state == runtime::DependencyState::up ? 1 : 0; }

}  // namespace

ProcessFigures read_process_figures() {
    ProcessFigures p;
    std::ifstream stat("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    // The command name may hold spaces and parentheses: fields are counted after the last ')'.
    auto close = text.rfind(')');
    if (close == std::string::npos) return p;
    std::istringstream fields(text.substr(close + 2));
    std::vector<std::string> f;
    for (std::string item; fields >> item && f.size() < 22;) f.push_back(item);
    if (f.size() < 22) return p;
    // f[0] is field 3 (state): utime is field 14, stime 15, starttime 22, vsize 23, rss 24.
    double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
    double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
    p.cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / ticks;
    double start_ticks = std::stod(f[19]);
    p.virtual_bytes = std::stod(f[20]);
    p.resident_bytes = std::stod(f[21]) * page;
    std::ifstream boot("/proc/stat");
    for (std::string line; std::getline(boot, line);) {
        if (line.starts_with("btime ")) {
            p.start_time_seconds = std::stod(line.substr(6)) + start_ticks / ticks;
            break;
        }
    }
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        p.open_fds += 1;
    }
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) p.max_fds = static_cast<double>(limit.rlim_cur);
    p.ok = true;
    return p;
}

void Exporter::collect_clicks(std::vector<MetricFamily>& out) const {
    auto f = family("refgate_clicks_total",
                    "Clicks counted (sent on to Redis or dropped), by partner and class.",
                    MetricType::Counter);
    auto by_domain = family("refgate_clicks_by_domain_total",
                            "Clicks counted (sent on to Redis or dropped), by branded domain and "
                            "class.",
                            MetricType::Counter);
    std::lock_guard lock(clicks_mutex_);
    auto snapshot = sources_.snapshots != nullptr ? sources_.snapshots->current() : nullptr;
    // The default domain's label: its host, or "default" while no domain is defined.
    auto domain_label = [](const domain::Snapshot& s, std::uint16_t domain) {
        const std::string& host = s.domains()[domain].host;
        return host.empty() ? std::string("default") : host;
    };
    if (snapshot && sources_.snapshots->generation() != partner_map_generation_) {
        partner_map_generation_ = sources_.snapshots->generation();
        link_partner_slugs_.clear();
        for (const auto& partner : snapshot->partners())
            link_partner_slugs_.push_back(partner.slug);
        domain_labels_.clear();
        for (std::size_t d = 0; d < snapshot->domains().size(); ++d)
            domain_labels_.push_back(domain_label(*snapshot, static_cast<std::uint16_t>(d)));
        link_labels_.clear();
        link_labels_.reserve(snapshot->entries().size());
        for (const auto& entry : snapshot->entries())
            link_labels_.push_back(
                {entry.id, static_cast<std::uint32_t>(entry.partner_index), entry.domain});
        std::sort(link_labels_.begin(), link_labels_.end(),
                  [](const LinkLabels& a, const LinkLabels& b) { return a.id < b.id; });
    }
    if (snapshot) {
        // Every partner and domain has its series from the start, so rate() sees its first
        // clicks.
        for (const auto& partner : snapshot->partners()) partner_clicks_[partner.slug];
        for (std::size_t d = 0; d < snapshot->domains().size(); ++d)
            domain_clicks_[domain_label(*snapshot, static_cast<std::uint16_t>(d))];
    }
    if (sources_.clicks != nullptr) {
        for (const auto& [link, classes] : sources_.clicks->link_clicks.take()) {
            auto it = std::lower_bound(
                link_labels_.begin(), link_labels_.end(), link,
                [](const LinkLabels& labels, std::int64_t id) { return labels.id < id; });
            // A link deleted while its clicks were on their way.
            bool known = it != link_labels_.end() && it->id == link;
            auto& totals = partner_clicks_[known ? link_partner_slugs_[it->partner] : "unknown"];
            auto& domain_totals = domain_clicks_[known ? domain_labels_[it->domain] : "unknown"];
            for (std::size_t i = 0; i < classes.size(); ++i) {
                totals[i] += classes[i];
                domain_totals[i] += classes[i];
            }
        }
    }
    for (const auto& [partner, totals] : partner_clicks_) {
        for (std::size_t i = 0; i < domain::kClickClasses.size(); ++i) {
            add_value(
                f, static_cast<double>(totals[i]),
                {{"class", std::string(domain::kClickClasses[i].name)}, {"partner", partner}});
        }
    }
    for (const auto& [domain, totals] : domain_clicks_) {
        for (std::size_t i = 0; i < domain::kClickClasses.size(); ++i) {
            add_value(by_domain, static_cast<double>(totals[i]),
                      {{"class", std::string(domain::kClickClasses[i].name)}, {"domain", domain}});
        }
    }
    out.push_back(std::move(f));
    out.push_back(std::move(by_domain));
}

// Requests that waited too long for the blocking pool (busy) or for the database.
void Exporter::collect_unavailable(std::vector<MetricFamily>& out) const {
    auto f = family("refgate_admin_unavailable_total",
                    "Admin requests answered 503 with Retry-After: the blocking pool was busy past "
                    "admin_db_wait (busy), or the database was unreachable or gave no connection "
                    "within it (database).",
                    MetricType::Counter);
    std::uint64_t busy = 0;
    for (const auto& l : sources_.listeners)
        busy += l.stats->unavailable_requests.load(std::memory_order_relaxed);
    add_value(f, static_cast<double>(busy), {{"reason", "busy"}});
    auto database = sources_.admin_unavailable != nullptr
                        ? sources_.admin_unavailable->load(std::memory_order_relaxed)
                        : 0;
    add_value(f, static_cast<double>(database), {{"reason", "database"}});
    out.push_back(std::move(f));
    if (sources_.console_sign_ins == nullptr) return;
    auto sign_ins = family("refgate_console_sign_ins_total",
                           "Console sign-ins: ok, refused (name or password wrong, or the user "
                           "disabled) and limited (too many failures: 429).",
                           MetricType::Counter);
    const char* results[] = {"ok", "refused", "limited"};
    for (std::size_t i = 0; i < 3; ++i) {
        auto n = (*sources_.console_sign_ins)[i].load(std::memory_order_relaxed);
        add_value(sign_ins, static_cast<double>(n), {{"result", results[i]}});
    }
    out.push_back(std::move(sign_ins));
}

namespace {

// Requests, by listener, route class and status, and how long the handler took.
void collect_requests(const RequestMetrics& source, std::vector<MetricFamily>& out) {
    using Routes = std::array<std::array<std::uint64_t, kStatusSlots>, kRouteClasses>;
    std::map<std::string, Routes> requests;
    std::map<std::string, std::array<HistogramFigures, kRouteClasses>> latency;
    source.for_each([&](std::string_view listener, const RequestCounters& c) {
        auto& r = requests[std::string(listener)];
        auto& l = latency[std::string(listener)];
        for (std::size_t route = 0; route < kRouteClasses; ++route) {
            for (std::size_t s = 0; s < kStatusSlots; ++s)
                r[route][s] += c.requests[route][s].load(std::memory_order_relaxed);
            c.latency[route].add_to(l[route].counts, l[route].sum);
        }
    });
    auto total = family("refgate_http_requests_total",
                        "HTTP requests answered by a handler, by listener, route and status.",
                        MetricType::Counter);
    auto duration = family("refgate_http_request_duration_seconds",
                           "Time from a parsed request to its finished response, in the "
                           "server, by listener and route.",
                           MetricType::Histogram);
    std::uint64_t unknown_slugs = 0;
    for (const auto& [listener, routes] : requests) {
        for (std::size_t route = 0; route < kRouteClasses; ++route) {
            auto route_name = std::string(to_string(static_cast<RouteClass>(route)));
            std::uint64_t answered = 0;
            for (std::size_t s = 0; s < kStatusSlots; ++s) {
                auto n = routes[route][s];
                answered += n;
                if (n == 0) continue;
                auto code = s < kTrackedStatuses.size() ? std::to_string(kTrackedStatuses[s])
                                                        : std::string("other");
                add_value(total, static_cast<double>(n),
                          {{"code", code}, {"listener", listener}, {"route", route_name}});
            }
            bool redirect = static_cast<RouteClass>(route) == RouteClass::redirect;
            if (redirect) unknown_slugs += routes[route][status_slot(404)];
            // The redirect's series always exist on the public listener; others once used.
            if (answered > 0 || (redirect && listener == "public")) {
                add_histogram(duration, latency[listener][route],
                              {{"listener", listener}, {"route", route_name}});
            }
        }
    }
    out.push_back(std::move(total));
    out.push_back(std::move(duration));
    out.push_back(single("refgate_redirect_unknown_slug_total",
                         "Redirect requests for a slug that no link has (answered 404).",
                         MetricType::Counter, static_cast<double>(unknown_slugs)));
}

// What the server counts itself, per listener.
void collect_listeners(const std::vector<ListenerFigures>& listeners,
                       std::vector<MetricFamily>& out) {
    auto open =
        family("refgate_http_open_connections", "Open client connections.", MetricType::Gauge);
    auto parked = family("refgate_http_parked_connections",
                         "Open client connections idle past a second among many, parked: a "
                         "socket and a few dozen bytes each.",
                         MetricType::Gauge);
    auto refused =
        family("refgate_http_rejected_connections_total",
               "Connections closed at accept because the listener was full, or their client held "
               "its share of it.",
               MetricType::Counter);
    auto over_share = family("refgate_http_client_share_rejected_connections_total",
                             "Of the connections closed at accept, those whose client held its "
                             "share of the listener already.",
                             MetricType::Counter);
    auto rejected = family("refgate_http_rejected_requests_total",
                           "Requests the server refused before any handler (400, 413, 414, 431).",
                           MetricType::Counter);
    auto failed = family("refgate_http_handler_errors_total",
                         "Requests whose handler failed with an exception (answered 500).",
                         MetricType::Counter);
    auto handed_off =
        family("refgate_http_handed_off_connections_total",
               "Connections an I/O thread handed to the blocking lane with their first blocking "
               "request (a postback, an admin call); the lane serves them from then on.",
               MetricType::Counter);
    for (const auto& l : listeners) {
        Labels labels{{"listener", l.name}};
        add_value(open, static_cast<double>(l.stats->open_connections.load()), labels);
        add_value(parked, static_cast<double>(l.stats->parked_connections.load()), labels);
        add_value(refused, static_cast<double>(l.stats->rejected_connections.load()), labels);
        add_value(over_share, static_cast<double>(l.stats->rejected_client_share.load()), labels);
        add_value(rejected, static_cast<double>(l.stats->rejected_requests.load()), labels);
        add_value(failed, static_cast<double>(l.stats->handler_errors.load()), labels);
        add_value(handed_off, static_cast<double>(l.stats->handed_off.load()), labels);
    }
    out.push_back(std::move(open));
    out.push_back(std::move(parked));
    out.push_back(std::move(refused));
    out.push_back(std::move(over_share));
    out.push_back(std::move(rejected));
    out.push_back(std::move(failed));
    out.push_back(std::move(handed_off));
}

// The counting pipeline's own figures: memory, Redis, flushes.
void collect_pipeline(const ClickStats& c, std::int64_t now, std::vector<MetricFamily>& out) {
    out.push_back(single("refgate_clicks_pending_keys",
                         "Distinct counters held in memory, waiting for Redis.", MetricType::Gauge,
                         static_cast<double>(c.pending_keys.load())));
    out.push_back(single("refgate_clicks_dropped_total",
                         "Clicks dropped because too many counters were waiting for Redis.",
                         MetricType::Counter, static_cast<double>(c.dropped_clicks.load())));
    auto others = family("refgate_channels_capped_total",
                         "Clicks counted under the channel \"other\" instead of their src: past "
                         "the per-link daily channel cap (cap), or for a src that looked like an "
                         "e-mail address or an identifier (identifier).",
                         MetricType::Counter);
    add_value(others, static_cast<double>(c.channels_capped.load()), {{"reason", "cap"}});
    add_value(others, static_cast<double>(c.channel_identifiers.load()),
              {{"reason", "identifier"}});
    out.push_back(std::move(others));
    out.push_back(single("refgate_unique_samples_dropped_total",
                         "Unique-estimate samples not fed to Redis (full buffer or Redis down).",
                         MetricType::Counter, static_cast<double>(c.dropped_samples.load())));
    out.push_back(single("refgate_click_batches_sent_total", "Click batches Redis confirmed.",
                         MetricType::Counter, static_cast<double>(c.batches_sent.load())));
    out.push_back(single("refgate_redis_errors_total",
                         "Failed Redis round trips (sender and flusher).", MetricType::Counter,
                         static_cast<double>(c.redis_errors.load())));
    out.push_back(single("refgate_redis_master_switches_total",
                         "Switches of the Redis master announced by the sentinels.",
                         MetricType::Counter, static_cast<double>(c.redis_master_switches.load())));
    out.push_back(single("refgate_redis_unreplicated_rounds_total",
                         "Send or flush rounds retried because too few replicas acknowledged them.",
                         MetricType::Counter,
                         static_cast<double>(c.redis_unreplicated_rounds.load())));
    out.push_back(single("refgate_redis_config_risky",
                         "1 when Redis runs without appendonly or with an evicting policy.",
                         MetricType::Gauge, c.redis_config_risky.load() ? 1 : 0));
    out.push_back(histogram("refgate_redis_request_duration_seconds",
                            "Round trips of the click sender's pipelined Redis writes.",
                            c.redis_latency));
    out.push_back(single("refgate_flush_buckets_total",
                         "Redis buckets applied to PostgreSQL by this instance.",
                         MetricType::Counter, static_cast<double>(c.flush_buckets.load())));
    out.push_back(single("refgate_flush_rows_total",
                         "Counter rows upserted into PostgreSQL by this instance's flushes.",
                         MetricType::Counter, static_cast<double>(c.flush_rows.load())));
    out.push_back(single("refgate_flush_failures_total",
                         "Flush rounds that failed (Redis or PostgreSQL unreachable).",
                         MetricType::Counter, static_cast<double>(c.flush_failures.load())));
    out.push_back(histogram("refgate_flush_duration_seconds",
                            "Duration of this instance's flush rounds that did the work.",
                            c.flush_duration));
    auto oldest = c.oldest_unflushed.load();
    out.push_back(
        single("refgate_flush_lag_seconds",
               "Age of the oldest count not yet in PostgreSQL (start of the oldest "
               "Redis bucket), as of the last flush round; 0 when none waits.",
               MetricType::Gauge,
               oldest < 0 ? 0.0 : static_cast<double>(std::max<std::int64_t>(0, now - oldest))));
}

// The workers' view of Redis and PostgreSQL.
void collect_health(const runtime::HealthState& h, std::vector<MetricFamily>& out) {
    out.push_back(single("refgate_redis_up", "1 when the click sender last reached Redis.",
                         MetricType::Gauge, up(h.redis.load())));
    out.push_back(single("refgate_postgres_up",
                         "1 when the snapshot follower is connected to PostgreSQL.",
                         MetricType::Gauge, up(h.postgres.load())));
    out.push_back(single("refgate_postgres_errors_total",
                         "Failed PostgreSQL connections or statements of the workers.",
                         MetricType::Counter, static_cast<double>(h.postgres_errors.load())));
    if (int sync = h.postgres_sync_replication.load(); sync >= 0) {
        out.push_back(single("refgate_postgres_sync_replication",
                             "1 when the flusher's PostgreSQL commits to a synchronous standby "
                             "(synchronous_standby_names set), as seen at its last connect.",
                             MetricType::Gauge, sync));
    }
    if (int complete = h.stats_rollups_complete.load(); complete >= 0) {
        out.push_back(single("refgate_stats_rollups_complete",
                             "1 when the stats roll-ups hold every count (the stats API reads "
                             "them), 0 while they are built (it reads the counts, slower).",
                             MetricType::Gauge, complete));
    }
    out.push_back(histogram("refgate_postgres_query_duration_seconds",
                            "Snapshot version checks and flush transactions.", h.postgres_latency));
    out.push_back(single("refgate_snapshot_reload_failures_total",
                         "Snapshot loads from PostgreSQL that failed (the last snapshot stays).",
                         MetricType::Counter,
                         static_cast<double>(h.snapshot_reload_failures.load())));
}

void collect_snapshot(const runtime::SnapshotStore& store, const runtime::HealthState* health,
                      std::int64_t now, std::vector<MetricFamily>& out) {
    auto snapshot = store.current();
    out.push_back(single("refgate_snapshot_loaded", "1 once a link snapshot is loaded.",
                         MetricType::Gauge, snapshot ? 1 : 0));
    if (!snapshot) return;
    out.push_back(single("refgate_snapshot_version",
                         "Version of the partners and links the redirects answer from.",
                         MetricType::Gauge, static_cast<double>(snapshot->version())));
    out.push_back(single("refgate_snapshot_links", "Links in the snapshot.", MetricType::Gauge,
                         static_cast<double>(snapshot->link_count())));
    out.push_back(single("refgate_links_serving_fallback",
                         "Links whose own destination automatic fallback switched to the link's "
                         "fallback (in the snapshot).",
                         MetricType::Gauge, static_cast<double>(snapshot->serving_fallback())));
    std::int64_t checked = health != nullptr ? health->snapshot_checked_at.load() : 0;
    out.push_back(single(
        "refgate_snapshot_age_seconds",
        "Seconds since the snapshot was last confirmed current against PostgreSQL "
        "(loaded or re-checked); since it was loaded when it never was.",
        MetricType::Gauge,
        static_cast<double>(runtime::snapshot_age_seconds(now, snapshot->built_at(), checked))));
}

void collect_process(std::vector<MetricFamily>& out) {
    auto p = read_process_figures();
    if (!p.ok) return;
    out.push_back(single("process_cpu_seconds_total",
                         "Total user and system CPU time spent in seconds.", MetricType::Counter,
                         p.cpu_seconds));
    out.push_back(single("process_resident_memory_bytes", "Resident memory size in bytes.",
                         MetricType::Gauge, p.resident_bytes));
    out.push_back(single("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                         MetricType::Gauge, p.virtual_bytes));
    out.push_back(single("process_open_fds", "Number of open file descriptors.", MetricType::Gauge,
                         p.open_fds));
    out.push_back(single("process_max_fds", "Maximum number of open file descriptors.",
                         MetricType::Gauge, p.max_fds));
    out.push_back(single("process_start_time_seconds",
                         "Start time of the process since unix epoch in seconds.",
                         MetricType::Gauge, p.start_time_seconds));
}

}  // namespace

// Links with a branch in each confirmed health state (a link whose storefront branch drops the
// code counts under code_dropped even when another branch is broken; 0 until this instance first
// read them from PostgreSQL), checks by what they saw, and the checks' durations; the state gauge
// is what the "links losing the referral code" alert reads.
void collect_link_health(const LinkHealthStats& stats, std::vector<MetricFamily>& out) {
    auto states = family(
        "refgate_links_health",
        "Links with a branch in this confirmed health state (as of this instance's last read).",
        MetricType::Gauge);
    auto checks = family("refgate_link_checks_total",
                         "Link health checks by what they saw (outcome).", MetricType::Counter);
    for (domain::Finding f : domain::kAllFindings) {
        auto i = static_cast<std::size_t>(f);
        std::string name(to_string(f));
        add_value(states, static_cast<double>(stats.links[i].load()), {{"state", name}});
        add_value(checks, static_cast<double>(stats.checks[i].load()), {{"outcome", name}});
    }
    out.push_back(std::move(states));
    out.push_back(std::move(checks));
    auto switches = family("refgate_link_fallback_switches_total",
                           "Automatic fallback's switches of a link branch made by this "
                           "instance's checks (direction: to_fallback, to_destination).",
                           MetricType::Counter);
    add_value(switches, static_cast<double>(stats.fallback_switches[0].load()),
              {{"direction", "to_fallback"}});
    add_value(switches, static_cast<double>(stats.fallback_switches[1].load()),
              {{"direction", "to_destination"}});
    out.push_back(std::move(switches));
    out.push_back(histogram("refgate_link_check_duration_seconds",
                            "Duration of a link health check, all its hops.", stats.duration));
}

// The stored commissions as the worker last read them (commission_stats.hpp): the same figures on
// every instance. Both families are always there, empty until the first read.
void collect_commissions(const CommissionStats& stats, std::vector<MetricFamily>& out) {
    auto counts =
        family("refgate_commissions_total",
               "Commissions of the partner that have had this status (stored in "
               "PostgreSQL, as of this instance's last read; the same on every instance).",
               MetricType::Counter);
    auto amounts =
        family("refgate_commission_amount",
               "Sum of the amounts of the partner's commissions that have this status now, in "
               "their currency (stored in PostgreSQL, as of this instance's last read).",
               MetricType::Gauge);
    if (auto figures = stats.get()) {
        for (const auto& c : figures->counts) {
            add_value(counts, static_cast<double>(c.commissions),
                      {{"partner", c.partner}, {"status", c.status}});
        }
        for (const auto& a : figures->amounts) {
            add_value(amounts, a.amount,
                      {{"currency", a.currency}, {"partner", a.partner}, {"status", a.status}});
        }
    }
    out.push_back(std::move(counts));
    out.push_back(std::move(amounts));
}

// Webhook delivery: this instance's attempts by outcome (only the delivering instance has
// any), and the queue's age as this instance last read it from PostgreSQL (every instance).
void collect_webhooks(const WebhookStats& stats, std::vector<MetricFamily>& out) {
    auto deliveries =
        family("refgate_webhook_deliveries_total",
               "Webhook delivery attempts by outcome: delivered (2xx), retry (failed, "
               "tried again later), failed (given up after the give-up window).",
               MetricType::Counter);
    add_value(deliveries, static_cast<double>(stats.delivered.load()), {{"outcome", "delivered"}});
    add_value(deliveries, static_cast<double>(stats.retried.load()), {{"outcome", "retry"}});
    add_value(deliveries, static_cast<double>(stats.failed.load()), {{"outcome", "failed"}});
    out.push_back(std::move(deliveries));
    out.push_back(single("refgate_webhooks_disabled_total",
                         "Webhooks this instance disabled after they failed for the give-up "
                         "window.",
                         MetricType::Counter, static_cast<double>(stats.disabled.load())));
    out.push_back(single("refgate_webhook_queue_age_seconds",
                         "Age of the oldest webhook delivery still waiting for an active webhook "
                         "(0: none waits), as of this instance's last read.",
                         MetricType::Gauge, static_cast<double>(stats.queue_age_seconds.load())));
}

std::vector<MetricFamily> Exporter::Collect() const {
    std::vector<MetricFamily> out;
    static const domain::SystemClock system_clock;
    auto now = (sources_.clock != nullptr ? *sources_.clock : system_clock).unix_seconds();
    out.push_back(family("refgate_build_info", "Version and git commit of this refgate build.",
                         MetricType::Gauge));
    add_value(out.back(), 1, {{"commit", sources_.commit}, {"version", sources_.version}});
    if (sources_.requests != nullptr) collect_requests(*sources_.requests, out);
    if (!sources_.listeners.empty()) collect_listeners(sources_.listeners, out);
    if (sources_.server != nullptr) {
        out.push_back(single("refgate_http_io_uring_threads",
                             "I/O threads that read (and send) a batch of ready connections in "
                             "one io_uring call; 0: a system call per connection "
                             "(REFGATE_IO_URING=false, or the kernel refused io_uring).",
                             MetricType::Gauge,
                             static_cast<double>(sources_.server->io_uring_threads())));
    }
    collect_unavailable(out);
    collect_clicks(out);
    if (sources_.clicks != nullptr) collect_pipeline(*sources_.clicks, now, out);
    if (sources_.health != nullptr) collect_health(*sources_.health, out);
    if (sources_.snapshots != nullptr)
        collect_snapshot(*sources_.snapshots, sources_.health, now, out);
    if (sources_.link_health != nullptr) collect_link_health(*sources_.link_health, out);
    if (sources_.commissions != nullptr) collect_commissions(*sources_.commissions, out);
    if (sources_.webhooks != nullptr) collect_webhooks(*sources_.webhooks, out);
    collect_process(out);
    return out;
}

std::string Exporter::scrape() const {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, Collect());
    return out.str();
}

std::optional<Access> MetricsHandler::remembered(std::string_view authorization,
                                                 std::chrono::seconds margin) const {
    std::lock_guard lock(verdicts_mutex_);
    auto it = verdicts_.find(authorization);
    if (it == verdicts_.end() || it->second.until <= std::chrono::steady_clock::now() + margin)
        return std::nullopt;
    return it->second.access;
}

// With a margin: a verdict that blocking() found must still hold when handle() runs right after
// it on the same I/O thread, or the token check would reach PostgreSQL from that thread.
bool MetricsHandler::blocking(const http::Request& request) const {
    return authorizer_ && !remembered(request.header("Authorization"), std::chrono::seconds{1});
}

Access MetricsHandler::authorize(std::string_view authorization) {
    if (auto access = remembered(authorization)) return *access;
    Access access = authorizer_(authorization);
    if (access == Access::allowed || access == Access::forbidden) {
        std::lock_guard lock(verdicts_mutex_);
        if (verdicts_.size() >= kMaxVerdicts) verdicts_.clear();
        verdicts_.insert_or_assign(
            std::string(authorization),
            Verdict{access, std::chrono::steady_clock::now() + kVerdictTime});
    }
    return access;
}

void MetricsHandler::handle(const http::Request& request, http::Response& response) {
    if (request.method != http::Method::get && request.method != http::Method::head) {
        response.simple_page(405, "Method Not Allowed");
        response.add_header("Allow", "GET, HEAD");
        return;
    }
    if (authorizer_) {
        switch (authorize(request.header("Authorization"))) {
            case Access::allowed:
                break;
            case Access::unauthorized:
                response.simple_page(401, "Unauthorized");
                response.add_header("WWW-Authenticate", "Bearer realm=\"refgate\"");
                return;
            case Access::forbidden:
                response.simple_page(403, "Forbidden");
                return;
            case Access::unavailable:
                response.simple_page(503, "Service Unavailable");
                response.add_header("Retry-After", "1");
                return;
        }
    }
    response.set_status(200);
    response.add_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    response.add_header("Cache-Control", "no-store");
    response.body() = exporter_.scrape();
}

}  // namespace refgate::metrics
