#include "refgate/pg/snapshot_follower.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "refgate/codec/snapshot_file.hpp"
#include "refgate/pg/connection.hpp"
#include "refgate/runtime/background_thread.hpp"
#include "refgate/runtime/log.hpp"
#include "refgate/runtime/snapshot_store.hpp"
#include "snapshot_reader.hpp"

namespace refgate::pg {
namespace {

constexpr const char* kChannel = "refgate_snapshot";
constexpr std::chrono::milliseconds kNotificationPoll{100};
constexpr std::chrono::milliseconds kMinBackoff{100};
// A database that comes back, or a standby promoted in a failover, is found within a second, so
// that changes made there reach redirects as promptly as before (a connection attempt a second
// costs a server nothing).
constexpr std::chrono::milliseconds kMaxBackoff{1'000};

class ChangeReceiver final : public pqxx::notification_receiver {
  public:
    ChangeReceiver(pqxx::connection_base& conn, bool& flag)
        : notification_receiver(conn, kChannel), flag_(flag) {}
    void operator()(const std::string&, int) override { flag_ = true; }

  private:
    bool& flag_;
};

// A freshly loaded snapshot is written to the file this long after it was published, so that a
// start's first load is answering requests before the file is written (on one core, writing
// 100,000 links would otherwise delay readiness by a few hundred milliseconds). The follower
// keeps listening and reloading meanwhile.
constexpr std::chrono::milliseconds kFileWriteDelay{1'500};

// Gives the heap that loading freed (query results, parsed rows, the old snapshot) back to the
// system: glibc keeps it otherwise, and a start with 100,000 links would stay at its peak.
void release_free_memory() { runtime::trim_heap(); }

// Writes the whole file beside its final name, syncs it and renames it into place, so that a
// crash never leaves a half-written snapshot behind.
bool write_atomically(const std::string& path, const domain::Snapshot& snapshot) {
    std::string tmp = path + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    bool ok = true;
    codec::write_snapshot_json(snapshot, [&](std::string_view piece) {
        const char* p = piece.data();
        std::size_t left = piece.size();
        while (ok && left > 0) {
            ssize_t n = ::write(fd, p, left);
            if (n <= 0) {
                ok = false;
                break;
            }
            p += n;
            left -= static_cast<std::size_t>(n);
        }
    });
    ok = ok && ::fsync(fd) == 0;
    ok = (::close(fd) == 0) && ok;
    ok = ok && std::rename(tmp.c_str(), path.c_str()) == 0;
    if (!ok) ::unlink(tmp.c_str());
    return ok;
}

const domain::SystemClock kSystemClock;

}  // namespace

struct SnapshotFollower::Connection {
    std::unique_ptr<pqxx::connection> conn;
    bool notified = false;
    std::unique_ptr<ChangeReceiver> receiver;

    ~Connection() {
        receiver.reset();  // UNLISTEN before the connection goes
    }
};

SnapshotFollower::SnapshotFollower(SnapshotFollowerOptions options, runtime::SnapshotStore& store,
                                   runtime::HealthState& health)
    : options_(std::move(options)),
      store_(store),
      health_(health),
      // The round itself waits for notifications (kNotificationPoll): no interval between rounds.
      worker_(
          {.name = "rg-snapshot",
           .priority = runtime::BackgroundPriority::low,
           .interval = std::chrono::milliseconds{0},
           .min_backoff = kMinBackoff,
           .max_backoff = kMaxBackoff,
           .idle_tick = kNotificationPoll},
          [this] { return round(); }, [this] { idle_round(); }) {}

SnapshotFollower::~SnapshotFollower() { stop(); }

const domain::Clock& SnapshotFollower::clock() const {
    return options_.clock != nullptr ? *options_.clock : kSystemClock;
}

bool SnapshotFollower::load_initial() {
    try {
        connection_ = std::make_unique<Connection>();
        connection_->conn = connect(options_.database_url);
        connection_->receiver =
            std::make_unique<ChangeReceiver>(*connection_->conn, connection_->notified);
        health_.postgres = runtime::DependencyState::up;
        if (reload_from_database(true)) return true;
    } catch (const std::exception& e) {
        connection_.reset();
        health_.postgres = runtime::DependencyState::down;
        health_.postgres_errors.fetch_add(1, std::memory_order_relaxed);
        health_.snapshot_reload_failures.fetch_add(1, std::memory_order_relaxed);
        runtime::log::warn("snapshot_database_unavailable", {{"error", e.what()}});
    }
    return load_file();
}

void SnapshotFollower::start() {
    next_check_ = std::chrono::steady_clock::now() + options_.reload_interval;
    worker_.start();
}

void SnapshotFollower::stop() {
    worker_.stop();
    connection_.reset();
    write_pending_file();  // stopped within kFileWriteDelay of a load
}

// One round: connect when needed, wait up to kNotificationPoll for a change, then reload when one
// came, when asked to, or when the version check is due. A failure drops the connection; the
// worker backs off and meanwhile keeps scheduled codes taking over on time (idle_round).
runtime::RoundOutcome SnapshotFollower::round() {
    try {
        if (!connection_) {
            connection_ = std::make_unique<Connection>();
            connection_->conn = connect(options_.database_url);
            connection_->receiver =
                std::make_unique<ChangeReceiver>(*connection_->conn, connection_->notified);
            runtime::log::info("snapshot_database_connected");
            reload_from_database(false);
            next_check_ = std::chrono::steady_clock::now() + options_.reload_interval;
        }
        health_.postgres = runtime::DependencyState::up;
        connection_->conn->await_notification(0, kNotificationPoll.count() * 1000);
        advance_schedule();
        write_due_codes();
        bool forced = reload_requested_.exchange(false);
        if (forced || connection_->notified || std::chrono::steady_clock::now() >= next_check_) {
            connection_->notified = false;
            reload_from_database(forced);
            next_check_ = std::chrono::steady_clock::now() + options_.reload_interval;
        }
        write_file_when_due();
        return runtime::RoundOutcome::done;
    } catch (const std::exception& e) {
        connection_.reset();
        health_.postgres_errors.fetch_add(1, std::memory_order_relaxed);
        health_.snapshot_reload_failures.fetch_add(1, std::memory_order_relaxed);
        if (health_.postgres.exchange(runtime::DependencyState::down) !=
            runtime::DependencyState::down) {
            runtime::log::warn("snapshot_database_unavailable", {{"error", e.what()}});
        }
        return runtime::RoundOutcome::failed;
    }
}

// Scheduled codes still take over on time while PostgreSQL is away.
void SnapshotFollower::idle_round() {
    advance_schedule();
    write_file_when_due();
}

bool SnapshotFollower::reload_from_database(bool force) {
    auto current = store_.current();
    auto checked = std::chrono::steady_clock::now();
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(*connection_->conn);
    if (!force && current && current->source() == "postgres" &&
        read_version(tx) == current->version()) {
        health_.postgres_latency.observe(std::chrono::steady_clock::now() - checked);
        health_.snapshot_checked_at.store(clock().unix_seconds(), std::memory_order_relaxed);
        return true;
    }
    auto started = std::chrono::steady_clock::now();
    StoredData data = read_all(tx);
    tx.commit();
    auto snapshot = build_snapshot(std::move(data), options_.url_policy, "postgres");
    for (const auto& reason : snapshot->rejected())
        runtime::log::warn("link_rejected", {{"reason", reason}});
    store_.publish(snapshot);
    health_.snapshot_checked_at.store(clock().unix_seconds(), std::memory_order_relaxed);
    auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    runtime::log::info("snapshot_loaded", {{"source", "postgres"},
                                           {"version", snapshot->version()},
                                           {"links", snapshot->link_count()},
                                           {"millis", millis.count()}});
    // Written by the follower's thread kFileWriteDelay later: never before the snapshot serves.
    if (!unwritten_) write_after_ = std::chrono::steady_clock::now() + kFileWriteDelay;
    unwritten_ = std::move(snapshot);
    release_free_memory();
    return true;
}

void SnapshotFollower::advance_schedule() {
    auto current = store_.current();
    if (!current || !current->next_change()) return;
    auto now = std::chrono::time_point_cast<std::chrono::seconds>(clock().now());
    if (now < *current->next_change()) return;
    auto next = current->at(now);
    store_.publish(next);
    runtime::log::info(
        "scheduled_code_took_over",
        {{"version", next->version()}, {"at", domain::format_rfc3339(*current->next_change())}});
}

void SnapshotFollower::write_due_codes() {
    auto current = store_.current();
    if (!current || !current->schedule_due() || current->version() == due_codes_written_for_)
        return;
    // Once per snapshot version: the NOTIFY of the write brings the next one.
    due_codes_written_for_ = current->version();
    pqxx::work tx(*connection_->conn);
    auto applied = tx.exec("SELECT refgate_apply_due_codes() AS applied")[0]["applied"].as<int>();
    tx.commit();
    if (applied > 0) runtime::log::info("scheduled_codes_written", {{"count", applied}});
}

bool SnapshotFollower::load_file() {
    if (options_.snapshot_file.empty()) return false;
    std::ifstream in(options_.snapshot_file);
    if (!in) {
        runtime::log::warn("snapshot_file_missing", {{"path", options_.snapshot_file}});
        return false;
    }
    try {
        auto snapshot = codec::read_snapshot_json(in, options_.url_policy);
        store_.publish(snapshot);
        runtime::log::info("snapshot_loaded", {{"source", "file"},
                                               {"version", snapshot->version()},
                                               {"links", snapshot->link_count()}});
        release_free_memory();
        return true;
    } catch (const std::exception& e) {
        runtime::log::error("snapshot_file_unreadable",
                            {{"path", options_.snapshot_file}, {"error", e.what()}});
        return false;
    }
}

void SnapshotFollower::write_file_when_due() {
    if (unwritten_ && std::chrono::steady_clock::now() >= write_after_) write_pending_file();
}

void SnapshotFollower::write_pending_file() {
    auto snapshot = std::move(unwritten_);
    unwritten_.reset();
    if (!snapshot || options_.snapshot_file.empty()) return;
    if (!write_atomically(options_.snapshot_file, *snapshot)) {
        runtime::log::warn("snapshot_file_write_failed", {{"path", options_.snapshot_file}});
    }
    snapshot.reset();
    release_free_memory();
}

}  // namespace refgate::pg
