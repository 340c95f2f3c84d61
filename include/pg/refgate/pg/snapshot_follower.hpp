#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "refgate/domain/clock.hpp"
#include "refgate/domain/destination.hpp"
#include "refgate/domain/snapshot.hpp"
#include "refgate/runtime/health_state.hpp"
#include "refgate/runtime/periodic_worker.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace refgate::pg {

struct SnapshotFollowerOptions {
    std::string database_url;
    std::string snapshot_file;  // empty: none
    std::chrono::milliseconds reload_interval{5'000};
    domain::UrlPolicy url_policy;
    // When scheduled codes take over and when the snapshot was confirmed; null: the system clock.
    const domain::Clock* clock = nullptr;
};

// Keeps a SnapshotStore in step with PostgreSQL: LISTENs for changes and reloads at once, and
// checks the version every reload interval as a safety net. While PostgreSQL is unreachable the
// last snapshot stays; every snapshot loaded from PostgreSQL is also written to the snapshot file,
// from which a restarted instance can serve while PostgreSQL is still down. Scheduled referral
// codes take over at their moment (checked every 100 ms) from the snapshot alone.
class SnapshotFollower {
  public:
    SnapshotFollower(SnapshotFollowerOptions options, runtime::SnapshotStore& store,
                     runtime::HealthState& health);
    ~SnapshotFollower();
    SnapshotFollower(const SnapshotFollower&) = delete;
    SnapshotFollower& operator=(const SnapshotFollower&) = delete;

    // Loads once, synchronously: from PostgreSQL, else from the snapshot file. Returns false when
    // neither gave a snapshot.
    bool load_initial();
    // Follows changes on a background thread until stop().
    void start();
    void stop();
    // Reloads everything from PostgreSQL soon (within the notification poll), whatever the
    // version says: for an operator who suspects a missed NOTIFY (SIGHUP).
    void request_reload() { reload_requested_.store(true); }

  private:
    const domain::Clock& clock() const;
    runtime::RoundOutcome round();
    void idle_round();
    bool reload_from_database(bool force);
    bool load_file();
    // Publishes the codes in effect now when a scheduled code's moment has come.
    void advance_schedule();
    // Writes due scheduled codes through to PostgreSQL (any instance may; each entry once).
    void write_due_codes();
    void write_pending_file();
    void write_file_when_due();  // writes unwritten_ once write_after_ has passed

    SnapshotFollowerOptions options_;
    runtime::SnapshotStore& store_;
    runtime::HealthState& health_;
    std::atomic<bool> reload_requested_{false};
    std::uint64_t due_codes_written_for_ = 0;  // snapshot version
    struct Connection;
    std::unique_ptr<Connection> connection_;
    // Loaded from PostgreSQL, not yet in the snapshot file; only the follower's thread writes it
    // (load_initial runs before that thread starts).
    std::shared_ptr<const domain::Snapshot> unwritten_;
    std::chrono::steady_clock::time_point write_after_{};
    std::chrono::steady_clock::time_point next_check_{};  // of the version
    runtime::PeriodicWorker worker_;  // last: stopped before the members its rounds use go
};

}  // namespace refgate::pg
