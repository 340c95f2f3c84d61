#include "refgate/admin/commissions.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "refgate/admin/tokens.hpp"
#include "support/fake_clock.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace commissions_test {
namespace {

using namespace std::chrono_literals;
using refgate::admin::CommissionSource;
using refgate::admin::OutcomeKind;

// The reads the tests here do not use: empty answers.
class NoReads : public refgate::admin::CommissionStore {
  public:
    std::optional<refgate::codec::EarningsReport> earnings(
        const refgate::domain::DayRange&, refgate::codec::EarningsGroup,
        const refgate::codec::EarningsFilter&) override {
        return refgate::codec::EarningsReport{};
    }
    std::vector<refgate::codec::EpcZeroLink> epc_zero_links(
        const refgate::domain::DayRange&) override {
        return {};
    }
    refgate::admin::CommissionTotals totals() override { return {}; }
};

// Remembers what it was asked to record; knows one partner.
class FakeStore final : public NoReads {
  public:
    std::optional<refgate::codec::RecordedCommissions> record(
        const std::string& partner, const std::vector<refgate::domain::Commission>& commissions,
        CommissionSource, bool dry_run) override {
        if (partner != "impact-co") return std::nullopt;
        calls.push_back({commissions.size(), dry_run});
        refgate::codec::RecordedCommissions r;
        r.created = commissions.size();
        return r;
    }
    bool set_postback_secret(const std::string& partner, const std::string& hash) override {
        if (partner != "impact-co") return false;
        secret_hash = hash;
        return true;
    }
    std::optional<std::string> postback_secret_hash(const std::string&) override {
        return secret_hash;
    }

