#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "refgate/domain/snapshot.hpp"

namespace refgate {

// Holds the current snapshot. Readers compare generation() (one relaxed atomic load) with the
// generation of the copy they hold and take a new copy only when it changed.
class SnapshotStore {
  public:
    void publish(std::shared_ptr<const Snapshot> snapshot);
    std::shared_ptr<const Snapshot> current() const;
    std::uint64_t generation() const noexcept {
        return generation_.load(std::memory_order_acquire);
    }

  private:
    mutable std::mutex mutex_;
    std::shared_ptr<const Snapshot> current_;
    std::atomic<std::uint64_t> generation_{0};
};

// A per-thread reader of a SnapshotStore: no lock and no reference-count traffic per request.
class SnapshotReader {
  public:
    explicit SnapshotReader(const SnapshotStore& store) : store_(store) {}
    const Snapshot* get() {
        auto generation = store_.generation();
        if (generation != generation_) {
            held_ = store_.current();
            generation_ = generation;
        }
        return held_.get();
    }

  private:
    const SnapshotStore& store_;
    std::shared_ptr<const Snapshot> held_;
    std::uint64_t generation_ = 0;
};

}  // namespace refgate
