// ConsoleService and SessionAuthenticator over users and sessions kept in memory: expiry by a
// manual clock, the once-a-minute touch, and the CSRF rules for requests made with the cookie.

#include "refgate/admin/console_service.hpp"

#include <catch2/catch.hpp>
#include <map>

#include "refgate/admin/authenticator.hpp"
#include "refgate/admin/console_crypto.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace console_service_test {

namespace {

using namespace refgate;
using namespace refgate::admin;
using namespace std::chrono_literals;

struct Tables {
    std::map<std::string, UserRow> users;
    std::map<std::string, SessionRow> sessions;  // by id hash
    std::vector<AuditRecord> audit;
    int touches = 0;
};

// One "transaction": works on a copy, kept at commit.
class FakeRows final : public ConsoleRows {
  public:
    explicit FakeRows(Tables& t) : tables_(t), work_(t) {}
    std::optional<UserRow> user(const std::string& name, RowLock) override {
        auto it = work_.users.find(name);
        if (it == work_.users.end()) return std::nullopt;
        return it->second;
    }
    std::vector<UserRow> users() override {
        std::vector<UserRow> list;
        for (auto& [name, row] : work_.users) list.push_back(row);
        return list;
    }
    bool insert_user(const std::string& name, const std::string& role,
                     const std::string& hash) override {
        if (work_.users.count(name)) return false;
        work_.users[name] = UserRow{name, role, hash, false, {1, 1, 1}, std::nullopt};
        return true;
    }
    void update_user(const UserRow& row) override {
        UserRow next = row;
        next.stamps.version = work_.users[row.name].stamps.version + 1;
        work_.users[row.name] = next;
    }
    void rehash_user(const std::string& name, const std::string& hash) override {
        work_.users[name].password_hash = hash;
    }
    void record_sign_in(const std::string& name, std::int64_t at) override {
        work_.users[name].last_sign_in_us = at;
    }
    void insert_session(const SessionRow& s) override { work_.sessions[s.id_hash] = s; }
    std::optional<SessionRow> session(const std::string& hash) override {
        auto it = work_.sessions.find(hash);
        if (it == work_.sessions.end()) return std::nullopt;
        SessionRow s = it->second;
        s.role = work_.users[s.user].role;
        s.user_disabled = work_.users[s.user].disabled;
        return s;
    }
    void touch_session(const std::string& hash, std::int64_t at) override {
        work_.sessions[hash].last_seen_us = at;
        ++work_.touches;
    }
    bool end_session(const std::string& hash, std::int64_t) override {
        auto it = work_.sessions.find(hash);
        if (it == work_.sessions.end() || it->second.ended) return false;
        it->second.ended = true;
        return true;
    }
    void end_sessions(const std::string& user, const std::string& keep, std::int64_t) override {
        for (auto& [hash, s] : work_.sessions) {
            if (s.user == user && hash != keep) s.ended = true;
        }
    }
    void insert_audit(const AuditRecord& r) override { work_.audit.push_back(r); }
    void commit() override { tables_ = work_; }

  private:
    Tables& tables_;
    Tables work_;
};

class FakeRepository final : public ConsoleRepository {
  public:
    explicit FakeRepository(Tables& t) : tables_(t) {}
    void run(Access, const std::function<void(ConsoleRows&)>& work) override {
        FakeRows rows(tables_);
        work(rows);
    }

  private:
    Tables& tables_;
};

class ManualClock final : public Clock {
  public:
    std::chrono::system_clock::time_point now() const override { return now_; }
    void advance(std::chrono::system_clock::duration d) { now_ += d; }

  private:
    std::chrono::system_clock::time_point now_{std::chrono::hours{24 * 20000}};
};

struct Fixture {
    Tables tables;
    ManualClock clock;
    ConsoleService console{std::make_unique<FakeRepository>(tables),
                           ConsoleOptions{.idle = 10min, .max = 1h, .clock = &clock}};
    Fixture() { console.create_user_named("cli:test", "eddie", Role::editor, "correct horse"); }
};

http::Request request(http::Method method, const std::vector<http::HeaderField>& fields) {
    http::Request r;
    r.method = method;
    r.fields = &fields;
    return r;
}

}  // namespace

