#include "refgate/clicks/pg_count_sink.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <map>
#include <pqxx/pqxx>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "fault_points.hpp"
#include "refgate/clicks/channel_cap.hpp"
#include "refgate/clicks/rollup_sums.hpp"
#include "refgate/config/postgres_url.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/pg/array_text.hpp"
#include "refgate/pg/connection.hpp"
#include "refgate/pg/rollups.hpp"
#include "refgate/runtime/background_thread.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::clicks {
namespace {

// Any constant shared by every refgate instance: one flusher at a time does the work.
constexpr long long kFlushLock = 0x7265666761746532LL;  // "refgate2"

// Roll-up upkeep per flush round, and per batch: a batch holds the other flushes' transactions
// off while it runs.
constexpr std::chrono::milliseconds kUpkeepTime{1'000};
constexpr std::chrono::milliseconds kUpkeepBatchTime{250};

constexpr const char* kRecordBucket = R"sql(
INSERT INTO refgate_flushed_buckets (bucket, counters, clicks) VALUES ($1, $2, $3)
ON CONFLICT (bucket) DO NOTHING
RETURNING bucket
)sql";

// Rows travel as arrays, one per column: PostgreSQL parses an array of 100,000 elements much
// faster than the same rows as JSON objects, and nothing builds a document per row.
constexpr const char* kAddCounts = R"sql(
INSERT INTO refgate_click_counts AS t (link_id, day, channel, human, bot, prefetch, scanner)
SELECT * FROM unnest($1::bigint[], $2::date[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[],
                     $7::bigint[])
ON CONFLICT (link_id, day, channel) DO UPDATE
SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
    prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner
)sql";

// clicks.hourly (issue 44, sql/020_webhooks.sql): the rows kAddCounts just wrote, summed per link
// into the hour of this flush, only while a webhook takes that event.
constexpr const char* kWebhookHourly = R"sql(
INSERT INTO refgate_webhook_clicks_hourly AS t (link_id, hour, human, bot, prefetch, scanner)
SELECT l, date_trunc('hour', now()), sum(h), sum(b), sum(p), sum(s)
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) AS u (l, h, b, p, s)
WHERE EXISTS (SELECT 1 FROM refgate_webhooks
              WHERE active AND ('clicks.hourly' = ANY (events) OR '*' = ANY (events)))
GROUP BY l
ON CONFLICT (link_id, hour) DO UPDATE
SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
    prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner
)sql";

// The roll-ups (sql/014_rollups.sql) of the rows kAddCounts just wrote, summed by rollup_sums():
// a row per (link, day) of a closed day ($1-$6, a late bucket's: the open day has none, sql/026),
// per (link, month) of an ended month ($7-$12, a late bucket's), per (partner, day) ($13-$18) and
// per (day, channel) ($19-$24), each a column per array. Plain upserts: the grouping, the links'
// partners and the state's limits were applied in the flusher.
constexpr const char* kRollUpCounts = R"sql(
WITH link_days AS (
    INSERT INTO refgate_rollup_link_days AS t (link_id, day, human, bot, prefetch, scanner)
    SELECT * FROM unnest($1::bigint[], $2::date[], $3::bigint[], $4::bigint[], $5::bigint[],
                         $6::bigint[])
    ON CONFLICT (link_id, day) DO UPDATE
    SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
        prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner
), link_months AS (
    INSERT INTO refgate_rollup_link_months AS t (link_id, month, human, bot, prefetch, scanner)
    SELECT * FROM unnest($7::bigint[], $8::date[], $9::bigint[], $10::bigint[], $11::bigint[],
                         $12::bigint[])
    ON CONFLICT (link_id, month) DO UPDATE
    SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
        prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner
), partner_days AS (
    INSERT INTO refgate_rollup_partner_days AS t (partner_id, day, human, bot, prefetch, scanner)
    SELECT * FROM unnest($13::bigint[], $14::date[], $15::bigint[], $16::bigint[], $17::bigint[],
                         $18::bigint[])
    ON CONFLICT (partner_id, day) DO UPDATE
    SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
        prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner
), channel_days AS (
    INSERT INTO refgate_rollup_channel_days AS t (day, channel, human, bot, prefetch, scanner)
    SELECT * FROM unnest($19::date[], $20::text[], $21::bigint[], $22::bigint[], $23::bigint[],
                         $24::bigint[])
    ON CONFLICT (day, channel) DO UPDATE
    SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
        prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner
)
SELECT 1
)sql";

