// The console's session as one more authenticator of the admin API (the HTTP side, cookie and
// CSRF checks, is in console_http.cpp, which the fuzz targets build without a database).

#include <algorithm>

#include "console_http.hpp"
#include "refgate/admin/console_crypto.hpp"

namespace refgate::admin {

namespace {

// The session as the CSRF check needs it, from what the cache kept.
ConsoleSession kept_session(const CachedCredential& kept) {
    return {.csrf_token = kept.csrf_token, .id_hash = kept.actor.session};
}

AuthCache::WallTime from_micros(std::int64_t us) {
    return AuthCache::WallTime{
        std::chrono::duration_cast<AuthCache::WallTime::duration>(std::chrono::microseconds{us})};
}

}  // namespace

Authentication SessionAuthenticator::authenticate(const http::Request& request) {
    std::string_view id = session_cookie(request, web_);
    if (id.empty()) return {};
    std::string key;
    std::uint64_t generation = 0;
    std::optional<CachedCredential> kept;
    if (cache_ != nullptr && cache_->enabled() && plausible_secret(id)) {
        key = AuthCache::session_key(secret_hash_hex(id));
        kept = cache_->find(key);
        if (!kept) generation = cache_->generation();
    }
    if (!kept) {
        auto session = console_.session(id);
        if (!session)
            return {.kind = Authentication::Kind::refused,
                    .detail = "the session has ended or expired; sign in again"};
        kept = CachedCredential{.actor = {.name = "user:" + session->user,
                                          .role = session->role,
                                          .session = session->id_hash},
                                .csrf_token = session->csrf_token};
        // Kept no longer than the session lives, nor past the moment its next use is noted.
        if (!key.empty())
            cache_->put(key, *kept,
                        from_micros(std::min({session->expires_us, session->idle_expires_us,
                                              session->touch_due_us})),
                        generation);
    }
    if (unsafe_method(request.method)) {
        if (std::string why = csrf_failure(request, web_, kept_session(*kept)); !why.empty())
            return {.kind = Authentication::Kind::forged, .detail = std::move(why)};
    }
    return {.kind = Authentication::Kind::accepted, .actor = std::move(kept->actor)};
}

}  // namespace refgate::admin
