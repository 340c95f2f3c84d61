// The commission store in PostgreSQL (sql/017_commissions.sql): a commission per (partner,
// order_id), its history, and the partners' postback secrets. StoredAttribution is the domain's
// (commission.hpp); this file only reads what it needs and writes the rows.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>

#include "pg_earnings.hpp"
#include "pg_transaction.hpp"
#include "refgate/admin/commissions.hpp"
#include "refgate/admin/kept_entries.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/pg/stored_rows.hpp"

namespace refgate::admin {
namespace {

struct CommissionTx {
    explicit CommissionTx(pqxx::dbtransaction& t) : tx(t) {}
    pqxx::dbtransaction& tx;
};

struct StoredAttribution {
    std::int64_t link_id = 0;  // 0: none
    std::string channel;       // empty: none
};

// The channels a token of the link may name: "direct", "other", the partner's named channels
// and every channel the link has click counts for.
std::vector<std::string> commission_candidate_channels(pqxx::dbtransaction& tx,
                                                       const domain::Partner& partner,
                                                       std::int64_t link_id) {
    std::vector<std::string> channels{std::string(domain::kDirectChannel),
                                      std::string(domain::kOtherChannel)};
    for (const auto& code : partner.channel_codes) {
        if (!code.channel.ends_with('*')) channels.push_back(code.channel);
    }
    for (const auto& row : tx.exec_params(
             "SELECT DISTINCT channel FROM refgate_click_counts WHERE link_id = $1", link_id))
        channels.push_back(row["channel"].as<std::string>());
    return channels;
}

class Attributor {
  public:
    Attributor(pqxx::dbtransaction& tx, const domain::Partner& partner)
        : tx_(tx), partner_(partner) {}

    StoredAttribution of(const domain::Commission& c) {
        StoredAttribution a;
        if (!c.tracking_id.empty()) {
            a.channel = domain::tracking_id_channel(partner_, c.tracking_id).value_or("");
            return a;
        }
        std::string slug;
        if (partner_.subid_style == domain::SubidStyle::readable) {
            const auto& links = partner_links();
            std::vector<std::string> slugs;
            for (const auto& l : links) slugs.push_back(l.slug);
            auto found = domain::readable_token_link(partner_, c.subid, slugs);
            if (!found) return a;
            a.link_id = links[*found].id;
            slug = links[*found].slug;
        } else {
            auto id = domain::opaque_token_link(c.subid);
            if (!id) return a;
            auto links = pg::read_links(tx_, "WHERE l.id = $1", *id);
            if (links.empty()) return a;
            a.link_id = *id;
            slug = links.front().link.slug;
        }
        auto channels = commission_candidate_channels(tx_, partner_, a.link_id);
        a.channel =
            domain::token_channel(partner_, a.link_id, slug, c.subid, channels).value_or("");
        return a;
    }

  private:
    const std::vector<domain::Link>& partner_links() {
        if (!links_read_) {
            links_read_ = true;
            for (auto& stored : pg::read_links(tx_,
                                               "WHERE p.slug = $1 OR jsonb_path_exists(l.rules, "
                                               "'$[*] ? (@.partner == $p || @.split[*].partner == "
                                               "$p)', jsonb_build_object('p', $1::text)) "
                                               "ORDER BY l.slug",
                                               partner_.slug))
                links_.push_back(std::move(stored.link));
        }
        return links_;
    }

