#include "fallback_switch.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "refgate/domain/model.hpp"
#include "refgate/pg/webhook_outbox.hpp"

namespace refgate::linkcheck {
namespace {

struct BranchState {
    std::string reason;
    std::string detail;
};

}  // namespace

void lock_link(pqxx::transaction_base& tx, std::int64_t link_id) {
    // NO KEY UPDATE: the flusher's rows that reference the link (KEY SHARE) do not wait for it;
    // a deletion of the link (and its cascade to the health rows) does, in the same order.
    tx.exec_params("SELECT 1 FROM refgate_links WHERE id = $1 FOR NO KEY UPDATE", link_id);
}

std::vector<FallbackChange> switch_fallbacks(pqxx::transaction_base& tx, std::int64_t link_id) {
    std::vector<FallbackChange> changes;
    // The caller holds the link's row (lock_link): saves of one link's checks take turns.
    auto link = tx.exec_params(
        "SELECT slug, auto_fallback AND fallback IS NOT NULL AS enabled FROM refgate_links "
        "WHERE id = $1",
        link_id);
    if (link.empty()) return changes;
    std::string slug = link[0]["slug"].c_str();
    std::map<std::string, BranchState> wanted;
    if (link[0]["enabled"].as<bool>()) {
        for (const auto& row : tx.exec_params(
                 "SELECT branch, state, detail FROM refgate_link_health WHERE link_id = $1",
                 link_id)) {
            if (domain::fallback_worthy(row["state"].c_str()))
                wanted[row["branch"].c_str()] = {row["state"].c_str(), row["detail"].c_str()};
        }
    }
    std::map<std::string, BranchState> current;
    for (const auto& row : tx.exec_params(
             "SELECT branch, reason, detail FROM refgate_link_fallbacks WHERE link_id = $1",
             link_id))
        current[row["branch"].c_str()] = {row["reason"].c_str(), row["detail"].c_str()};

    for (const auto& [branch, state] : wanted) {
        auto it = current.find(branch);
        if (it == current.end()) {
            tx.exec_params(
                "INSERT INTO refgate_link_fallbacks (link_id, branch, reason, detail) "
                "VALUES ($1, $2, $3, $4)",
                link_id, branch, state.reason, state.detail);
            changes.push_back({slug, branch, true, state.reason, state.detail});
        } else if (it->second.reason != state.reason || it->second.detail != state.detail) {
            // Still switched, for another reason: no switch, no audit entry.
            tx.exec_params(
                "UPDATE refgate_link_fallbacks SET reason = $3, detail = $4 "
                "WHERE link_id = $1 AND branch = $2",
                link_id, branch, state.reason, state.detail);
        }
    }
    for (const auto& [branch, state] : current) {
        if (wanted.count(branch) != 0) continue;
        tx.exec_params("DELETE FROM refgate_link_fallbacks WHERE link_id = $1 AND branch = $2",
                       link_id, branch);
        changes.push_back({slug, branch, false, state.reason, state.detail});
    }
    for (const auto& c : changes) {
        nlohmann::json before{{"branch", c.branch}, {"serving", "destination"}};
        nlohmann::json after{{"branch", c.branch},
                             {"serving", "fallback"},
                             {"reason", c.reason},
                             {"detail", c.detail}};
        if (!c.to_fallback) std::swap(before, after);
        tx.exec_params(
            "INSERT INTO refgate_audit (actor, entity, slug, action, before, after) "
            "VALUES ('health', 'link', $1, 'update', $2::jsonb, $3::jsonb)",
            c.slug, before.dump(), after.dump());
        // The event: where the branch's readers go now, and why (the bad state it left when
        // back on its destination).
        nlohmann::json event{{"link", c.slug}, {"branch", c.branch}, {"serving", after["serving"]}};
        event[c.to_fallback ? "reason" : "recovered_from"] = c.reason;
        event["detail"] = c.detail;
        pg::emit_webhook(tx, "link.fallback_changed", event.dump());
    }
    return changes;
}

}  // namespace refgate::linkcheck
