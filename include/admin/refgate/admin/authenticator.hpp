#pragma once

// Who is calling the admin API. Each way of signing in (bearer tokens for scripts, a console
// session for people) is one Authenticator; the API asks them in order and takes the first that
// accepts.

#include <string>
#include <string_view>

#include "refgate/admin/admin_store.hpp"
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

// "Authorization: Bearer <token>", looked up by the token's SHA-256 in `store`.
class BearerAuthenticator final : public Authenticator {
  public:
    // `store` must outlive the authenticator.
    explicit BearerAuthenticator(AdminStore& store) : store_(store) {}
    Authentication authenticate(const http::Request& request) override;

  private:
    AdminStore& store_;
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

// The console's session cookie, looked up by its id's SHA-256. Unsafe methods (POST, PUT, PATCH,
// DELETE) also need the session's X-CSRF-Token, an Origin (when sent) that is the console's own,
// and no Sec-Fetch-Site: cross-site or same-site.
class SessionAuthenticator final : public Authenticator {
  public:
    // `console` must outlive the authenticator.
    SessionAuthenticator(ConsoleService& console, ConsoleWeb web)
        : console_(console), web_(std::move(web)) {}
    Authentication authenticate(const http::Request& request) override;

  private:
    ConsoleService& console_;
    ConsoleWeb web_;
};

}  // namespace refgate::admin
