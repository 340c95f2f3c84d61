#pragma once

// What the database said a moment ago, kept for a few seconds: the API's checked credentials
// (auth_cache.hpp) and the partners' postback secrets (pg_commission_store.cpp). A change made
// through this instance forgets what it touches at once, and bumps a generation counter so that a
// read of the database that raced the change cannot put the old value back; one made elsewhere
// takes effect when the entry's lifetime ends. When full, every entry is dropped (they are a few
// seconds' worth of callers). Thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace refgate::admin {

template <class Value>
class KeptEntries {
  public:
    using SteadyTime = std::chrono::steady_clock::time_point;

    // `lifetime` 0 keeps nothing.
    KeptEntries(std::chrono::seconds lifetime, std::size_t max_entries)
        : lifetime_(lifetime), max_entries_(max_entries) {}

    bool enabled() const { return lifetime_.count() > 0; }

    // Taken before the database is read; see put().
    std::uint64_t generation() const {
        std::lock_guard lock(mutex_);
        return generation_;
    }

    // The value while its entry lives (`now` on the steady clock).
    std::optional<Value> find(const std::string& key, SteadyTime now) const {
        if (!enabled()) return std::nullopt;
        std::lock_guard lock(mutex_);
        auto it = entries_.find(key);
        // An entry past its time is left for put() to replace or a full store to drop.
        if (it == entries_.end() || now >= it->second.second) return std::nullopt;
        return it->second.first;
    }

    // Keeps `value` for the lifetime from `now`, unless something was forgotten since
    // `generation` was taken.
    void put(std::string key, Value value, SteadyTime now, std::uint64_t generation) {
        if (!enabled()) return;
        std::lock_guard lock(mutex_);
        if (generation != generation_) return;
        if (entries_.size() >= max_entries_ && !entries_.contains(key)) entries_.clear();
        entries_.insert_or_assign(std::move(key), std::pair{std::move(value), now + lifetime_});
    }

    void forget(const std::string& key) {
        std::lock_guard lock(mutex_);
        ++generation_;
        entries_.erase(key);
    }

    // Forgets every entry whose value `matches`.
    template <class Predicate>
    void forget_if(Predicate matches) {
        std::lock_guard lock(mutex_);
        ++generation_;
        std::erase_if(entries_, [&](const auto& entry) { return matches(entry.second.first); });
    }

    void clear() {
        std::lock_guard lock(mutex_);
        ++generation_;
        entries_.clear();
    }

    std::size_t size() const {
        std::lock_guard lock(mutex_);
        return entries_.size();
    }

  private:
    const std::chrono::seconds lifetime_;
    const std::size_t max_entries_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::pair<Value, SteadyTime>> entries_;
    std::uint64_t generation_ = 0;
};

}  // namespace refgate::admin