// The partners of a bucket's links that exist, by the primary key (a probe per link).
constexpr const char* kLinkPartners =
    "SELECT id AS link_id, partner_id FROM refgate_links WHERE id = ANY ($1::bigint[])";

// Targeting counters (CounterKey::targeting): per (link, day, country, rule), a column per class.
constexpr const char* kAddTargetCounts = R"sql(
INSERT INTO refgate_click_counts_by_country AS t (link_id, day, country, rule, human, bot, prefetch,
                                                  scanner)
SELECT * FROM unnest($1::bigint[], $2::date[], $3::text[], $4::text[], $5::bigint[], $6::bigint[],
                     $7::bigint[], $8::bigint[])
ON CONFLICT (link_id, day, country, rule) DO UPDATE
SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
    prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner
)sql";

// For the channel cap: how many channels other than direct and other each (link, day) of a bucket
// has stored, and which of the bucket's channels are stored already (days as numbers).
constexpr const char* kStoredChannelCounts = R"sql(
SELECT c.link_id, c.day - DATE '1970-01-01' AS day, count(*) AS channels
FROM refgate_click_counts c
JOIN unnest($1::bigint[], $2::date[]) AS b(link_id, day) USING (link_id, day)
WHERE c.channel NOT IN ('direct', 'other')
GROUP BY 1, 2
)sql";

constexpr const char* kStoredChannels = R"sql(
SELECT c.link_id, c.day - DATE '1970-01-01' AS day, c.channel
FROM refgate_click_counts c
JOIN unnest($1::bigint[], $2::date[], $3::text[]) AS b(link_id, day, channel)
  USING (link_id, day, channel)
)sql";

// A (link, day)'s estimate replaces the one stored; the day's sum over existing links (the
// overview's) changes by the difference, for the links rolled up so far. Every part of the
// statement sees the estimates as they were before it.
constexpr const char* kSetUniques = R"sql(
WITH s AS MATERIALIZED (
    SELECT CASE WHEN complete THEN 9223372036854775807 ELSE built_through END AS through,
           coalesce(base_from, '-infinity') AS base_from
    FROM refgate_rollup_state
), n AS MATERIALIZED (
    SELECT * FROM unnest($1::bigint[], $2::date[], $3::bigint[]) AS n(link_id, day, unique_estimate)
), old AS MATERIALIZED (
    SELECT u.link_id, u.day, u.unique_estimate FROM refgate_uniques u JOIN n USING (link_id, day)
), stored AS (
    INSERT INTO refgate_uniques AS t (link_id, day, unique_estimate)
    SELECT link_id, day, unique_estimate FROM n
    ON CONFLICT (link_id, day) DO UPDATE
    SET unique_estimate = EXCLUDED.unique_estimate, updated_at = now()
), unique_days AS (
    INSERT INTO refgate_rollup_unique_days AS t (day, unique_estimate)
    SELECT n.day, sum(n.unique_estimate - coalesce(o.unique_estimate, 0))
    FROM n LEFT JOIN old o USING (link_id, day)
    WHERE n.link_id <= (SELECT through FROM s)
      AND EXISTS (SELECT 1 FROM refgate_links l WHERE l.id = n.link_id)
    GROUP BY n.day
    ON CONFLICT (day) DO UPDATE SET unique_estimate = t.unique_estimate + EXCLUDED.unique_estimate
)
SELECT 1
)sql";

constexpr const char* kRecordEarlyFields = R"sql(
INSERT INTO refgate_early_bucket_fields AS t (bucket, field, clicks)
SELECT $1, r.f, r.n FROM unnest($2::text[], $3::bigint[]) AS r(f, n)
ON CONFLICT (bucket, field) DO UPDATE SET clicks = GREATEST(t.clicks, EXCLUDED.clicks)
)sql";

// A flush's COMMIT returns only once it is as durable as the server's synchronous replication
// makes it: a role or database default of off, local or remote_write cannot weaken it (the
// bucket's DEL in Redis follows the COMMIT, see docs/architecture.md "PostgreSQL failover"); a
// stronger remote_apply is kept.
constexpr const char* kDurableCommit = R"sql(
SELECT set_config('synchronous_commit', 'on', true)
WHERE current_setting('synchronous_commit') NOT IN ('on', 'remote_apply')
)sql";

