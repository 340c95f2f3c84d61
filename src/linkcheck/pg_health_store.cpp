#include <pqxx/pqxx>

#include "fallback_switch.hpp"
#include "refgate/linkcheck/health_store.hpp"
#include "refgate/pg/connection.hpp"
#include "refgate/pg/webhook_outbox.hpp"

namespace refgate::linkcheck {
namespace {

// The advisory lock of the checker (the flusher's lock uses another key).
constexpr std::int64_t kCheckerLock = 0x7265666c6e6b6368;  // "reflnkch"

std::optional<domain::SysSeconds> time_of(const pqxx::field& f) {
    if (f.is_null()) return std::nullopt;
    return domain::SysSeconds{std::chrono::seconds{f.as<std::int64_t>()}};
}

std::int64_t unix_of(domain::SysSeconds t) { return t.time_since_epoch().count(); }

std::string joined_lines(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& line : lines) {
        if (!out.empty()) out += '\n';
        out += line;
    }
    return out;
}

class PgHealthStore final : public HealthStore {
  public:
    explicit PgHealthStore(std::string url) : url_(std::move(url)) {}

    std::optional<domain::HealthRecord> record(std::int64_t link_id,
                                               const std::string& branch) override {
        pqxx::work tx(connection());
        auto rows = tx.exec_params(
            "SELECT state, detail, extract(epoch FROM since)::bigint AS since_s, pending_state, "
            "pending_detail, extract(epoch FROM confirm_at)::bigint AS confirm_at_s "
            "FROM refgate_link_health WHERE link_id = $1 AND branch = $2",
            link_id, branch);
        tx.commit();
        if (rows.empty()) return std::nullopt;
        const auto& row = rows[0];
        domain::HealthRecord r;
        r.state = {domain::parse_finding(row["state"].c_str()).value_or(domain::Finding::ok),
                   row["detail"].c_str()};
        r.since = *time_of(row["since_s"]);
        if (auto pending = row["pending_state"]; !pending.is_null()) {
            auto detail = row["pending_detail"];
            r.pending = domain::Verdict{
                domain::parse_finding(pending.c_str()).value_or(domain::Finding::ok),
                detail.is_null() ? "" : detail.c_str()};
            r.confirm_at = time_of(row["confirm_at_s"]);
        }
        return r;
    }

    std::vector<FallbackChange> save(const CheckReport& c) override {
        pqxx::work tx(connection());
        lock_link(tx, c.link_id);
        const auto& r = c.record;
        std::string chain = chain_json(c.chain).dump();
        std::string pending_state, pending_detail;
        std::int64_t confirm_at = -1;  // none
        if (r.pending) {
            pending_state = std::string(to_string(r.pending->finding));
            pending_detail = r.pending->detail;
            if (r.confirm_at) confirm_at = unix_of(*r.confirm_at);
        }
        // A confirmed change of the branch's state is a webhook event, in this transaction.
        auto before = tx.exec_params(
            "SELECT h.state, l.slug FROM refgate_links l LEFT JOIN refgate_link_health h ON "
            "h.link_id = l.id AND h.branch = $2 WHERE l.id = $1",
            c.link_id, c.branch);
        std::string state(to_string(r.state.finding));
        if (!before.empty()) {
            auto previous = before[0]["state"];
            std::string was = previous.is_null() ? "ok" : previous.c_str();
            if (was != state)
                pg::emit_webhook(tx, "link.health_changed",
                                 nlohmann::json{{"link", before[0]["slug"].c_str()},
                                                {"branch", c.branch},
                                                {"finding", state},
                                                {"detail", r.state.detail},
                                                {"previous_finding", was}}
                                     .dump());
        }
        tx.exec_params(
            "INSERT INTO refgate_link_health (link_id, state, detail, since, pending_state, "
            "pending_detail, confirm_at, checked_at, last_finding, last_detail, chain, branch) "
            "VALUES ($1, $2, $3, to_timestamp($4), NULLIF($5, ''), CASE WHEN $5 = '' THEN NULL "
            "ELSE $6 END, CASE WHEN $7 < 0 THEN NULL ELSE to_timestamp($7) END, to_timestamp($8), "
            "$9, $10, $11::jsonb, $12) ON CONFLICT (link_id, branch) DO UPDATE SET state = $2, "
            "detail = $3, "
            "since = to_timestamp($4), pending_state = EXCLUDED.pending_state, "
            "pending_detail = EXCLUDED.pending_detail, confirm_at = EXCLUDED.confirm_at, "
            "checked_at = to_timestamp($8), last_finding = $9, "
            "last_detail = $10, chain = $11::jsonb",
            c.link_id, std::string(to_string(r.state.finding)), r.state.detail, unix_of(r.since),
            pending_state, pending_detail, confirm_at, unix_of(c.at),
            std::string(to_string(c.seen.finding)), c.seen.detail, chain, c.branch);
        if (!c.link_branches.empty())
            tx.exec_params(
                "DELETE FROM refgate_link_health WHERE link_id = $1 AND NOT branch = ANY "
                "(string_to_array($2, E'\\n'))",
                c.link_id, joined_lines(c.link_branches));
        tx.exec_params(
            "INSERT INTO refgate_link_health_checks (link_id, checked_at, finding, detail, "
            "duration_ms, chain, branch) VALUES ($1, to_timestamp($2), $3, $4, $5, $6::jsonb, $7)",
            c.link_id, unix_of(c.at), std::string(to_string(c.seen.finding)), c.seen.detail,
            static_cast<int>(c.duration.count()), chain, c.branch);
        tx.exec_params(
            "DELETE FROM refgate_link_health_checks WHERE link_id = $1 AND id NOT IN (SELECT id "
            "FROM refgate_link_health_checks WHERE link_id = $1 ORDER BY id DESC LIMIT $2)",
            c.link_id, kHistoryPerLink);
        auto switches = switch_fallbacks(tx, c.link_id);
        tx.commit();
        return switches;
    }

