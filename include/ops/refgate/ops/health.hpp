#pragma once

#include "refgate/domain/clock.hpp"
#include "refgate/domain/snapshot.hpp"
#include "refgate/http/server.hpp"
#include "refgate/metrics/click_stats.hpp"
#include "refgate/runtime/health_state.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace refgate::ops {

// What /readyz tells: the verdict alone (the public listener: nothing about the dependencies or
// queues reaches the internet), or the details too (the admin listener).
enum class ReadinessDetail { verdict, full };

// /healthz: the process answers. /readyz: a link snapshot is loaded (503 until then, and again
// from the first stop signal on, while the instance drains), with the
// snapshot's version and what the workers last saw of PostgreSQL and Redis. Both answer from
// memory, on the I/O thread.
class HealthHandler final : public http::Handler {
  public:
    // `clicks`: the counting pipeline's figures; null leaves them out. `clock`: for the
    // snapshot's age; null: the system clock.
    HealthHandler(const runtime::SnapshotStore& store, const runtime::HealthState& health,
                  const metrics::ClickStats* clicks = nullptr,
                  ReadinessDetail detail = ReadinessDetail::full,
                  const domain::Clock* clock = nullptr)
        : store_(store), health_(health), clicks_(clicks), detail_(detail), clock_(clock) {}
    void handle(const http::Request& request, http::Response& response) override;

  private:
    const runtime::SnapshotStore& store_;
    const runtime::HealthState& health_;
    const metrics::ClickStats* clicks_;
    ReadinessDetail detail_;
    const domain::Clock* clock_;
};

}  // namespace refgate::ops