using pg::ArrayText;

// The counts as the seven columns of kAddCounts, a row per (link, day, channel) with a count per
// class; fields that do not parse are logged and left out.
struct CounterRows {
    ArrayText links, days, channels;
    ArrayText rules;  // targeting rows only: `channels` holds their countries
    std::array<ArrayText, domain::kClickClassCount> classes;  // human, bot, prefetch, scanner
    std::vector<ChannelCountRow> channel_rows;  // the channel rows again, for the roll-ups
    std::size_t rows = 0;
    std::size_t counters = 0;  // the counts that parsed
    std::uint64_t total = 0;
    explicit CounterRows(std::size_t n)
        : links(n * 8),
          days(n * 11),
          channels(n * 12),
          rules(n * 2),
          classes{ArrayText(n * 3), ArrayText(n * 3), ArrayText(n * 3), ArrayText(n * 3)} {}
};

std::size_t class_column(std::uint8_t click_class) {
    switch (static_cast<domain::ClickClass>(click_class)) {
        case domain::ClickClass::human:
            return 0;
        case domain::ClickClass::bot:
            return 1;
        case domain::ClickClass::prefetch:
            return 2;
        case domain::ClickClass::scanner:
            return 3;
    }
    return 0;
}

ChannelCounts parse_counts(std::int64_t bucket, const BucketCounts& counts) {
    ChannelCounts parsed;
    parsed.reserve(counts.size());
    runtime::CpuSlicer slicer;
    for (const auto& [field, n] : counts) {
        slicer.step();
        domain::CounterKey key;
        if (!domain::CounterKey::parse_field(field, key)) {
            runtime::log::error("bad_counter_field", {{"bucket", bucket}, {"field", field}});
            continue;
        }
        parsed.emplace_back(key, n);
    }
    return parsed;
}

// Rows go in primary-key order: PostgreSQL then appends to the index's rightmost pages instead of
// visiting a random page per row (about a third faster for 100,000 new rows).
// The channel counters (targeting: false) or the targeting counters (true) of a bucket.
CounterRows counter_rows(ChannelCounts parsed, bool targeting) {
    std::erase_if(parsed, [&](const auto& p) { return p.first.is_targeting() != targeting; });
    auto row_key = [](const domain::CounterKey& k) {
        const domain::TargetDimension& t = k.target_dimension();
        return k.is_targeting()
                   ? std::make_tuple(k.link_id, k.day, std::string_view{}, k.target_country(),
                                     t.rule, t.branch)
                   : std::make_tuple(k.link_id, k.day, k.channel_view(), std::string_view{},
                                     std::uint16_t{0}, std::uint16_t{0});
    };
    std::sort(parsed.begin(), parsed.end(),
              [&](const auto& a, const auto& b) { return row_key(a.first) < row_key(b.first); });
    CounterRows rows(parsed.size());
    if (!targeting) rows.channel_rows.reserve(parsed.size());
    rows.counters = parsed.size();
    runtime::CpuSlicer slicer;
    char day[domain::kDayLength];
    for (std::size_t i = 0; i < parsed.size();) {
        const domain::CounterKey& key = parsed[i].first;
        std::array<std::uint64_t, domain::kClickClassCount> by_class{};
        for (; i < parsed.size() && row_key(parsed[i].first) == row_key(key); ++i) {
            by_class[class_column(parsed[i].first.click_class)] += parsed[i].second;
            rows.total += parsed[i].second;
        }
        slicer.step();
        domain::format_day(key.day, day);
        rows.links.add_number(key.link_id);
        rows.days.add(std::string_view(day, sizeof day));
        rows.channels.add(targeting ? key.target_country() : key.channel_view());
        if (targeting) rows.rules.add(key.target_rule());
        for (std::size_t c = 0; c < by_class.size(); ++c) rows.classes[c].add_number(by_class[c]);
        if (!targeting)
            rows.channel_rows.push_back(
                {key.link_id, key.day, std::string(key.channel_view()), by_class});
        ++rows.rows;
    }
    return rows;
}

