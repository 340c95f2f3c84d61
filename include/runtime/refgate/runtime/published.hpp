#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

namespace refgate::runtime {

// Holds the current version of an immutable value, replaced as a whole (the link snapshot, the
// scanner networks). Readers compare generation() (one atomic load) with the generation of the
// copy they hold and take a new copy only when it changed.
template <typename T>
class Published {
  public:
    void publish(std::shared_ptr<const T> value) {
        {
            std::lock_guard lock(mutex_);
            current_ = std::move(value);
        }
        generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    // Publishes `value` only while `expected` is still the current value (a result computed from
    // it never replaces a newer one); false otherwise.
    bool publish_over(std::shared_ptr<const T> value, const T* expected) {
        {
            std::lock_guard lock(mutex_);
            if (current_.get() != expected) return false;
            current_ = std::move(value);
        }
        generation_.fetch_add(1, std::memory_order_acq_rel);
        return true;
    }
    std::shared_ptr<const T> current() const {
        std::lock_guard lock(mutex_);
        return current_;
    }
    std::uint64_t generation() const noexcept {
        return generation_.load(std::memory_order_acquire);
    }

  private:
    mutable std::mutex mutex_;
    std::shared_ptr<const T> current_;
    std::atomic<std::uint64_t> generation_{0};
};

// A per-thread reader of a Published value: no lock and no reference-count traffic per use.
template <typename T>
class PublishedReader {
  public:
    explicit PublishedReader(const Published<T>& store) : store_(store) {}
    const T* get() {
        auto generation = store_.generation();
        if (generation != generation_) {
            held_ = store_.current();
            generation_ = generation;
        }
        return held_.get();
    }
    // The store's generation of what get() last returned: it changes exactly when that does.
    std::uint64_t generation() const { return generation_; }

  private:
    const Published<T>& store_;
    std::shared_ptr<const T> held_;
    std::uint64_t generation_ = 0;
};

}  // namespace refgate::runtime
