#include "refgate/runtime/snapshot_store.hpp"

namespace refgate {

void SnapshotStore::publish(std::shared_ptr<const Snapshot> snapshot) {
    {
        std::lock_guard lock(mutex_);
        current_ = std::move(snapshot);
    }
    generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::shared_ptr<const Snapshot> SnapshotStore::current() const {
    std::lock_guard lock(mutex_);
    return current_;
}

}  // namespace refgate