// A roll-up table's rows as kRollUpCounts's six arrays: the key's two columns, then the classes.
class RollupArrays {
  public:
    template <typename A, typename B>
    explicit RollupArrays(const std::vector<std::tuple<A, B, ClassSums>>& rows) {
        for (const auto& [a, b, classes] : rows) {
            add(first_, a);
            add(second_, b);
            for (std::size_t c = 0; c < classes.size(); ++c) classes_[c].add_number(classes[c]);
        }
    }
    // The arrays in the statement's order.
    std::array<std::string, 6> finish() {
        return {first_.finish(),      second_.finish(),     classes_[0].finish(),
                classes_[1].finish(), classes_[2].finish(), classes_[3].finish()};
    }

  private:
    static void add(ArrayText& to, std::int64_t number) { to.add_number(number); }
    static void add(ArrayText& to, std::int32_t day) {
        char text[domain::kDayLength];
        domain::format_day(day, text);
        to.add(std::string_view(text, sizeof text));
    }
    static void add(ArrayText& to, const std::string& text) { to.add(text); }
    ArrayText first_, second_;
    std::array<ArrayText, 4> classes_;
};

// The adapter's boundary: a libpqxx (or any) failure becomes a Fault here, and the connection is
// dropped, which also ends the session's flush lock.
template <typename F>
auto pg_guard(bool& broken, F&& body) -> Result<decltype(body())> {
    try {
        return body();
    } catch (const std::exception& e) {
        broken = true;
        return Fault{Dependency::postgres, e.what()};
    }
}

class PgCountTransaction final : public CountTransaction {
  public:
    PgCountTransaction(pqxx::connection& conn, bool& broken, std::size_t max_channels)
        : tx_(conn), broken_(broken), max_channels_(max_channels) {
        tx_.exec_params(pg::kRollupWriterSql, pg::kRollupLock);
        tx_.exec(kDurableCommit);
    }

    Result<bool> record_bucket(std::int64_t bucket, std::size_t counters,
                               std::uint64_t clicks) override {
        return pg_guard(broken_, [&] {
            return !tx_.exec_params(kRecordBucket, bucket, static_cast<int>(counters), clicks)
                        .empty();
        });
    }

    Result<BucketCounts> early_counts(std::int64_t bucket) override {
        return pg_guard(broken_, [&] {
            BucketCounts out;
            for (const auto& row : tx_.exec_params(
                     "SELECT field, clicks FROM refgate_early_bucket_fields WHERE bucket = $1",
                     bucket))
                out.emplace_back(row["field"].as<std::string>(), row["clicks"].as<std::uint64_t>());
            return out;
        });
    }

    Status remember_early_counts(std::int64_t bucket, const BucketCounts& counts) override {
        return pg_guard(broken_, [&] {
            ArrayText fields(counts.size() * 36);
            ArrayText clicks(counts.size() * 4);
            for (const auto& [field, n] : counts) {
                fields.add(field);
                clicks.add_number(n);
            }
            tx_.exec_params(kRecordEarlyFields, bucket, fields.finish(), clicks.finish());
            return Done{};
        });
    }

    Result<AddedCounts> add_counts(std::int64_t bucket, const BucketCounts& counts) override {
        return pg_guard(broken_, [&] {
            auto parsed = parse_counts(bucket, counts);
            ChannelFold capped = fold_past_cap(parsed);
            auto rows = counter_rows(parsed, false);
            if (rows.rows > 0) {
                std::string links = rows.links.finish(), days = rows.days.finish(),
                            channels = rows.channels.finish(), human = rows.classes[0].finish(),
                            bot = rows.classes[1].finish(), prefetch = rows.classes[2].finish(),
                            scanner = rows.classes[3].finish();
                tx_.exec_params(kAddCounts, links, days, channels, human, bot, prefetch, scanner);
                tx_.exec_params(kWebhookHourly, links, human, bot, prefetch, scanner);
                // A kill here shows that the counts and their roll-ups commit together.
                REFGATE_FAULT_POINT("before_rollups");
                roll_up(rows.channel_rows);
            }
            auto target = counter_rows(std::move(parsed), true);
            if (target.rows > 0) {
                tx_.exec_params(kAddTargetCounts, target.links.finish(), target.days.finish(),
                                target.channels.finish(), target.rules.finish(),
                                target.classes[0].finish(), target.classes[1].finish(),
                                target.classes[2].finish(), target.classes[3].finish());
            }
            // A click with a targeting counter is one click: the channel counters' total says.
            return AddedCounts{rows.counters + target.counters, rows.total, capped};
        });
    }

    Status commit() override {
        return pg_guard(broken_, [&] {
            tx_.commit();
            return Done{};
        });
    }

