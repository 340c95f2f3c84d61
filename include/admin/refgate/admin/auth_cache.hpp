#pragma once

// Credentials checked a moment ago, kept for a few seconds so that a page polling the API (the
// console's "Right now") does not read PostgreSQL on every call. Keyed by the credential's
// SHA-256, never by the secret. A change made through this instance (a revoked token, a user
// changed or disabled, a sign-out, a new password) forgets what it touches at once; one made
// elsewhere (another instance, the CLI) takes effect when the entry's lifetime ends. Failures are
// never kept: an unknown credential asks the database every time (the failure limiter bounds
// that). Thread-safe.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "refgate/admin/admin_store.hpp"
#include "refgate/admin/kept_entries.hpp"
#include "refgate/domain/clock.hpp"

namespace refgate::admin {

struct AuthCacheOptions {
    std::chrono::seconds lifetime{0};  // how long a checked credential is kept; 0: never
    // Entries at most; when full, all are dropped (they are a few seconds' worth of callers).
    std::size_t max_entries = 10'000;
    const domain::Clock* clock = nullptr;               // expiries; none: the system clock
    const domain::MonotonicClock* monotonic = nullptr;  // the lifetime; none: the steady clock
};

// What a credential stood for when it was checked.
struct CachedCredential {
    Actor actor;
    std::string csrf_token;  // a console session's; empty for a token
};

class AuthCache {
  public:
    using WallTime = std::chrono::system_clock::time_point;

    explicit AuthCache(AuthCacheOptions options = {});

    bool enabled() const { return entries_.enabled(); }
    WallTime now() const;

    // The keys of a token and of a console session, by the SHA-256 (hex) of their text.
    static std::string token_key(std::string_view hash_hex);
    static std::string session_key(std::string_view hash_hex);

    // Taken before the store is asked: an entry put with an older generation than the current
    // one is not kept, so that a lookup that raced a revocation cannot bring the credential back.
    std::uint64_t generation() const;
    // The credential while its entry lives.
    std::optional<CachedCredential> find(const std::string& key) const;
    // Keeps `value` for the lifetime, never past `until` (the credential's own expiry).
    void put(std::string key, CachedCredential value, WallTime until, std::uint64_t generation);

    // Forget one credential, every credential of an actor ("ci", "user:alice"), or all.
    void forget(const std::string& key);
    void forget_actor(std::string_view name);
    void clear();
    std::size_t size() const;

  private:
    struct Entry {
        CachedCredential value;
        WallTime until;
    };

    std::chrono::steady_clock::time_point steady_now() const;

    AuthCacheOptions options_;
    domain::SystemClock system_clock_;
    domain::SteadyClock steady_clock_;
    KeptEntries<Entry> entries_;
};

}  // namespace refgate::admin
