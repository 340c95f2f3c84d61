#include "refgate/admin/auth_cache.hpp"

namespace refgate::admin {

AuthCache::AuthCache(AuthCacheOptions options)
    : options_(options), entries_(options.lifetime, options.max_entries) {}

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

std::uint64_t AuthCache::generation() const { return entries_.generation(); }

std::optional<CachedCredential> AuthCache::find(const std::string& key) const {
    if (!enabled()) return std::nullopt;
    auto entry = entries_.find(key, steady_now());
    if (!entry || now() >= entry->until) return std::nullopt;
    return std::move(entry->value);
}

void AuthCache::put(std::string key, CachedCredential value, WallTime until,
                    std::uint64_t generation) {
    if (!enabled() || now() >= until) return;
    entries_.put(std::move(key), Entry{std::move(value), until}, steady_now(), generation);
}

void AuthCache::forget(const std::string& key) { entries_.forget(key); }

void AuthCache::forget_actor(std::string_view name) {
    entries_.forget_if([&](const Entry& entry) { return entry.value.actor.name == name; });
}

void AuthCache::clear() { entries_.clear(); }

std::size_t AuthCache::size() const { return entries_.size(); }

}  // namespace refgate::admin