TEST_CASE("a session ends when idle too long or past its absolute end", "[admin][console]") {
    Fixture f;
    auto in = f.console.sign_in("eddie", "correct horse");
    REQUIRE(in);
    CHECK(in->session.expires_us - in->session.idle_expires_us == 50LL * 60 * 1'000'000);
    f.clock.advance(30s);
    REQUIRE(f.console.session(in->id));
    CHECK(f.tables.touches == 0);  // last use is written at most once a minute
    f.clock.advance(9min);
    REQUIRE(f.console.session(in->id));
    CHECK(f.tables.touches == 1);
    for (int i = 0; i < 5; ++i) {
        f.clock.advance(9min);
        REQUIRE(f.console.session(in->id));
    }
    f.clock.advance(9min);  // 63 minutes after sign-in
    CHECK_FALSE(f.console.session(in->id));

    auto idle = f.console.sign_in("eddie", "correct horse");
    REQUIRE(idle);
    f.clock.advance(10min);
    CHECK_FALSE(f.console.session(idle->id));
}

TEST_CASE("sign-in refuses wrong passwords, unknown names and disabled users alike",
          "[admin][console]") {
    Fixture f;
    CHECK_FALSE(f.console.sign_in("eddie", "wrong horse"));
    CHECK_FALSE(f.console.sign_in("nobody", "correct horse"));
    CHECK_FALSE(f.console.sign_in("Not A Name", "correct horse"));
    auto in = f.console.sign_in("eddie", "correct horse");
    REQUIRE(in);
    CHECK(f.tables.sessions.count(secret_hash_hex(in->id)) == 1);
    CHECK(f.tables.sessions.begin()->second.csrf_token != in->id);
    REQUIRE(f.console.disable_user_named("cli:test", "eddie"));
    CHECK_FALSE(f.console.session(in->id));
    CHECK_FALSE(f.console.sign_in("eddie", "correct horse"));
    for (const auto& entry : f.tables.audit) {
        CHECK(entry.entity == "user");
        CHECK(entry.after.dump().find("argon2") == std::string::npos);
    }
}

TEST_CASE("a session cookie's unsafe request needs the CSRF token and the console's origin",
          "[admin][console]") {
    Fixture f;
    auto in = f.console.sign_in("eddie", "correct horse");
    REQUIRE(in);
    SessionAuthenticator auth(f.console, ConsoleWeb{.admin_origin = "https://admin.example.com"});
    std::string cookie = "theme=dark; __Host-refgate_session=" + in->id;
    std::string csrf = in->session.csrf_token;
    using Kind = Authentication::Kind;
    auto ask = [&](http::Method m, std::vector<http::HeaderField> fields) {
        fields.push_back({"Cookie", cookie});
        return auth.authenticate(request(m, fields)).kind;
    };
    CHECK(auth.authenticate(request(http::Method::get, {})).kind == Kind::absent);
    CHECK(ask(http::Method::get, {}) == Kind::accepted);
    CHECK(ask(http::Method::post, {}) == Kind::forged);
    CHECK(ask(http::Method::post, {{"X-CSRF-Token", csrf}}) == Kind::accepted);
    CHECK(ask(http::Method::del,
              {{"X-CSRF-Token", csrf}, {"Origin", "https://admin.example.com"}}) == Kind::accepted);
    CHECK(ask(http::Method::patch, {{"X-CSRF-Token", csrf}, {"Origin", "https://evil.example"}}) ==
          Kind::forged);
    CHECK(ask(http::Method::put, {{"X-CSRF-Token", csrf}, {"Sec-Fetch-Site", "same-site"}}) ==
          Kind::forged);
    CHECK(ask(http::Method::post, {{"X-CSRF-Token", in->id}}) == Kind::forged);
    auto accepted = auth.authenticate(request(http::Method::get, {{"Cookie", cookie}}));
    CHECK(accepted.actor.name == "user:eddie");
    CHECK(accepted.actor.role == Role::editor);
    // The plain cookie name is not this console's when it is served over https.
    std::string plain_cookie = "refgate_session=" + in->id;
    std::vector<http::HeaderField> plain{{"Cookie", plain_cookie}};
    CHECK(auth.authenticate(request(http::Method::get, plain)).kind == Kind::absent);
    f.console.sign_out(in->session.id_hash);
    CHECK(ask(http::Method::get, {}) == Kind::refused);
}

TEST_CASE("passwords are hashed with Argon2id at t=2, m=64 MiB, p=1", "[admin][console]") {
    std::string hash = hash_password("correct horse");
    CHECK(hash.starts_with("$argon2id$v=19$m=65536,t=2,p=1$"));
    CHECK(verify_password(hash, "correct horse"));
    CHECK_FALSE(verify_password(hash, "correct horsE"));
    CHECK_FALSE(password_needs_rehash(hash));
    CHECK(plausible_secret(random_secret()));
    CHECK(random_secret() != random_secret());
}

}  // namespace console_service_test