    pqxx::dbtransaction& tx_;
    const domain::Partner& partner_;
    // Read once, when a readable token first needs them. A flag beside the vector rather than an
    // optional vector: g++ 12 at -O3 (the Release build) took the optional's vector for
    // uninitialised (-Werror=maybe-uninitialized).
    std::vector<domain::Link> links_;
    bool links_read_ = false;
};

void add_commission_history(pqxx::dbtransaction& tx, std::int64_t id, CommissionSource source) {
    tx.exec_params(
        "INSERT INTO refgate_commission_history (commission_id, status, amount, currency, "
        "occurred_at, source) SELECT id, status, amount, currency, occurred_at, $2 "
        "FROM refgate_commissions WHERE id = $1",
        id, std::string(to_string(source)));
}

// Records `c` of `partner` in `tx` as CommissionStore::record() describes, counted in `r`.
void record_commission(pqxx::dbtransaction& tx, const domain::Partner& partner,
                       Attributor& attributor, const domain::Commission& c, CommissionSource source,
                       codec::RecordedCommissions& r) {
    StoredAttribution a = attributor.of(c);
    if (a.link_id == 0 && a.channel.empty()) ++r.unattributed;
    std::string amount = to_string(c.amount);
    std::string at = domain::format_rfc3339(c.occurred_at);
    std::string status(to_string(c.status));
    auto inserted = tx.exec_params(
        "INSERT INTO refgate_commissions (partner_id, order_id, subid, tracking_id, "
        "link_id, channel, status, amount, currency, occurred_at) VALUES ($1, $2, "
        "NULLIF($3, ''), NULLIF($4, ''), NULLIF($5::bigint, 0), NULLIF($6, ''), $7, "
        "$8::numeric, $9, $10::timestamptz) ON CONFLICT (partner_id, order_id) DO "
        "NOTHING RETURNING id",
        partner.id, c.order_id, c.subid, c.tracking_id, a.link_id, a.channel, status, amount,
        c.currency, at);
    if (!inserted.empty()) {
        add_commission_history(tx, inserted[0]["id"].as<std::int64_t>(), source);
        ++r.created;
        return;
    }
    // Only what the network reports decides whether anything is new.
    auto updated = tx.exec_params(
        "UPDATE refgate_commissions SET subid = NULLIF($3, ''), tracking_id = "
        "NULLIF($4, ''), link_id = NULLIF($5::bigint, 0), channel = NULLIF($6, ''), "
        "status = $7, amount = $8::numeric, currency = $9, occurred_at = "
        "$10::timestamptz, updated_at = now() WHERE partner_id = $1 AND order_id = $2 "
        "AND (subid, tracking_id, status, amount, currency, occurred_at) IS DISTINCT "
        "FROM (NULLIF($3, ''), NULLIF($4, ''), $7, $8::numeric, $9, $10::timestamptz) "
        "RETURNING id",
        partner.id, c.order_id, c.subid, c.tracking_id, a.link_id, a.channel, status, amount,
        c.currency, at);
    if (updated.empty()) {
        ++r.unchanged;
        return;
    }
    add_commission_history(tx, updated[0]["id"].as<std::int64_t>(), source);
    ++r.updated;
}

// A partner of a batch of postbacks, read once, with the attribution of its commissions.
struct BatchPartner {
    BatchPartner(pqxx::dbtransaction& tx, domain::Partner p)
        : partner(std::move(p)), attributor(tx, partner) {}
    domain::Partner partner;
    Attributor attributor;
};

// Partners' postback secret hashes read a moment ago (PgCommissionStoreOptions::secret_lifetime),
// by partner; a few per partner that sends postbacks, the bound only against a stream of slugs.
constexpr std::size_t kMaxKeptSecrets = 10'000;

class PgCommissionStore final : public CommissionStore {
  public:
    explicit PgCommissionStore(PgCommissionStoreOptions options)
        : pool_(options.database_url, pg::PoolOptions{.max_idle = options.max_idle_connections,
                                                      .max_open = options.max_open_connections,
                                                      .wait = options.connection_wait}),
          secrets_(options.secret_lifetime, kMaxKeptSecrets) {}

    std::optional<codec::RecordedCommissions> record(
        const std::string& partner_slug, const std::vector<domain::Commission>& commissions,
        CommissionSource source, bool dry_run) override {
        std::optional<codec::RecordedCommissions> result;
        run_transaction<CommissionTx>(pool_, false, [&](CommissionTx& t) {
            auto& tx = t.tx;
            auto partners = pg::read_partners(tx, "WHERE p.slug = $1", partner_slug);
            if (partners.empty()) return;
            const domain::Partner& partner = partners.front().partner;
            Attributor attributor(tx, partner);
            codec::RecordedCommissions r;
            for (const auto& c : commissions)
                record_commission(tx, partner, attributor, c, source, r);
            if (!dry_run) tx.commit();
            result = r;
        });
        return result;
    }

    void record_postbacks(const std::vector<PartnerCommission>& postbacks) override {
        run_transaction<CommissionTx>(pool_, false, [&](CommissionTx& t) {
            auto& tx = t.tx;
            // nullptr: no such partner.
            std::map<std::string, std::unique_ptr<BatchPartner>, std::less<>> partners;
            codec::RecordedCommissions r;
            for (const auto& p : postbacks) {
                auto it = partners.find(p.partner);
                if (it == partners.end()) {
                    auto rows = pg::read_partners(tx, "WHERE p.slug = $1", p.partner);
                    std::unique_ptr<BatchPartner> read;
                    if (!rows.empty())
                        read = std::make_unique<BatchPartner>(tx, std::move(rows.front().partner));
                    it = partners.emplace(p.partner, std::move(read)).first;
                }
                if (!it->second) continue;
                record_commission(tx, it->second->partner, it->second->attributor, p.commission,
                                  CommissionSource::postback, r);
            }
            tx.commit();
        });
    }

