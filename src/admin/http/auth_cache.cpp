#include "refgate/admin/auth_cache.hpp"

namespace refgate::admin {

AuthCache::AuthCache(AuthCacheOptions options) : options_(options) {}

AuthCache::WallTime AuthCache::now() const {
    return options_.clock != nullptr ? options_.clock->now() : system_clock_.now();
}

std::chrono::steady_clock::time_point AuthCache::steady_now() const {
    return options_.monotonic != nullptr ? options_.monotonic->now() : steady_clock_.now();
}

std::string AuthCache::token_key(std::string_view hash_hex) { return "t:" + std::string(hash_hex); }

std::string AuthCache::session_key(std::string_view hash_hex) {
    return "s:" + std::string(hash_hex);
}

std::uint64_t AuthCache::generation() const {
    std::lock_guard lock(mutex_);
    return generation_;
}

std::optional<CachedCredential> AuthCache::find(const std::string& key) const {
    if (!enabled()) return std::nullopt;
    auto steady = steady_now();
    auto wall = now();
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    // An entry past its time is left for put() to replace or a full cache to drop.
    if (it == entries_.end() || steady >= it->second.fresh_until || wall >= it->second.until)
        return std::nullopt;
    return it->second.value;
}

void AuthCache::put(std::string key, CachedCredential value, WallTime until,
                    std::uint64_t generation) {
    if (!enabled()) return;
    auto steady = steady_now();
    if (now() >= until) return;
    std::lock_guard lock(mutex_);
    if (generation != generation_) return;
    if (entries_.size() >= options_.max_entries && !entries_.contains(key)) entries_.clear();
    entries_.insert_or_assign(std::move(key),
                              Entry{std::move(value), steady + options_.lifetime, until});
}

void AuthCache::forget(const std::string& key) {
    std::lock_guard lock(mutex_);
    ++generation_;
    entries_.erase(key);
}

void AuthCache::forget_actor(std::string_view name) {
    std::lock_guard lock(mutex_);
    ++generation_;
    std::erase_if(entries_,
                  [&](const auto& entry) { return entry.second.value.actor.name == name; });
}

void AuthCache::clear() {
    std::lock_guard lock(mutex_);
    ++generation_;
    entries_.clear();
}

std::size_t AuthCache::size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

}  // namespace refgate::admin
