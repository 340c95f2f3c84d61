// ConsoleService and SessionAuthenticator over users and sessions kept in memory: expiry by a
// manual clock, the once-a-minute touch, and the CSRF rules for requests made with the cookie.

#include "refgate/admin/console_service.hpp"

#include <catch2/catch.hpp>
#include <map>

#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/authenticator.hpp"
#include "refgate/admin/console_crypto.hpp"
#include "support/fake_clock.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace console_service_test {

namespace {

using namespace refgate;
using namespace refgate::admin;
using namespace std::chrono_literals;

// An audit entry's object as the service recorded it (null: none).
nlohmann::ordered_json audited(const std::string& text) {
    return text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json::parse(text);
}

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
    std::vector<std::string> lock_enabled_admins() override {
        std::vector<std::string> names;
        for (auto& [name, row] : work_.users) {
            if (row.role == "admin" && !row.disabled) names.push_back(name);
        }
        return names;
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

struct Fixture {
    Tables tables;
    refgate::testing::FakeClock clock{
        std::chrono::sys_days{std::chrono::days{20000}}};  // 2024-10-04
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
    REQUIRE(f.console.disable_user_named("cli:test", "eddie") == DisableResult::disabled);
    CHECK_FALSE(f.console.session(in->id));
    CHECK_FALSE(f.console.sign_in("eddie", "correct horse"));
    for (const auto& entry : f.tables.audit) {
        CHECK(entry.entity == "user");
        CHECK(audited(entry.after).dump().find("argon2") == std::string::npos);
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

TEST_CASE("no API change disables or demotes the caller's own account or the last admin",
          "[admin][console]") {
    Fixture f;
    f.console.create_user_named("cli:test", "ada", Role::admin, "first words of hers");
    auto in = f.console.sign_in("ada", "first words of hers");
    REQUIRE(in);
    Actor ada{.name = "user:ada", .role = Role::admin, .session = in->session.id_hash};
    Actor token{.name = "ops", .role = Role::admin};
    Precondition any{.any = true};
    using nlohmann::ordered_json;
    auto self_disable = f.console.update_user(
        ada, "ada", any, parse_user_patch("ada", ordered_json{{"disabled", true}}));
    CHECK(self_disable.kind == OutcomeKind::conflict);
    CHECK(self_disable.detail.find("your own account") != std::string::npos);
    CHECK(
        f.console
            .update_user(ada, "ada", any, parse_user_patch("ada", ordered_json{{"role", "editor"}}))
            .kind == OutcomeKind::conflict);
    auto last = f.console.update_user(token, "ada", any,
                                      parse_user_patch("ada", ordered_json{{"disabled", true}}));
    CHECK(last.kind == OutcomeKind::conflict);
    CHECK(last.detail.find("last enabled admin") != std::string::npos);
    CHECK(last.detail.find("refgate user disable ada") != std::string::npos);
    CHECK(f.console
              .update_user(token, "ada", any,
                           parse_user_patch("ada", ordered_json{{"role", "viewer"}}))
              .kind == OutcomeKind::conflict);
    CHECK(f.tables.users["ada"].role == "admin");
    CHECK_FALSE(f.tables.users["ada"].disabled);
    REQUIRE(f.console.session(in->id));

    // With a second admin, another admin (or a token) may demote or disable either.
    f.console.create_user_named("cli:test", "bea", Role::admin, "words of the second");
    CHECK(
        f.console
            .update_user(ada, "ada", any, parse_user_patch("ada", ordered_json{{"disabled", true}}))
            .kind == OutcomeKind::conflict);
    CHECK(
        f.console
            .update_user(ada, "bea", any, parse_user_patch("bea", ordered_json{{"role", "editor"}}))
            .kind == OutcomeKind::ok);
    CHECK(f.console
              .update_user(token, "bea", any,
                           parse_user_patch("bea", ordered_json{{"role", "admin"}}))
              .kind == OutcomeKind::ok);
    CHECK(f.console
              .update_user(token, "ada", any,
                           parse_user_patch("ada", ordered_json{{"disabled", true}}))
              .kind == OutcomeKind::ok);
    CHECK_FALSE(f.console.session(in->id));

    // The CLI disables the last enabled admin too, and says it was the last.
    CHECK(f.console.disable_user_named("cli:test", "bea") == DisableResult::disabled_last_admin);
    CHECK(f.console.disable_user_named("cli:test", "eddie") == DisableResult::disabled);
    CHECK(f.console.disable_user_named("cli:test", "nobody") == DisableResult::no_such_user);
}

TEST_CASE("a user changes their own password with the current one; other sessions end",
          "[admin][console]") {
    Fixture f;
    auto laptop = f.console.sign_in("eddie", "correct horse");
    auto phone = f.console.sign_in("eddie", "correct horse");
    REQUIRE(laptop);
    REQUIRE(phone);
    using nlohmann::ordered_json;
    using R = OwnPasswordChange::Result;
    auto change = [&](const char* current, const char* next) {
        return f.console.change_own_password(
            laptop->session,
            parse_password_change(ordered_json{{"current", current}, {"new", next}}));
    };
    CHECK(change("wrong horse!", "a brand new phrase").result == R::wrong_current);
    auto weak = change("correct horse", "€€€€");
    CHECK(weak.result == R::invalid);
    REQUIRE(weak.errors.size() == 1);
    CHECK(weak.errors[0].field == "new");
    CHECK(change("correct horse", "hi eddie, it's me").result == R::invalid);
    auto missing = f.console.change_own_password(laptop->session,
                                                 parse_password_change(ordered_json{{"new", "x"}}));
    CHECK(missing.result == R::invalid);
    REQUIRE(f.console.session(phone->id));

    CHECK(change("correct horse", "a brand new phrase").result == R::changed);
    CHECK(f.console.session(laptop->id));
    CHECK_FALSE(f.console.session(phone->id));
    CHECK_FALSE(f.console.sign_in("eddie", "correct horse"));
    CHECK(f.console.sign_in("eddie", "a brand new phrase"));
    CHECK(f.tables.audit.back().actor == "user:eddie");
    CHECK(audited(f.tables.audit.back().after)["password_changed"] == true);
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
