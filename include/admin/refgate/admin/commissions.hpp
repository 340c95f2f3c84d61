#pragma once

// Commissions in (issue 43): the store that records them with their history, the import that
// the CLI (`refgate commissions import`) and the API (`POST /api/v1/partners/{slug}/commissions`)
// share, and the public listener's postback (`/postback/{partner}`). Every way in reads only the
// fields of kCommissionFields and runs check_commission().

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "refgate/admin/admin_store.hpp"
#include "refgate/codec/commissions_input.hpp"
#include "refgate/codec/earnings.hpp"
#include "refgate/domain/clock.hpp"
#include "refgate/domain/commission.hpp"
#include "refgate/http/server.hpp"

namespace refgate::admin {

enum class CommissionSource { import, api, postback };
std::string_view to_string(CommissionSource source) noexcept;

// The stored commissions in total, for /metrics: per partner, how many have had each status
// (from their history, so the figure only grows), and per partner and currency the sum of the
// amounts of those that have each status now (exact decimal text). Every partner has a count
// for each status; every (partner, currency) with commissions has an amount for each status.
struct CommissionTotals {
    struct Count {
        std::string partner;
        std::string status;
        std::uint64_t commissions = 0;
    };
    struct Amount {
        std::string partner;
        std::string currency;
        std::string status;
        std::string amount;
    };
    std::vector<Count> counts;
    std::vector<Amount> amounts;
};

// A postback's commission with its partner (CommissionStore::record_postbacks).
struct PartnerCommission {
    std::string partner;
    domain::Commission commission;
};

// Implementations are thread-safe; methods throw StoreError when the database fails.
class CommissionStore {
  public:
    virtual ~CommissionStore() = default;
    // Records `commissions` of `partner` in one transaction, in order (a repeat of an order_id
    // later in the list updates the earlier one): each one's link and channel resolved, a new one
    // or a change adding a history row; committed only without `dry_run`. nullopt: no partner.
    virtual std::optional<codec::RecordedCommissions> record(
        const std::string& partner, const std::vector<domain::Commission>& commissions,
        CommissionSource source, bool dry_run) = 0;
    // Postbacks of any partners, each recorded as record() records one (source postback; one of
    // a partner that no longer exists is left out), in order. The PostgreSQL store records
    // them in one transaction, so that a throw records none; this default, one by one.
    virtual void record_postbacks(const std::vector<PartnerCommission>& postbacks) {
        for (const auto& p : postbacks)
            record(p.partner, {p.commission}, CommissionSource::postback, false);
    }
    // Stores the hash of a new postback secret for the partner, replacing any other; false: no
    // such partner.
    virtual bool set_postback_secret(const std::string& partner, const std::string& hash_hex) = 0;
    // The hash of the partner's postback secret (lower-case hex); nullopt: no partner or none.
    virtual std::optional<std::string> postback_secret_hash(const std::string& partner) = 0;
    // GET /api/v1/stats/earnings: the commissions of the range's UTC days (by occurred_at) per
    // group, beside the human clicks of the same days, narrowed by the filter
    // (codec/earnings.hpp). nullopt: the filter names a link or partner that does not exist.
    virtual std::optional<codec::EarningsReport> earnings(const domain::DayRange& range,
                                                          codec::EarningsGroup group,
                                                          const codec::EarningsFilter& filter) = 0;
    // GET /api/v1/stats/earnings/attention: the links whose EPC fell to zero while their clicks
    // went on over the window (codec/earnings.hpp, EpcZeroReport), by slug.
    virtual std::vector<codec::EpcZeroLink> epc_zero_links(const domain::DayRange& window) = 0;
    // CommissionTotals above: two grouped reads of the whole tables, for a background worker.
    virtual CommissionTotals totals() = 0;
};

struct PgCommissionStoreOptions {
    std::string database_url;
    std::size_t max_idle_connections = 2;
    std::size_t max_open_connections = 2;
    std::chrono::milliseconds connection_wait{2'000};
    // How long a partner's postback secret (its hash) read from the database is kept in memory
    // (REFGATE_AUTH_CACHE_SECONDS, as the admin API's credentials): a network's stream of
    // postbacks then reads it once per lifetime, not once per postback. A secret set through
    // this store replaces the kept one at once; one set elsewhere (another instance) applies
    // when it expires. An unknown partner or a missing secret is never kept. 0: never kept.
    std::chrono::seconds secret_lifetime{0};
};
std::unique_ptr<CommissionStore> make_pg_commission_store(PgCommissionStoreOptions options);

// An import of a partner's commissions: the rows as read (CSV, JSON or a network's export),
// where they came from, and whether to apply them.
struct CommissionImport {
    std::string partner;
    codec::CommissionsInput input;
    CommissionSource source = CommissionSource::import;
    bool dry_run = false;
};

// The import: every row checked (each problem with its line and field), then all of them
// recorded in one transaction, or none when any is refused. ok with the report; invalid (422)
// with the report beside the errors when refused and not a dry run; not_found for an unknown
// partner.
Result<codec::CommissionsReport> import_commissions(CommissionStore& store,
                                                    const CommissionImport& command);

// "POST /api/v1/partners/{slug}/postback-secret": a new secret, shown once.
Result<codec::PostbackSecretView> rotate_postback_secret(CommissionStore& store,
                                                         const std::string& partner);

// A token bucket per partner: `rate` postbacks a second, bursts of `burst`. Thread-safe.
class PostbackLimiter {
  public:
    PostbackLimiter(double rate, double burst, const domain::MonotonicClock* clock = nullptr);
    // Takes a token of the partner's bucket; false when it is empty.
    bool allow(const std::string& partner);

