#pragma once

// Who is calling the admin API. Each way of signing in (bearer tokens for scripts; a console
// session later) is one Authenticator; the API asks them in order and takes the first that
// accepts.

#include "refgate/admin/admin_store.hpp"
#include "refgate/http/request.hpp"

namespace refgate::admin {

struct Authentication {
    // absent: the request carries none of this authenticator's credentials; refused: it carries
    // some, and they are wrong, unknown or revoked.
    enum class Kind { absent, accepted, refused };
    Kind kind = Kind::absent;
    Actor actor;  // when accepted
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

}  // namespace refgate::admin
