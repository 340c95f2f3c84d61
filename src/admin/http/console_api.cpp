// The console's routes: signing in and out (/api/v1/session) and the users an admin manages
// (/api/v1/users).

#include <array>
#include <thread>

#include "api.hpp"
#include "console_http.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/sign_in_throttle.hpp"

namespace refgate::admin {
namespace {

using http::Method;
using Json = nlohmann::ordered_json;

enum SignInResult { kSignInOk = 0, kSignInRefused = 1, kSignInLimited = 2 };

constexpr std::array kUserRoutes{
    Route{Method::get, "GET", "/api/v1/users", Role::admin, Operation::list_users},
    Route{Method::post, "POST", "/api/v1/users", Role::admin, Operation::create_user},
    Route{Method::get, "GET", "/api/v1/users/{name}", Role::admin, Operation::get_user},
    Route{Method::patch, "PATCH", "/api/v1/users/{name}", Role::admin, Operation::update_user},
};

class Users final : public Resource {
  public:
    explicit Users(ConsoleService& console) : console_(console) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        switch (r.route->operation) {
            case Operation::list_users:
                return answer.outcome(console_.list_users());
            case Operation::create_user: {
                auto o = console_.create_user(r.actor, parse_new_user(r.body));
                // User names are [a-z0-9._-]: no percent-encoding needed.
                std::string location;
                if (o.kind == OutcomeKind::created) location = "/api/v1/users/" + o.view.user.name;
                return answer.outcome(o, location);
            }
            case Operation::get_user:
                return answer.outcome(console_.get_user(r.name));
            default:
                return answer.outcome(console_.update_user(r.actor, r.name, r.if_match,
                                                           parse_user_patch(r.name, r.body)));
        }
    }

  private:
    ConsoleService& console_;
};

// The role needs no check here: signing in needs no credentials, and the others act on the
// caller's own session and user only.
constexpr std::array kSessionRoutes{
    Route{Method::post, "POST", "/api/v1/session", Role::viewer, Operation::sign_in},
    Route{Method::get, "GET", "/api/v1/session", Role::viewer, Operation::read_session},
    Route{Method::del, "DELETE", "/api/v1/session", Role::viewer, Operation::sign_out},
    Route{Method::put, "PUT", "/api/v1/session/password", Role::viewer, Operation::change_password},
};

class Session final : public Resource {
  public:
    Session(ConsoleService& console, const AdminOptions& options)
        : console_(console),
          web_(options.console_web),
          public_base_url_(options.public_base_url),
          sign_ins_(options.sign_ins),
          throttle_(SignInLimits{}, options.clock) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        if (r.route->operation == Operation::sign_in) return sign_in(r, answer);
        auto session = console_.session(session_cookie(r.http, web_));
        if (!session) return answer.problem(401, "unauthorized", "no live session; sign in again");
        if (r.route->operation == Operation::read_session) return answer.json(200, body(*session));
        if (std::string why = csrf_failure(r.http, web_, *session); !why.empty())
            return answer.titled_problem(403, "csrf", "CSRF check failed", why);
        if (r.route->operation == Operation::change_password)
            return change_password(r, *session, answer);
        console_.sign_out(session->id_hash);
        answer.response().set_status(204);
        answer.response().add_header("Cache-Control", "no-store");
        answer.response().add_header("Set-Cookie", cleared_cookie_header(web_));
    }

  private:
    void sign_in(const ApiRequest& r, Answer& answer) {
        if (std::string why = cross_site(r.http, web_, false); !why.empty())
            return answer.titled_problem(403, "csrf", "CSRF check failed", why);
        std::vector<codec::FieldError> errors;
        for (const char* field : {"name", "password"}) {
            if (!r.body.contains(field) || !r.body[field].is_string())
                errors.push_back({field, "is required (a string)"});
        }
        if (!errors.empty())
            return answer.problem(422, "validation",
                                  "the request body breaks the rules in 'errors'", errors);
        std::string name = r.body["name"].get<std::string>();
        const std::string& password = r.body["password"].get_ref<const std::string&>();
        if (!pass_throttle(name, r.client, answer)) return;
        auto in = console_.sign_in(name, password);
        if (!in) {
            throttle_.failed(name, r.client);
            count(kSignInRefused);
            return answer.problem(401, "unauthorized", "name or password is wrong");
        }
        count(kSignInOk);
        answer.json(200, body(in->session));
        answer.response().add_header("Set-Cookie", session_cookie_header(web_, in->id));
    }

    // A wrong current password is a failed sign-in: counted and limited as one.
    void change_password(const ApiRequest& r, const ConsoleSession& session, Answer& answer) {
        if (!pass_throttle(session.user, r.client, answer)) return;
        auto change = console_.change_own_password(session, parse_password_change(r.body));
        switch (change.result) {
            case OwnPasswordChange::Result::changed:
                answer.response().set_status(204);
                answer.response().add_header("Cache-Control", "no-store");
                return;
            case OwnPasswordChange::Result::invalid:
                return answer.problem(422, "validation",
                                      "the request body breaks the rules in 'errors'",
                                      change.errors);
            case OwnPasswordChange::Result::wrong_current:
                throttle_.failed(session.user, r.client);
                count(kSignInRefused);
                return answer.problem(422, "validation", "the current password is wrong",
                                      {{"current", "is not your current password"}});
            case OwnPasswordChange::Result::ended:
                return answer.problem(401, "unauthorized", "no live session; sign in again");
        }
    }

    // False (answered 429) when this client failed too often for this name. Others' failures
    // on the name, or this client's on many, slow it down: a guess takes longer, and the right
    // password still passes.
    bool pass_throttle(const std::string& name, const domain::IpBytes& client, Answer& answer) {
        auto verdict = throttle_.before(name, client);
        if (verdict.retry_after > 0) {
            count(kSignInLimited);
            answer.problem(429, "too-many-failures",
                           "too many failed sign-ins for this name from this address; try "
                           "again later");
            answer.response().add_header("Retry-After", std::to_string(verdict.retry_after));
            return false;
        }
        if (verdict.delay.count() > 0) std::this_thread::sleep_for(verdict.delay);
        return true;
    }

    Json body(const ConsoleSession& s) const {
        return Json{
            {"user", {{"name", s.user}, {"role", std::string(to_string(s.role))}}},
            {"csrf_token", s.csrf_token},
            {"expires_at", codec::format_micros(s.expires_us)},
            {"idle_expires_at", codec::format_micros(s.idle_expires_us)},
            {"public_base_url", public_base_url_.empty() ? Json() : Json(public_base_url_)}};
    }

    void count(SignInResult result) {
        if (sign_ins_ != nullptr) (*sign_ins_)[result].fetch_add(1, std::memory_order_relaxed);
    }

    ConsoleService& console_;
    ConsoleWeb web_;
    std::string public_base_url_;
    std::array<std::atomic<std::uint64_t>, 3>* sign_ins_;
    SignInThrottle throttle_;
};

}  // namespace

std::span<const Route> user_routes() { return kUserRoutes; }
std::span<const Route> session_routes() { return kSessionRoutes; }

std::unique_ptr<Resource> users_resource(ConsoleService& console) {
    return std::make_unique<Users>(console);
}

std::unique_ptr<Resource> session_resource(ConsoleService& console, const AdminOptions& options) {
    return std::make_unique<Session>(console, options);
}

}  // namespace refgate::admin
