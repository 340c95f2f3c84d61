#pragma once

#include "refgate/domain/snapshot.hpp"
#include "refgate/runtime/cap_flags.hpp"
#include "refgate/runtime/published.hpp"

namespace refgate::runtime {

// Holds the current snapshot (Published); SnapshotReader is a per-thread reader of it. Beside
// it, the click caps' flags (issue 44), published by the cap worker for the snapshot's caps.
class SnapshotStore : public Published<domain::Snapshot> {
  public:
    Published<CapFlags>& cap_flags() noexcept { return cap_flags_; }
    const Published<CapFlags>& cap_flags() const noexcept { return cap_flags_; }

  private:
    Published<CapFlags> cap_flags_;
};

class SnapshotReader : public PublishedReader<domain::Snapshot> {
  public:
    explicit SnapshotReader(const SnapshotStore& store)
        : PublishedReader<domain::Snapshot>(store) {}
};

}  // namespace refgate::runtime