    std::vector<std::pair<std::size_t, bool>> calls;  // (commissions, dry run)
    std::string secret_hash;
};

const char* const kCsv =
    "order_id,subid,tracking_id,status,amount,currency,occurred_at\n"
    "ORD-1,,picks-nl,approved,12.50,EUR,2026-11-29T16:00:00Z\n"
    "ORD-2,,picks-nl,approved,12.50,EUR,2026-11-29T16:00:00Z\n";

TEST_CASE("an import with a bad row records nothing and names the row's line and field",
          "[commissions]") {
    FakeStore store;
    std::string csv =
        std::string(kCsv) + "ORD-3,,picks-nl,approved,12;50,EUR,2026-11-29T16:00:00Z\n";
    auto o = refgate::admin::import_commissions(
        store,
        {"impact-co", refgate::codec::parse_commissions_csv(csv), CommissionSource::api, false});
    CHECK(o.kind == OutcomeKind::invalid);
    REQUIRE(o.view.refused.size() == 1);
    CHECK(o.view.refused[0].line == 4);
    CHECK(o.view.refused[0].field == "amount");
    CHECK_FALSE(o.view.applied);
    // The API's 422 shows the report beside the errors.
    CHECK(refgate::codec::view_json(o.view)["refused"][0]["line"] == 4);
    // Counted in a transaction that is rolled back: nothing kept.
    REQUIRE(store.calls.size() == 1);
    CHECK(store.calls[0].second);

    auto good = refgate::admin::import_commissions(
        store,
        {"impact-co", refgate::codec::parse_commissions_csv(kCsv), CommissionSource::api, false});
    CHECK(good.kind == OutcomeKind::ok);
    CHECK(good.view.recorded.created == 2);
    CHECK(refgate::codec::view_json(good.view)["created"] == 2);
    CHECK_FALSE(store.calls.back().second);

    auto unknown = refgate::admin::import_commissions(
        store,
        {"nobody", refgate::codec::parse_commissions_csv(kCsv), CommissionSource::api, false});
    CHECK(unknown.kind == OutcomeKind::not_found);
}

TEST_CASE("CSV columns other than the seven are never read, in any order", "[commissions]") {
    auto input = refgate::codec::parse_commissions_csv(
        "\xEF\xBB\xBF"
        "email,currency,amount,status,tracking_id,subid,order_id,occurred_at,ip\n"
        "ada@example.org,EUR,1,paid,picks-nl,,ORD-9,2026-11-29T16:00:00Z,203.0.113.7\n");
    REQUIRE(input.problems.empty());
    REQUIRE(input.rows.size() == 1);
    const auto& f = input.rows[0].fields;
    CHECK(f.order_id == "ORD-9");
    CHECK(f.currency == "EUR");
    CHECK_FALSE(f.subid);
    CHECK(input.rows[0].line == 2);
    auto missing = refgate::codec::parse_commissions_csv("order_id,subid,status\nA,b,paid\n");
    REQUIRE(missing.problems.size() == 1);
    CHECK(missing.problems[0].line == 1);
}

TEST_CASE("the postback limiter lets a burst through, then the partner's rate", "[commissions]") {
    refgate::testing::FakeMonotonicClock clock;
    refgate::admin::PostbackLimiter limiter(2, 4, &clock);
    int allowed = 0;
    for (int i = 0; i < 10; ++i) allowed += limiter.allow("impact-co") ? 1 : 0;
    CHECK(allowed == 4);
    // Another partner has its own bucket.
    CHECK(limiter.allow("awin-co"));
    clock.advance(500ms);
    CHECK(limiter.allow("impact-co"));
    CHECK_FALSE(limiter.allow("impact-co"));
    clock.advance(10s);
    allowed = 0;
    for (int i = 0; i < 10; ++i) allowed += limiter.allow("impact-co") ? 1 : 0;
    CHECK(allowed == 4);
}

TEST_CASE("a new postback secret is shown once and stored as its hash", "[commissions]") {
    FakeStore store;
    auto o = refgate::admin::rotate_postback_secret(store, "impact-co");
    REQUIRE(o.kind == OutcomeKind::ok);
    std::string secret = o.view.secret;
    CHECK(refgate::codec::view_json(o.view)["secret"] == secret);
    CHECK(store.secret_hash == refgate::admin::hash_token(secret));
    CHECK(store.secret_hash.find(secret) == std::string::npos);
    CHECK(refgate::admin::rotate_postback_secret(store, "nobody").kind == OutcomeKind::not_found);
}

// Records what it is asked to in "transactions" of order_ids; the first call waits for `open`.
// A batch with the order_id "BAD" is refused (as the database refuses a row), and so is BAD alone.
class GatedStore final : public NoReads {
  public:
    std::optional<refgate::codec::RecordedCommissions> record(
        const std::string&, const std::vector<refgate::domain::Commission>& commissions,
        CommissionSource, bool) override {
        hold();
        std::vector<std::string> ids;
        for (const auto& c : commissions) ids.push_back(c.order_id);
        commit(ids);
        return refgate::codec::RecordedCommissions{};
    }
    void record_postbacks(
        const std::vector<refgate::admin::PartnerCommission>& postbacks) override {
        hold();
        std::vector<std::string> ids;
        for (const auto& p : postbacks) ids.push_back(p.commission.order_id);
        commit(ids);
    }
    bool set_postback_secret(const std::string&, const std::string&) override { return true; }
    std::optional<std::string> postback_secret_hash(const std::string&) override {
        return std::nullopt;
    }

    std::vector<std::vector<std::string>> committed() {
        std::lock_guard lock(mutex_);
        return transactions_;
    }
    std::promise<void> entered;  // the first call is in the store
    std::promise<void> open;     // lets it go on

