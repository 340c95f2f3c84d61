#pragma once

#include "refgate/core/health.hpp"
#include "refgate/core/snapshot.hpp"
#include "refgate/http/server.hpp"

namespace refgate {

// /healthz: the process answers. /readyz: a link snapshot is loaded (503 until then), with the
// snapshot's version and what the workers last saw of PostgreSQL and Redis.
class HealthHandler final : public http::Handler {
  public:
    HealthHandler(const SnapshotStore& store, const HealthState& health)
        : store_(store), health_(health) {}
    void handle(const http::Request& request, http::Response& response) override;

  private:
    const SnapshotStore& store_;
    const HealthState& health_;
};

}  // namespace refgate
