#pragma once

#include "refgate/domain/snapshot.hpp"
#include "refgate/runtime/published.hpp"

namespace refgate {

// Holds the current snapshot (Published); SnapshotReader is a per-thread reader of it.
class SnapshotStore : public Published<Snapshot> {};

class SnapshotReader : public PublishedReader<Snapshot> {
  public:
    explicit SnapshotReader(const SnapshotStore& store) : PublishedReader<Snapshot>(store) {}
};

}  // namespace refgate
