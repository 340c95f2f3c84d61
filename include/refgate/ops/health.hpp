#pragma once

#include "refgate/core/clicks.hpp"
#include "refgate/core/health.hpp"
#include "refgate/core/snapshot.hpp"
#include "refgate/http/server.hpp"

namespace refgate {

// /healthz: the process answers. /readyz: a link snapshot is loaded (503 until then), with the
// snapshot's version and what the workers last saw of PostgreSQL and Redis.
class HealthHandler final : public http::Handler {
  public:
    // `clicks`: the counting pipeline's figures; null leaves them out.
    HealthHandler(const SnapshotStore& store, const HealthState& health,
                  const ClickStats* clicks = nullptr)
        : store_(store), health_(health), clicks_(clicks) {}
    void handle(const http::Request& request, http::Response& response) override;

  private:
    const SnapshotStore& store_;
    const HealthState& health_;
    const ClickStats* clicks_;
};

}  // namespace refgate