  private:
    struct Bucket {
        double tokens = 0;
        std::chrono::steady_clock::time_point at;
    };
    double rate_;
    double burst_;
    const domain::MonotonicClock* clock_;
    domain::SteadyClock steady_;
    std::mutex mutex_;
    std::map<std::string, Bucket, std::less<>> buckets_;
};
constexpr std::size_t kMaxPostbackBuckets = 4096;

// Postbacks that arrive together are recorded in one transaction (one commit, the partner read
// once): the caller that finds no batch running leads; it records the postbacks waiting at the
// time, its own among them, up to max_batch a transaction (batch after batch, oldest first, until
// its own is committed), then leaves the lead to a caller still waiting. Each caller returns
// once its own postback is committed. When a batch fails, each of its postbacks is recorded again
// alone (a repeat changes nothing), so a row the database refuses fails only its own postback; a
// repeated order_id within one batch is recorded once, as by record(). Thread-safe.
//
// A test seam, only in builds configured with -DREFGATE_FAULT_POINTS=ON (the test suite's):
// with REFGATE_TEST_POSTBACK_GATHER=N in the environment a leader waits (at most 10 s) until N
// postbacks are queued, its own among them, before it takes a batch, and every postback logs
// `postback_queued` with the number queued; a test then puts the postbacks of its choice, in
// its order, into one transaction. Elsewhere the variable is not read.
constexpr std::size_t kMaxPostbackBatch = 32;
class PostbackBatcher {
  public:
    explicit PostbackBatcher(std::shared_ptr<CommissionStore> store,
                             std::size_t max_batch = kMaxPostbackBatch);
    // Returns once recorded; throws what recording it alone threw (StoreError: not recorded).
    void record(const std::string& partner, const domain::Commission& commission);
    // How many wait for a transaction now (those of the transaction running excluded).
    std::size_t waiting();

  private:
    struct Waiting {
        PartnerCommission postback;
        bool done = false;
        std::exception_ptr error;
    };
    // Sets each one's error; throws nothing.
    void run(const std::vector<Waiting*>& batch);

    std::shared_ptr<CommissionStore> store_;
    std::size_t max_batch_;
    std::size_t gather_;  // the test seam above; 1 otherwise
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Waiting*> queue_;
    bool leading_ = false;
};

// GET or POST /postback/{partner} on the public listener, with the parameters of
// kCommissionFields in the query string and the secret as `secret` or X-Refgate-Secret:
// 204 once recorded, 401 (no detail) for a wrong secret or partner, 400 naming the parameter,
// 429 past the partner's rate. Blocking (the database): the server runs it on its pool, never
// on an I/O thread, so redirects never wait for it. Recorded through the batcher, shared by the
// handlers of every I/O thread.
class PostbackHandler final : public http::Handler {
  public:
    static constexpr std::string_view kPrefix = "/postback/";
    PostbackHandler(std::shared_ptr<CommissionStore> store,
                    std::shared_ptr<PostbackLimiter> limiter,
                    std::shared_ptr<PostbackBatcher> batcher);
    void handle(const http::Request& request, http::Response& response) override;
    bool may_block() const override { return true; }

  private:
    std::shared_ptr<CommissionStore> store_;
    std::shared_ptr<PostbackLimiter> limiter_;
    std::shared_ptr<PostbackBatcher> batcher_;
};

}  // namespace refgate::admin