  private:
    void hold() {
        if (!first_.exchange(false)) return;
        entered.set_value();
        gate_.wait_for(10s);
    }
    void commit(const std::vector<std::string>& ids) {
        if (std::find(ids.begin(), ids.end(), "BAD") != ids.end())
            throw refgate::admin::RejectedInput("a value out of range");
        std::lock_guard lock(mutex_);
        transactions_.push_back(ids);
    }
    std::atomic<bool> first_{true};
    std::shared_future<void> gate_ = open.get_future().share();
    std::mutex mutex_;
    std::vector<std::vector<std::string>> transactions_;
};

refgate::domain::Commission order(const std::string& id) {
    refgate::domain::Commission c;
    c.order_id = id;
    c.tracking_id = "picks-nl";
    c.currency = "EUR";
    return c;
}

// Records `ids` at once, each from a thread of its own, once the batcher holds `before` waiting.
struct Callers {
    std::vector<std::thread> threads;
    std::map<std::string, std::string> outcome;  // order_id -> "ok" or the error
    std::mutex mutex;
    std::atomic<int> returned{0};

    void start(refgate::admin::PostbackBatcher& batcher, const std::vector<std::string>& ids) {
        for (const auto& id : ids) {
            threads.emplace_back([this, &batcher, id] {
                std::string result = "ok";
                try {
                    batcher.record("impact-co", order(id));
                } catch (const std::exception& e) {
                    result = e.what();
                }
                ++returned;
                std::lock_guard lock(mutex);
                outcome[id] = result;
            });
        }
    }
    void join() {
        for (auto& t : threads) {
            if (t.joinable()) t.join();
        }
    }
    ~Callers() { join(); }
};

// Waits until `n` postbacks wait for the batch running (a generous bound: a loaded machine).
bool queued(refgate::admin::PostbackBatcher& batcher, std::size_t n) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (batcher.waiting() < n) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

TEST_CASE(
    "postbacks that arrive while one is recorded share the next transaction, each "
    "answered after its commit",
    "[commissions]") {
    auto store = std::make_shared<GatedStore>();
    refgate::admin::PostbackBatcher batcher(store, 4);
    Callers callers;
    callers.start(batcher, {"A"});
    REQUIRE(store->entered.get_future().wait_for(10s) == std::future_status::ready);
    callers.start(batcher, {"B1", "B2", "B3", "B4", "B5", "B6"});
    REQUIRE(queued(batcher, 6));
    // Nothing is answered before its transaction is committed.
    CHECK(callers.returned == 0);
    store->open.set_value();
    callers.join();
    // A alone; then the six that waited, four a transaction (the bound), in their order.
    auto t = store->committed();
    REQUIRE(t.size() == 3);
    CHECK(t[0] == std::vector<std::string>{"A"});
    CHECK(t[1].size() == 4);
    CHECK(t[2].size() == 2);
    std::set<std::string> all(t[1].begin(), t[1].end());
    all.insert(t[2].begin(), t[2].end());
    CHECK(all == std::set<std::string>{"B1", "B2", "B3", "B4", "B5", "B6"});
    for (const auto& [id, result] : callers.outcome) CHECK(result == "ok");
}

TEST_CASE("a postback the database refuses fails alone; the others of its batch are recorded",
          "[commissions]") {
    auto store = std::make_shared<GatedStore>();
    refgate::admin::PostbackBatcher batcher(store);
    Callers callers;
    callers.start(batcher, {"A"});
    REQUIRE(store->entered.get_future().wait_for(10s) == std::future_status::ready);
    callers.start(batcher, {"B", "BAD", "C"});
    REQUIRE(queued(batcher, 3));
    store->open.set_value();
    callers.join();
    // The batch of three failed as a whole; each was recorded again alone.
    auto t = store->committed();
    std::set<std::vector<std::string>> got(t.begin(), t.end());
    CHECK(got == std::set<std::vector<std::string>>{{"A"}, {"B"}, {"C"}});
    CHECK(callers.outcome["A"] == "ok");
    CHECK(callers.outcome["B"] == "ok");
    CHECK(callers.outcome["C"] == "ok");
    CHECK(callers.outcome["BAD"] == "a value out of range");
}

}  // namespace
}  // namespace commissions_test
