#pragma once

// Where link health is kept: the latest state per link and its last checks (PostgreSQL, table
// refgate_link_health and refgate_link_health_checks).

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "refgate/domain/link_check_plan.hpp"
#include "refgate/domain/link_health.hpp"

namespace refgate::linkcheck {

inline constexpr int kHistoryPerLink = 20;

// One check of one link: what it saw and the record it leaves.
struct CheckReport {
    std::int64_t link_id = 0;
    std::string slug;
    SysSeconds at{};
    Verdict seen;
    HealthRecord record;
    std::chrono::milliseconds duration{0};
    Chain chain;
};

class HealthStore {
  public:
    virtual ~HealthStore() = default;
    virtual std::optional<HealthRecord> record(std::int64_t link_id) = 0;
    // Stores the record, adds the check to the history and trims it to kHistoryPerLink.
    virtual void save(const CheckReport& report) = 0;
    // The plan's view of these links: last check and pending confirmation.
    virtual std::vector<PlanLink> plan(const std::vector<std::int64_t>& link_ids) = 0;
    // Links per confirmed state (checked links only).
    virtual std::map<Finding, std::int64_t> state_counts() = 0;
    // The fleet's one checker: a session advisory lock on this store's connection, kept until
    // the connection ends. True when this store holds it.
    virtual bool try_lock() = 0;
};

// Throws std::runtime_error (from libpqxx) when PostgreSQL fails; reconnects on the next call.
std::unique_ptr<HealthStore> make_pg_health_store(const std::string& database_url);

// A hop chain as the API and the history show it: [{url, status, location, failure, address}].
nlohmann::json chain_json(const Chain& chain);

// GET /api/v1/links/{slug}/health: the state, the pending finding, the last chain and the
// history; nullopt when there is no such link. Throws when PostgreSQL fails.
std::optional<nlohmann::json> read_health(const std::string& database_url, const std::string& slug);

}  // namespace refgate::linkcheck