    bool set_postback_secret(const std::string& partner, const std::string& hash_hex) override {
        bool found = false;
        run_transaction<CommissionTx>(pool_, false, [&](CommissionTx& t) {
            auto r = t.tx.exec_params(
                "INSERT INTO refgate_postback_secrets (partner_id, secret_hash) SELECT id, "
                "decode($2, 'hex') FROM refgate_partners WHERE slug = $1 ON CONFLICT "
                "(partner_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, created_at = "
                "now() RETURNING partner_id",
                partner, hash_hex);
            found = !r.empty();
            t.tx.commit();
        });
        // After the commit: a read that began before it may have the old secret, and its
        // generation is now too old to keep it.
        secrets_.forget(partner);
        return found;
    }

    std::optional<std::string> postback_secret_hash(const std::string& partner) override {
        if (auto kept = secrets_.find(partner, std::chrono::steady_clock::now())) return kept;
        const std::uint64_t generation = secrets_.generation();
        std::optional<std::string> hash;
        run_transaction<CommissionTx>(pool_, true, [&](CommissionTx& t) {
            auto r = t.tx.exec_params(
                "SELECT encode(s.secret_hash, 'hex') AS secret_hash FROM refgate_postback_secrets "
                "s JOIN "
                "refgate_partners p ON p.id = s.partner_id WHERE p.slug = $1",
                partner);
            if (!r.empty()) hash = r[0]["secret_hash"].as<std::string>();
        });
        if (hash) secrets_.put(partner, *hash, std::chrono::steady_clock::now(), generation);
        return hash;
    }

    std::optional<codec::EarningsReport> earnings(const domain::DayRange& range,
                                                  codec::EarningsGroup group,
                                                  const codec::EarningsFilter& filter) override {
        std::optional<codec::EarningsReport> report;
        run_transaction<CommissionTx>(pool_, true, [&](CommissionTx& t) {
            report = read_earnings(t.tx, range, group, filter);
        });
        return report;
    }

    std::vector<codec::EpcZeroLink> epc_zero_links(const domain::DayRange& window) override {
        std::vector<codec::EpcZeroLink> links;
        run_transaction<CommissionTx>(
            pool_, true, [&](CommissionTx& t) { links = read_epc_zero_links(t.tx, window); });
        return links;
    }

    CommissionTotals totals() override {
        CommissionTotals totals;
        run_transaction<CommissionTx>(pool_, true, [&](CommissionTx& t) {
            // Every partner with each status; a commission counts once per status it has had.
            auto counts = t.tx.exec(
                "SELECT p.slug, s.status, (SELECT count(DISTINCT h.commission_id) FROM "
                "refgate_commission_history h JOIN refgate_commissions c ON c.id = "
                "h.commission_id WHERE c.partner_id = p.id AND h.status = s.status) AS n FROM "
                "refgate_partners p CROSS JOIN unnest(ARRAY['pending', 'approved', 'reversed', "
                "'paid']) AS s(status) ORDER BY p.slug, s.status");
            for (const auto& row : counts) {
                totals.counts.push_back({.partner = row["slug"].as<std::string>(),
                                         .status = row["status"].as<std::string>(),
                                         .commissions = row["n"].as<std::uint64_t>()});
            }
            auto amounts = t.tx.exec(
                "SELECT p.slug, k.currency, s.status, coalesce(sum(c.amount) FILTER (WHERE "
                "c.status = s.status), 0)::text AS amount FROM (SELECT DISTINCT partner_id, "
                "currency FROM refgate_commissions) k JOIN refgate_partners p ON p.id = "
                "k.partner_id CROSS JOIN unnest(ARRAY['pending', 'approved', 'reversed', "
                "'paid']) AS s(status) LEFT JOIN refgate_commissions c ON c.partner_id = "
                "k.partner_id AND c.currency = k.currency GROUP BY p.slug, k.currency, s.status "
                "ORDER BY p.slug, k.currency, s.status");
            for (const auto& row : amounts) {
                totals.amounts.push_back({.partner = row["slug"].as<std::string>(),
                                          .currency = row["currency"].as<std::string>(),
                                          .status = row["status"].as<std::string>(),
                                          .amount = row["amount"].as<std::string>()});
            }
        });
        return totals;
    }

  private:
    pg::ConnectionPool pool_;
    KeptEntries<std::string> secrets_;
};

}  // namespace

std::unique_ptr<CommissionStore> make_pg_commission_store(PgCommissionStoreOptions options) {
    return std::make_unique<PgCommissionStore>(std::move(options));
}

}  // namespace refgate::admin