  private:
    // The roll-ups of the channel rows just added, in this transaction: the state read after the
    // shared roll-up lock (no build batch or link move runs meanwhile), the partners of the links
    // that exist, then plain upserts of what rollup_sums() adds up.
    void roll_up(const std::vector<ChannelCountRow>& rows) {
        pg::RollupState state = pg::read_rollup_state(tx_);
        RollupScope scope;
        if (!state.complete) scope.rolled_up_through = state.built_through;
        scope.base_from = state.base_from;
        scope.months_through = state.months_through;
        scope.months_closed_through = state.months_closed_through;
        scope.days_through = state.days_through;
        scope.days_closed_through = state.days_closed_through;
        ArrayText link_ids(rows.size() * 3);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (i > 0 && rows[i].link_id == rows[i - 1].link_id) continue;
            if (scope.rolled_up_through && rows[i].link_id > *scope.rolled_up_through) continue;
            link_ids.add_number(rows[i].link_id);
        }
        std::unordered_map<std::int64_t, std::int64_t> partner_of;
        for (const auto& row : tx_.exec_params(kLinkPartners, link_ids.finish()))
            partner_of.emplace(row["link_id"].as<std::int64_t>(),
                               row["partner_id"].as<std::int64_t>());
        RollupSums sums = rollup_sums(rows, scope, partner_of);
        auto d = RollupArrays(sums.link_days).finish();
        auto m = RollupArrays(sums.link_months).finish();
        auto p = RollupArrays(sums.partner_days).finish();
        auto c = RollupArrays(sums.channel_days).finish();
        tx_.exec_params(kRollUpCounts, d[0], d[1], d[2], d[3], d[4], d[5], m[0], m[1], m[2], m[3],
                        m[4], m[5], p[0], p[1], p[2], p[3], p[4], p[5], c[0], c[1], c[2], c[3],
                        c[4], c[5]);
    }

    // The channels of `parsed` that would take their (link, day) past the cap, as stored in this
    // transaction, become "other" (fold_channels()). The flush lock keeps other flushers out
    // until the commit, so no other transaction adds channels meanwhile.
    ChannelFold fold_past_cap(ChannelCounts& parsed) {
        auto link_days = channel_link_days(parsed);
        if (link_days.empty()) return {};
        ArrayText links(link_days.size() * 8), days(link_days.size() * 11);
        for (const auto& [link, day] : link_days) {
            links.add_number(link);
            days.add(domain::format_day(day));
        }
        std::map<LinkAndDay, std::size_t> stored;
        for (const auto& row : tx_.exec_params(kStoredChannelCounts, links.finish(), days.finish()))
            stored[{row["link_id"].as<std::int64_t>(), row["day"].as<std::int32_t>()}] =
                row["channels"].as<std::size_t>();
        auto check = channels_to_check(parsed, max_channels_, stored);
        std::set<StoredChannel> known;
        if (!check.empty()) {
            ArrayText check_links(check.size() * 8), check_days(check.size() * 11),
                check_channels(check.size() * 12);
            for (const auto& [link, day, channel] : check) {
                check_links.add_number(link);
                check_days.add(domain::format_day(day));
                check_channels.add(channel);
            }
            for (const auto& row : tx_.exec_params(kStoredChannels, check_links.finish(),
                                                   check_days.finish(), check_channels.finish()))
                known.emplace(row["link_id"].as<std::int64_t>(), row["day"].as<std::int32_t>(),
                              row["channel"].as<std::string>());
        }
        return fold_channels(parsed, max_channels_, stored, known);
    }

    pqxx::work tx_;
    bool& broken_;
    std::size_t max_channels_;
};

class PgCountSink final : public CountSink {
  public:
    explicit PgCountSink(PgCountSinkOptions options) : options_(std::move(options)) {}

    Result<bool> try_lock() override {
        return pg_guard(broken_, [&] {
            pqxx::nontransaction tx(connection());
            return tx
                .exec_params("SELECT pg_try_advisory_lock($1) AS locked", kFlushLock)[0]["locked"]
                .as<bool>();
        });
    }

    void unlock() override {
        if (!conn_ || broken_) return;  // a connection dropped took its lock along
        static_cast<void>(pg_guard(broken_, [&] {
            pqxx::nontransaction tx(*conn_);
            tx.exec_params("SELECT pg_advisory_unlock($1)", kFlushLock);
            return Done{};
        }));
    }

