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
// The branch of a link's own destination (targeting branches: "rules[i]", "rules[i].split[j]").
inline constexpr const char* kDefaultBranch = "default";

// One check of one link: what it saw and the record it leaves.
struct CheckReport {
    std::int64_t link_id = 0;
    std::string slug;
    std::string branch = kDefaultBranch;     // the targeting branch checked
    std::vector<std::string> link_branches;  // every branch the link has now
    domain::SysSeconds at{};
    domain::Verdict seen;
    domain::HealthRecord record;
    std::chrono::milliseconds duration{0};
    domain::Chain chain;
    bool aborted = false;  // stopped during the check: nothing judged or stored
};

// A branch that automatic fallback (issue 44) switched: to the fallback (`to_fallback`) with the
// confirmed state and detail that caused it, or back to its destination.
struct FallbackChange {
    std::string slug;
    std::string branch;
    bool to_fallback = true;
    std::string reason;  // broken, unavailable or code_dropped
    std::string detail;
};

class HealthStore {
  public:
    virtual ~HealthStore() = default;
    virtual std::optional<domain::HealthRecord> record(std::int64_t link_id,
                                                       const std::string& branch) = 0;
    // Stores the branch's record, adds the check to the history and trims it to kHistoryPerLink;
    // forgets the link's branches that are no longer among report.link_branches. In the same
    // transaction, switches the link's branches to or from its fallback (automatic fallback)
    // and answers the switches made.
    virtual std::vector<FallbackChange> save(const CheckReport& report) = 0;
    // The plan's view of these links: the oldest check of their branches and the first pending
    // confirmation.
    virtual std::vector<domain::PlanLink> plan(const std::vector<std::int64_t>& link_ids) = 0;
    // Links per confirmed state, a link's state being its worst branch's (checked links only).
    virtual std::map<domain::Finding, std::int64_t> state_counts() = 0;
    // The fleet's one checker: a session advisory lock on this store's connection, kept until
    // the connection ends. True when this store holds it.
    virtual bool try_lock() = 0;
};

// Throws std::runtime_error (from libpqxx) when PostgreSQL fails; reconnects on the next call.
std::unique_ptr<HealthStore> make_pg_health_store(const std::string& database_url);

// A hop chain as the API and the history show it: [{url, status, location, failure, address}].
nlohmann::json chain_json(const domain::Chain& chain);

// GET /api/v1/links/{slug}/health: the state, the pending finding, the last chain and the
// history; nullopt when there is no such link. Throws when PostgreSQL fails.
std::optional<nlohmann::json> read_health(const std::string& database_url, const std::string& slug);

}  // namespace refgate::linkcheck
