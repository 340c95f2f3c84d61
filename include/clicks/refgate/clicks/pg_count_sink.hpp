#pragma once

#include <memory>
#include <string>

#include "refgate/clicks/count_sink.hpp"
#include "refgate/runtime/health_state.hpp"

namespace refgate::clicks {

struct PgCountSinkOptions {
    std::string database_url;
    // Where a new connection reports whether the server replicates commits synchronously
    // (postgres_sync_replication); null: nowhere.
    runtime::HealthState* health = nullptr;
    // libpq's connect_timeout: short for the service's flusher, which tries again next round;
    // longer for a one-shot command on a loaded machine.
    int connect_timeout_seconds = 3;
    // REFGATE_MAX_CHANNELS_PER_LINK_DAY: a bucket's channels past it are folded into "other" in
    // the transaction that applies the bucket (channel_cap.hpp).
    std::size_t max_channels_per_link_day = 100;
    // REFGATE_STATS_RETENTION_DAYS: base rows of older days are deleted (the roll-ups keep
    // them); 0 keeps every day.
    int stats_retention_days = 0;
};

// The CountSink over one PostgreSQL connection (libpqxx), opened when first needed and again after
// any failure (which also ends the session's flush lock). Blocking: never on an I/O thread.
std::unique_ptr<CountSink> make_pg_count_sink(PgCountSinkOptions options);

}  // namespace refgate::clicks
