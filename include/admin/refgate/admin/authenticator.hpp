#pragma once

// Who is calling the admin API. Each way of signing in (bearer tokens for scripts, a console
// session for people) is one Authenticator; the API asks them in order and takes the first that
// accepts.

#include <string>
#include <string_view>

#include "refgate/admin/admin_store.hpp"
#include "refgate/admin/auth_cache.hpp"
#include "refgate/http/request.hpp"

namespace refgate::admin {

struct Authentication {
    // absent: the request carries none of this authenticator's credentials; refused: it carries
    // some, and they are wrong, unknown or revoked; forged: they are good, but the request may
    // have been made by another site (a CSRF check failed: 403).
    enum class Kind { absent, accepted, refused, forged };
    Kind kind = Kind::absent;
    Actor actor;         // when accepted
    std::string detail;  // why, when refused or forged; empty: the bearer token's wording
};

class Authenticator {
  public:
    virtual ~Authenticator() = default;
    // Throws StoreError when the database cannot say. Thread-safe.
    virtual Authentication authenticate(const http::Request& request) = 0;
};

// "Authorization: Bearer <token>", looked up by the token's SHA-256 in `store`, or in `cache`
// when it was checked a moment ago: kept until the token expires at the latest, and never into
// the next UTC day, so that the day's first use still notes the token's last_used_on.
class BearerAuthenticator final : public Authenticator {
  public:
    // `store` and `cache` (may be null: none) must outlive the authenticator.
    explicit BearerAuthenticator(AdminStore& store, AuthCache* cache = nullptr)
        : store_(store), cache_(cache) {}
    Authentication authenticate(const http::Request& request) override;

  private:
    AdminStore& store_;
    AuthCache* cache_;
};

class ConsoleService;

// Where the console is and how its cookie looks.
struct ConsoleWeb {
    // The admin listener's origin as browsers reach it; empty: the request's own Host.
    std::string admin_origin;
    // https: the cookie is Secure and named with the __Host- prefix.
    bool secure() const { return admin_origin.starts_with("https://"); }
    std::string_view cookie_name() const {
        return secure() ? "__Host-refgate_session" : "refgate_session";
    }
};

// The console's session cookie, looked up by its id's SHA-256 (in `cache` when it was checked a
// moment ago: kept until the session's end, its idle end or the next noting of its use, whichever
// comes first, so that its sliding idle expiry behaves as without the cache). Unsafe methods
// (POST, PUT, PATCH, DELETE) also need the session's X-CSRF-Token, an Origin (when sent) that is
// the console's own, and no Sec-Fetch-Site: cross-site or same-site.
class SessionAuthenticator final : public Authenticator {
  public:
    // `console` and `cache` (may be null: none) must outlive the authenticator.
    SessionAuthenticator(ConsoleService& console, ConsoleWeb web, AuthCache* cache = nullptr)
        : console_(console), web_(std::move(web)), cache_(cache) {}
    Authentication authenticate(const http::Request& request) override;

  private:
    ConsoleService& console_;
    ConsoleWeb web_;
    AuthCache* cache_;
};

}  // namespace refgate::admin