    std::vector<domain::PlanLink> plan(const std::vector<std::int64_t>& link_ids) override {
        std::map<std::int64_t, domain::PlanLink> found;
        for (auto id : link_ids) found[id] = domain::PlanLink{.id = id};
        pqxx::work tx(connection());
        for (const auto& row :
             tx.exec("SELECT link_id, extract(epoch FROM min(checked_at))::bigint AS checked_s, "
                     "extract(epoch FROM min(confirm_at))::bigint AS confirm_at_s "
                     "FROM refgate_link_health GROUP BY link_id")) {
            auto it = found.find(row["link_id"].as<std::int64_t>());
            if (it == found.end()) continue;
            it->second.last_checked = time_of(row["checked_s"]);
            it->second.confirm_at = time_of(row["confirm_at_s"]);
        }
        tx.commit();
        std::vector<domain::PlanLink> out;
        for (auto& [id, link] : found) out.push_back(link);
        return out;
    }

    std::map<domain::Finding, std::int64_t> state_counts() override {
        std::map<domain::Finding, std::int64_t> counts;
        pqxx::work tx(connection());
        for (const auto& row :
             tx.exec("SELECT state, count(DISTINCT link_id) AS links FROM refgate_link_health "
                     "GROUP BY state")) {
            if (auto f = domain::parse_finding(row["state"].c_str()))
                counts[*f] = row["links"].as<std::int64_t>();
        }
        tx.commit();
        return counts;
    }

    bool try_lock() override {
        if (locked_ && conn_ && conn_->is_open()) return true;
        pqxx::nontransaction tx(connection());
        locked_ =
            tx.exec_params("SELECT pg_try_advisory_lock($1) AS locked", kCheckerLock)[0]["locked"]
                .as<bool>();
        return locked_;
    }

  private:
    pqxx::connection& connection() {
        if (!conn_ || !conn_->is_open() || !pg::still_open(*conn_)) {
            locked_ = false;
            conn_.reset();
            conn_ = pg::connect(url_);
        }
        return *conn_;
    }

    std::string url_;
    std::unique_ptr<pqxx::connection> conn_;
    bool locked_ = false;
};

}  // namespace

std::unique_ptr<HealthStore> make_pg_health_store(const std::string& database_url) {
    return std::make_unique<PgHealthStore>(database_url);
}

nlohmann::json chain_json(const domain::Chain& chain) {
    nlohmann::json hops = nlohmann::json::array();
    for (const auto& hop : chain.hops) {
        nlohmann::json h = {{"url", hop.url}};
        if (hop.failure == domain::HopFailure::none) h["status"] = hop.status;
        if (!hop.location.empty()) h["location"] = hop.location;
        if (hop.failure != domain::HopFailure::none) h["failure"] = to_string(hop.failure);
        if (!hop.address.empty()) h["address"] = hop.address;
        hops.push_back(std::move(h));
    }
    return hops;
}

}  // namespace refgate::linkcheck