    Result<std::unique_ptr<CountTransaction>> begin() override {
        return pg_guard(broken_, [&]() -> std::unique_ptr<CountTransaction> {
            return std::make_unique<PgCountTransaction>(connection(), broken_,
                                                        options_.max_channels_per_link_day);
        });
    }

    Status forget_early_counts_before(std::int64_t bucket) override {
        return pg_guard(broken_, [&] {
            pqxx::work tx(connection());
            tx.exec_params("DELETE FROM refgate_early_bucket_fields WHERE bucket < $1", bucket);
            tx.commit();
            return Done{};
        });
    }

    Status set_unique_estimates(const std::vector<UniqueEstimate>& estimates) override {
        return pg_guard(broken_, [&] {
            ArrayText links, days, values;
            for (const auto& e : estimates) {
                links.add_number(e.link_id);
                days.add(domain::format_day(e.day));
                values.add_number(static_cast<std::int64_t>(e.estimate));
            }
            pqxx::work tx(connection());
            tx.exec_params(pg::kRollupWriterSql, pg::kRollupLock);
            tx.exec_params(kSetUniques, links.finish(), days.finish(), values.finish());
            tx.commit();
            return Done{};
        });
    }

    // The roll-ups' build (after migration 014, or a reset) and retention, a batch per
    // transaction, for up to kUpkeepTime per round: this instance holds the flush lock, so
    // no other instance does the same meanwhile.
    Status maintain() override {
        return pg_guard(broken_, [&] {
            auto deadline = std::chrono::steady_clock::now() + kUpkeepTime;
            while (std::chrono::steady_clock::now() < deadline) {
                auto started = std::chrono::steady_clock::now();
                auto step = pg::build_rollups_step(connection(), build_sizer_.links());
                if (step == pg::Upkeep::progress)
                    build_sizer_.took(std::chrono::steady_clock::now() - started);
                if (step != pg::Upkeep::idle) continue;
                if (options_.stats_retention_days <= 0) break;
                started = std::chrono::steady_clock::now();
                step = pg::purge_old_counts_step(connection(), options_.stats_retention_days,
                                                 purge_sizer_.links());
                if (step == pg::Upkeep::idle) break;
                purge_sizer_.took(std::chrono::steady_clock::now() - started);
            }
            if (options_.health != nullptr) {
                pqxx::read_transaction tx(connection());
                options_.health->stats_rollups_complete.store(
                    pg::read_rollup_state(tx).complete ? 1 : 0);
            }
            return Done{};
        });
    }

  private:
    pqxx::connection& connection() {
        if (broken_) {
            conn_.reset();
            broken_ = false;
        }
        // A server that closed the connection while it was idle is noticed here.
        if (conn_ && !pg::still_open(*conn_)) conn_.reset();
        if (!conn_) {
            conn_ = pg::connect(options_.database_url, options_.connect_timeout_seconds);
            check_replication(*conn_);
        }
        return *conn_;
    }

    // A flushed bucket survives a failover only if a standby had the COMMIT: without synchronous
    // standbys, say so (once per connection) where the URI names standbys to fail over to.
    void check_replication(pqxx::connection& conn) {
        pqxx::nontransaction tx(conn);
        bool replicated =
            !tx.exec(
                   "SELECT current_setting('synchronous_standby_names') AS standbys")[0]["standbys"]
                 .as<std::string>()
                 .empty();
        if (options_.health != nullptr)
            options_.health->postgres_sync_replication.store(replicated ? 1 : 0);
        auto hosts = config::postgres_url_hosts(options_.database_url);
        if (!replicated && hosts && hosts->size() > 1) {
            runtime::log::warn("postgres_commit_not_replicated",
                               {{"hosts", hosts->size()},
                                {"detail",
                                 "synchronous_standby_names is empty: counts flushed just before a "
                                 "failover can be lost"}});
        }
    }

    PgCountSinkOptions options_;
    std::unique_ptr<pqxx::connection> conn_;
    bool broken_ = false;  // the last statement failed: a new connection next time
    pg::BatchSizer build_sizer_{kUpkeepBatchTime};
    pg::BatchSizer purge_sizer_{kUpkeepBatchTime, 1'000};
};

}  // namespace

std::unique_ptr<CountSink> make_pg_count_sink(PgCountSinkOptions options) {
    return std::make_unique<PgCountSink>(std::move(options));
}

}  // namespace refgate::clicks
