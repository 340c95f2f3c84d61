#pragma once

// The roll-ups of the click counts (sql/014_rollups.sql): their state, their build in batches,
// the retention of old base rows, and the check that recomputes them from the base table.
// The flush writes them (src/clicks/pg_count_sink.cpp); the stats API reads them.

#include <chrono>
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace refgate::pg {

// Held shared by every transaction that writes counts and roll-ups (a flush), exclusively by one
// that rebuilds or moves them (a build batch, a retention batch, a link deleted or moved).
constexpr long long kRollupLock = 0x7265666761746533LL;  // "refgate3"

// The first statement of a transaction that writes counts: the lock, shared, and the setting that
// tells the base tables' trigger that this writer keeps the roll-ups.
constexpr const char* kRollupWriterSql =
    "SELECT pg_advisory_xact_lock_shared($1), set_config('refgate.rollups', 'on', true)";

// refgate_rollup_state, days as days since 1970-01-01.
struct RollupState {
    bool complete = false;
    std::int64_t built_through = -1;  // while not complete: the links rolled up (id <= this)
    bool reset_pending = false;
    std::optional<std::int32_t> base_from;  // days before it: no base rows (retention)
    std::int64_t purged_through = -1;
    // Month sums exist for the months before this (its first day); while the month it starts
    // is closed (it has ended), for the links up to months_closed_through too.
    std::int32_t months_through = 0;
    std::int64_t months_closed_through = -1;
    // Link days exist for the days before this one (sql/026_rollup_open_days.sql); while that day
    // is closed (it has ended), for the links up to days_closed_through too. The days from it on
    // are read from the base table.
    std::int32_t days_through = 0;
    std::int64_t days_closed_through = -1;
};

// Reads the state in `tx`.
RollupState read_rollup_state(pqxx::transaction_base& tx);

// One unit of roll-up upkeep, each in a transaction of its own that holds the lock exclusively:
// flushes wait for at most one of them.
enum class Upkeep {
    idle,      // nothing to do
    progress,  // did a batch; more may follow
    reset,     // cleared the roll-ups for a build from the start; more follows
};

// Batches sized to take about `target` each (links per batch, grown and shrunk by what the last
// batch took).
class BatchSizer {
  public:
    explicit BatchSizer(std::chrono::milliseconds target, std::int64_t first = 64)
        : target_(target), links_(first) {}
    std::int64_t links() const { return links_; }
    void took(std::chrono::steady_clock::duration elapsed);

  private:
    std::chrono::milliseconds target_;
    std::int64_t links_;
};

// The build: first clears what a reset asks for, then rolls up the next `links` link ids from the
// base tables, and says complete after the last. Once complete, closes the days that have ended
// (sql/026_rollup_open_days.sql): the link days of the next `links` link ids from the base table,
// and moves days_through on after the last; then the months that have ended and whose days are
// closed (sql/015_rollup_closed_months.sql): the month sums of the next `links` link ids from
// their link days, and moves months_through on after the last.
Upkeep build_rollups_step(pqxx::connection& conn, std::int64_t links);

// Retention (REFGATE_STATS_RETENTION_DAYS = keep_days): once the roll-ups are complete, base rows
// of days before the last `keep_days` (today, UTC, included) are deleted, a batch of `links` link
// ids at a time; the roll-ups keep them. Idle while the roll-ups are not complete.
Upkeep purge_old_counts_step(pqxx::connection& conn, std::int32_t keep_days, std::int64_t links);

// What `refgate migrate` runs after the SQL: builds until complete, in batches of about
// `batch_time`. Stops early (logged) when they are reset a second time meanwhile: a writer that
// does not keep them, e.g. a previous release still flushing during a rolling upgrade (the
// flusher of this release finishes the build once those are gone). Returns the batches run.
std::size_t build_rollups(pqxx::connection& conn, std::chrono::milliseconds batch_time);

struct RollupDifference {
    std::string table;     // e.g. refgate_rollup_link_days
    std::string key;       // e.g. "link 42, 2026-11-29"
    std::string rollup;    // "human 5, bot 0, prefetch 0, scanner 0" or "none"
    std::string expected;  // what the base table says, the same way
};

struct RollupCheck {
    RollupState state;
    bool all = false;
    std::size_t links = 0;  // links whose days and months were compared
    std::size_t days = 0;   // days whose partner, channel and unique sums were compared
    std::size_t differences = 0;
    std::vector<RollupDifference> shown;  // the first few
};

// Recomputes roll-ups from the base tables in one repeatable-read transaction and reports every
// difference: for `sample_links` random links and `sample_days` random days, or everything when
// `all`. Nothing is compared while the roll-ups are not complete (state tells).
RollupCheck check_rollups(pqxx::connection& conn, bool all, std::size_t sample_links = 200,
                          std::size_t sample_days = 10);

}  // namespace refgate::pg
