#include "refgate/pg/rollups.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>

#include "refgate/domain/counter_key.hpp"
#include "refgate/pg/array_text.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::pg {
namespace {

constexpr const char* kRollupOwnerSql =
    "SELECT pg_advisory_xact_lock($1), set_config('refgate.rollups', 'on', true)";

constexpr const char* kStateColumns =
    "SELECT complete, built_through, reset_pending, base_from - DATE '1970-01-01' AS base_from, "
    "purged_through, months_through - DATE '1970-01-01' AS months_through, months_closed_through, "
    "days_through - DATE '1970-01-01' AS days_through, days_closed_through "
    "FROM refgate_rollup_state";

// Everything a reset clears: with every day in the base table, all of it; with retention, the
// sums over links (rebuilt from the kept link days) and the channels (kept days only). The link
// days and months of kept days are replaced batch by batch.
constexpr const char* kResetAll =
    "TRUNCATE refgate_rollup_link_days, refgate_rollup_link_months, refgate_rollup_partner_days, "
    "refgate_rollup_channel_days, refgate_rollup_unique_days";
constexpr const char* kResetSums =
    "TRUNCATE refgate_rollup_partner_days, refgate_rollup_channel_days, "
    "refgate_rollup_unique_days";

// The links to build next may hold ids of links deleted since (their counts stay, joined away).
constexpr const char* kLastLinkId = R"sql(
SELECT greatest((SELECT max(id) FROM refgate_links),
                (SELECT max(link_id) FROM refgate_click_counts),
                (SELECT max(link_id) FROM refgate_uniques),
                (SELECT max(link_id) FROM refgate_rollup_link_days)) AS last_link_id
)sql";

// $1 < link_id <= $2; $3: base_from (days since 1970-01-01) or NULL.
constexpr const char* kClearLinkDays = R"sql(
DELETE FROM refgate_rollup_link_days
WHERE link_id > $1 AND link_id <= $2 AND ($3::int IS NULL OR day >= DATE '1970-01-01' + $3::int)
)sql";

// Only the closed days (before days_through): the open ones are read from the base table.
constexpr const char* kBuildLinkDays = R"sql(
INSERT INTO refgate_rollup_link_days (link_id, day, human, bot, prefetch, scanner)
SELECT link_id, day, sum(human), sum(bot), sum(prefetch), sum(scanner)
FROM refgate_click_counts
WHERE link_id > $1 AND link_id <= $2 AND ($3::int IS NULL OR day >= DATE '1970-01-01' + $3::int)
  AND day < (SELECT days_through FROM refgate_rollup_state)
GROUP BY link_id, day
)sql";

constexpr const char* kClearLinkMonths =
    "DELETE FROM refgate_rollup_link_months WHERE link_id > $1 AND link_id <= $2";

constexpr const char* kBuildLinkMonths = R"sql(
INSERT INTO refgate_rollup_link_months (link_id, month, human, bot, prefetch, scanner)
SELECT link_id, date_trunc('month', day::timestamp)::date, sum(human), sum(bot), sum(prefetch),
       sum(scanner)
FROM refgate_rollup_link_days
WHERE link_id > $1 AND link_id <= $2
  AND day < (SELECT months_through FROM refgate_rollup_state)
GROUP BY 1, 2
)sql";

// Closing the month that starts at months_through ($3, days since 1970-01-01) for the links
// $1 < link_id <= $2.
constexpr const char* kClearClosedMonth = R"sql(
DELETE FROM refgate_rollup_link_months
WHERE link_id > $1 AND link_id <= $2 AND month = DATE '1970-01-01' + $3::int
)sql";
constexpr const char* kCloseMonth = R"sql(
INSERT INTO refgate_rollup_link_months (link_id, month, human, bot, prefetch, scanner)
SELECT link_id, DATE '1970-01-01' + $3::int, sum(human), sum(bot), sum(prefetch), sum(scanner)
FROM refgate_rollup_link_days
WHERE link_id > $1 AND link_id <= $2 AND day >= DATE '1970-01-01' + $3::int
  AND day < DATE '1970-01-01' + $3::int + interval '1 month'
GROUP BY link_id
)sql";

// Closing the day days_through ($3, days since 1970-01-01) for the links $1 < link_id <= $2: its
// link days from the base table, a probe of its primary key per link id (it has no index by day).
constexpr const char* kClearClosedDay = R"sql(
DELETE FROM refgate_rollup_link_days
WHERE link_id > $1 AND link_id <= $2 AND day = DATE '1970-01-01' + $3::int
)sql";
constexpr const char* kCloseDay = R"sql(
INSERT INTO refgate_rollup_link_days (link_id, day, human, bot, prefetch, scanner)
SELECT c.link_id, c.day, sum(c.human), sum(c.bot), sum(c.prefetch), sum(c.scanner)
FROM generate_series($1::bigint + 1, $2::bigint) AS g(id)
JOIN refgate_click_counts c ON c.link_id = g.id AND c.day = DATE '1970-01-01' + $3::int
GROUP BY c.link_id, c.day
)sql";

// The UTC day that has begun, as days since 1970-01-01.
constexpr const char* kToday =
    "SELECT (now() AT TIME ZONE 'UTC')::date - DATE '1970-01-01' AS today";

// The UTC month that has begun, as days since 1970-01-01.
constexpr const char* kCurrentMonth =
    "SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date - DATE '1970-01-01' AS month";

// From every day of the links: the closed ones' link days, the open ones' base rows.
constexpr const char* kBuildPartnerDays = R"sql(
INSERT INTO refgate_rollup_partner_days AS t (partner_id, day, human, bot, prefetch, scanner)
SELECT l.partner_id, r.day, sum(r.human), sum(r.bot), sum(r.prefetch), sum(r.scanner)
FROM refgate_link_day_sums r JOIN refgate_links l ON l.id = r.link_id
WHERE r.link_id > $1 AND r.link_id <= $2
GROUP BY 1, 2
ON CONFLICT (partner_id, day) DO UPDATE
SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
    prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner
)sql";

constexpr const char* kBuildChannelDays = R"sql(
INSERT INTO refgate_rollup_channel_days AS t (day, channel, human, bot, prefetch, scanner)
SELECT c.day, c.channel, sum(c.human), sum(c.bot), sum(c.prefetch), sum(c.scanner)
FROM refgate_click_counts c JOIN refgate_links l ON l.id = c.link_id
WHERE c.link_id > $1 AND c.link_id <= $2
  AND ($3::int IS NULL OR c.day >= DATE '1970-01-01' + $3::int)
GROUP BY 1, 2
ON CONFLICT (day, channel) DO UPDATE
SET human = t.human + EXCLUDED.human, bot = t.bot + EXCLUDED.bot,
    prefetch = t.prefetch + EXCLUDED.prefetch, scanner = t.scanner + EXCLUDED.scanner
)sql";

constexpr const char* kBuildUniqueDays = R"sql(
INSERT INTO refgate_rollup_unique_days AS t (day, unique_estimate)
SELECT u.day, sum(u.unique_estimate)
FROM refgate_uniques u JOIN refgate_links l ON l.id = u.link_id
WHERE u.link_id > $1 AND u.link_id <= $2
GROUP BY 1
ON CONFLICT (day) DO UPDATE SET unique_estimate = t.unique_estimate + EXCLUDED.unique_estimate
)sql";

// The first day that retention keeps: the last `keep` UTC days, today included.
constexpr const char* kRetentionStart =
    "SELECT (now() AT TIME ZONE 'UTC')::date - DATE '1970-01-01' - ($1::int - 1) AS keep_from";

constexpr const char* kDeleteOldCounts = R"sql(
DELETE FROM refgate_click_counts
WHERE link_id > $1 AND link_id <= $2 AND day < DATE '1970-01-01' + $3::int
)sql";

std::optional<std::int32_t> optional_day(const pqxx::field& f) {
    if (f.is_null()) return std::nullopt;
    return f.as<std::int32_t>();
}

RollupState state_from(const pqxx::row& row) {
    RollupState s;
    s.complete = row["complete"].as<bool>();
    s.built_through = row["built_through"].as<std::int64_t>();
    s.reset_pending = row["reset_pending"].as<bool>();
    s.base_from = optional_day(row["base_from"]);
    s.purged_through = row["purged_through"].as<std::int64_t>();
    s.months_through = row["months_through"].as<std::int32_t>();
    s.months_closed_through = row["months_closed_through"].as<std::int64_t>();
    s.days_through = row["days_through"].as<std::int32_t>();
    s.days_closed_through = row["days_closed_through"].as<std::int64_t>();
    return s;
}

// pqxx 6.4 passes an empty optional as NULL.
std::optional<std::int32_t> day_param(const RollupState& s) { return s.base_from; }

std::int64_t last_link_id(pqxx::work& tx) {
    auto f = tx.exec(kLastLinkId)[0]["last_link_id"];
    return f.is_null() ? -1 : f.as<std::int64_t>();
}

// The first day of the month after the one that starts on `month` (days since 1970-01-01).
std::int32_t month_after(std::int32_t month) {
    using namespace std::chrono;
    year_month_day ymd{sys_days{days{month}}};
    return static_cast<std::int32_t>(
        sys_days{(ymd.year() / ymd.month() + months{1}) / 1}.time_since_epoch().count());
}

// Closing a period (a day or a month) a batch of links at a time: its statements, and how its
// end is logged. clear and close take $1 < link_id <= $2 and the period's first day $3 (days
// since 1970-01-01); batch_done records $1 as the last link closed; next moves on to the next
// period with none of its links closed.
struct PeriodClose {
    const char* clear;
    const char* close;
    const char* batch_done;
    const char* next;
    runtime::log::Level closed_level;
    const char* closed_event;
    const char* closed_field;
};

constexpr PeriodClose kDayClose{
    .clear = kClearClosedDay,
    .close = kCloseDay,
    .batch_done = "UPDATE refgate_rollup_state SET days_closed_through = $1, updated_at = now()",
    .next =
        "UPDATE refgate_rollup_state SET days_through = days_through + 1, "
        "days_closed_through = -1, updated_at = now()",
    .closed_level = runtime::log::Level::debug,
    .closed_event = "rollups_day_closed",
    .closed_field = "day"};

constexpr PeriodClose kMonthClose{
    .clear = kClearClosedMonth,
    .close = kCloseMonth,
    .batch_done = "UPDATE refgate_rollup_state SET months_closed_through = $1, updated_at = now()",
    .next =
        "UPDATE refgate_rollup_state SET months_through = (months_through + interval '1 "
        "month')::date, months_closed_through = -1, updated_at = now()",
    .closed_level = runtime::log::Level::info,
    .closed_event = "rollups_month_closed",
    .closed_field = "month"};

// A batch of closing the period that starts on `start` whose links through `closed_through` are
// closed: the next `links` of them, or, once every link is, the move to the next period.
Upkeep close_period_step(pqxx::work& tx, const PeriodClose& period, std::int32_t start,
                         std::int64_t closed_through, std::int64_t links) {
    if (closed_through >= last_link_id(tx)) {
        tx.exec(period.next);
        tx.commit();
        runtime::log::write(period.closed_level, period.closed_event,
                            {{period.closed_field, domain::format_day(start)}});
        return Upkeep::progress;
    }
    std::int64_t through = closed_through + std::max<std::int64_t>(links, 1);
    tx.exec_params(period.clear, closed_through, through, start);
    tx.exec_params(period.close, closed_through, through, start);
    tx.exec_params(period.batch_done, through);
    tx.commit();
    return Upkeep::progress;
}

// Once the roll-ups are complete (build_rollups_step()): a batch of closing the day at
// days_through once it has ended, else of the month at months_through once it has ended and its
// days are closed.
Upkeep close_periods_step(pqxx::work& tx, const RollupState& s, std::int64_t links) {
    if (s.days_through < tx.exec(kToday)[0]["today"].as<std::int32_t>())
        return close_period_step(tx, kDayClose, s.days_through, s.days_closed_through, links);
    if (s.months_through >= tx.exec(kCurrentMonth)[0]["month"].as<std::int32_t>())
        return Upkeep::idle;
    if (month_after(s.months_through) > s.days_through) return Upkeep::idle;
    return close_period_step(tx, kMonthClose, s.months_through, s.months_closed_through, links);
}

}  // namespace

RollupState read_rollup_state(pqxx::transaction_base& tx) {
    return state_from(tx.exec(kStateColumns)[0]);
}

void BatchSizer::took(std::chrono::steady_clock::duration elapsed) {
    double ms = std::max(1.0, std::chrono::duration<double, std::milli>(elapsed).count());
    double scale = std::clamp(static_cast<double>(target_.count()) / ms, 0.25, 2.0);
    links_ = std::clamp(static_cast<std::int64_t>(static_cast<double>(links_) * scale),
                        std::int64_t{1}, std::int64_t{1'000'000});
}

Upkeep build_rollups_step(pqxx::connection& conn, std::int64_t links) {
    pqxx::work tx(conn);
    tx.exec_params(kRollupOwnerSql, kRollupLock);
    RollupState s = state_from(tx.exec(std::string(kStateColumns) + " FOR UPDATE")[0]);
    if (s.reset_pending) {
        tx.exec(s.base_from ? kResetSums : kResetAll);
        tx.exec(
            "UPDATE refgate_rollup_state SET reset_pending = false, complete = false, "
            "built_through = -1, months_closed_through = -1, days_closed_through = -1, "
            "updated_at = now()");
        tx.commit();
        runtime::log::warn("rollups_reset",
                           {{"detail",
                             "the counts were written without their roll-ups (an older "
                             "release or SQL by hand): building them again"}});
        return Upkeep::reset;
    }
    if (s.complete) return close_periods_step(tx, s, links);
    std::int64_t after = s.built_through;
    std::int64_t through = after + std::max<std::int64_t>(links, 1);
    auto base_from = day_param(s);
    tx.exec_params(kClearLinkDays, after, through, base_from);
    tx.exec_params(kBuildLinkDays, after, through, base_from);
    tx.exec_params(kClearLinkMonths, after, through);
    tx.exec_params(kBuildLinkMonths, after, through);
    tx.exec_params(kBuildPartnerDays, after, through);
    tx.exec_params(kBuildChannelDays, after, through, base_from);
    tx.exec_params(kBuildUniqueDays, after, through);
    bool complete = through >= last_link_id(tx);
    tx.exec_params(
        "UPDATE refgate_rollup_state SET built_through = $1, complete = $2, updated_at = now()",
        through, complete);
    tx.commit();
    if (complete) runtime::log::info("rollups_complete", {{"built_through", through}});
    return Upkeep::progress;
}

Upkeep purge_old_counts_step(pqxx::connection& conn, std::int32_t keep_days, std::int64_t links) {
    pqxx::work tx(conn);
    tx.exec_params(kRollupOwnerSql, kRollupLock);
    RollupState s = state_from(tx.exec(std::string(kStateColumns) + " FOR UPDATE")[0]);
    if (!s.complete || keep_days <= 0) return Upkeep::idle;
    // Never an open day's base rows: its link days are not written yet.
    auto keep_from =
        std::min(tx.exec_params(kRetentionStart, keep_days)[0]["keep_from"].as<std::int32_t>(),
                 s.days_through);
    if (!s.base_from || *s.base_from < keep_from) {
        // From this commit on, no answer reads base rows before keep_from: they go, link by link.
        tx.exec_params(
            "DELETE FROM refgate_rollup_channel_days WHERE day < DATE '1970-01-01' + $1::int",
            keep_from);
        tx.exec_params(
            "UPDATE refgate_rollup_state SET base_from = DATE '1970-01-01' + $1::int, "
            "purged_through = -1, updated_at = now()",
            keep_from);
        tx.commit();
        return Upkeep::progress;
    }
    auto last = tx.exec("SELECT max(link_id) AS last FROM refgate_click_counts")[0]["last"];
    if (last.is_null() || s.purged_through >= last.as<std::int64_t>()) return Upkeep::idle;
    std::int64_t through = s.purged_through + std::max<std::int64_t>(links, 1);
    tx.exec_params(kDeleteOldCounts, s.purged_through, through, *s.base_from);
    tx.exec_params("UPDATE refgate_rollup_state SET purged_through = $1, updated_at = now()",
                   through);
    tx.commit();
    return Upkeep::progress;
}

std::size_t build_rollups(pqxx::connection& conn, std::chrono::milliseconds batch_time) {
    BatchSizer sizer(batch_time);
    std::size_t batches = 0;
    auto next_log = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int resets = 0;
    for (;;) {
        auto started = std::chrono::steady_clock::now();
        auto step = build_rollups_step(conn, sizer.links());
        if (step == Upkeep::idle) return batches;
        if (step == Upkeep::reset) {
            if (++resets == 1) continue;
            runtime::log::warn(
                "rollups_build_interrupted",
                {{"detail",
                  "the counts are being written without their roll-ups (a previous release "
                  "still flushing?): this release's flusher builds them once it is alone"}});
            return batches;
        }
        ++batches;
        auto now = std::chrono::steady_clock::now();
        runtime::log::debug(
            "rollups_batch",
            {{"links", sizer.links()},
             {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(now - started).count()}});
        sizer.took(now - started);
        if (now >= next_log) {
            pqxx::read_transaction tx(conn);
            auto s = read_rollup_state(tx);
            runtime::log::info("rollups_building",
                               {{"built_through", s.built_through}, {"batches", batches}});
            next_log = now + std::chrono::seconds(5);
        }
    }
}

namespace {

// The four class sums of a compared row, named by `side` ("r": the roll-up's, "b": the base
// table's, as columns r_human, b_human, ...).
std::string classes_text(const pqxx::row& row, const std::string& side) {
    static constexpr std::array<const char*, 4> kNames{"human", "bot", "prefetch", "scanner"};
    if (row[side + "_human"].is_null()) return "none";
    std::string out;
    for (const char* name : kNames) {
        if (out.size() > 0) out += ", ";
        auto f = row[side + "_" + name];
        out += std::string(name) + " " + (f.is_null() ? std::string("0") : f.c_str());
    }
    return out;
}

// Each comparison returns the rows that differ: the key as text, then the roll-up's four class
// sums (r_human, ...) and the recomputed ones (b_human, ...; NULL: no row). A missing row and a row
// of zeros are the same. Parameters: the links (NULL: all) or the days (NULL: all), then base_from
// (or NULL) where the base table is read.
constexpr const char* kDiffColumns = R"sql(
WHERE (coalesce(r.human, 0), coalesce(r.bot, 0), coalesce(r.prefetch, 0), coalesce(r.scanner, 0))
   <> (coalesce(b.human, 0), coalesce(b.bot, 0), coalesce(b.prefetch, 0), coalesce(b.scanner, 0))
)sql";

constexpr const char* kCheckLinkDays = R"sql(
SELECT 'link ' || coalesce(r.link_id, b.link_id) || ', ' || coalesce(r.day, b.day) AS key,
       r.human AS r_human, r.bot AS r_bot, r.prefetch AS r_prefetch, r.scanner AS r_scanner,
       b.human AS b_human, b.bot AS b_bot, b.prefetch AS b_prefetch, b.scanner AS b_scanner
FROM (SELECT r.* FROM refgate_rollup_link_days r, refgate_rollup_state s
      WHERE ($1::bigint[] IS NULL OR link_id = ANY($1::bigint[]))
        AND ($2::int IS NULL OR day >= DATE '1970-01-01' + $2::int)
        AND (day < s.days_through
             OR (day = s.days_through AND link_id <= s.days_closed_through))) r
FULL JOIN (SELECT link_id, day, sum(human) AS human, sum(bot) AS bot, sum(prefetch) AS prefetch,
                  sum(scanner) AS scanner
           FROM refgate_click_counts, refgate_rollup_state s
           WHERE ($1::bigint[] IS NULL OR link_id = ANY($1::bigint[]))
             AND ($2::int IS NULL OR day >= DATE '1970-01-01' + $2::int)
             AND (day < s.days_through
                  OR (day = s.days_through AND link_id <= s.days_closed_through))
           GROUP BY 1, 2) b ON b.link_id = r.link_id AND b.day = r.day
)sql";

constexpr const char* kCheckLinkMonths = R"sql(
SELECT 'link ' || coalesce(r.link_id, b.link_id) || ', ' ||
       to_char(coalesce(r.month, b.month), 'YYYY-MM') AS key,
       r.human AS r_human, r.bot AS r_bot, r.prefetch AS r_prefetch, r.scanner AS r_scanner,
       b.human AS b_human, b.bot AS b_bot, b.prefetch AS b_prefetch, b.scanner AS b_scanner
FROM (SELECT * FROM refgate_rollup_link_months, refgate_rollup_state s
      WHERE ($1::bigint[] IS NULL OR link_id = ANY($1::bigint[]))
        AND (month < s.months_through
             OR (month = s.months_through AND link_id <= s.months_closed_through))) r
FULL JOIN (SELECT link_id, date_trunc('month', day::timestamp)::date AS month, sum(human) AS human,
                  sum(bot) AS bot, sum(prefetch) AS prefetch, sum(scanner) AS scanner
           FROM refgate_rollup_link_days, refgate_rollup_state s
           WHERE ($1::bigint[] IS NULL OR link_id = ANY($1::bigint[]))
             AND (day < s.months_through
                  OR (day < s.months_through + interval '1 month'
                      AND link_id <= s.months_closed_through))
           GROUP BY 1, 2) b ON b.link_id = r.link_id AND b.month = r.month
)sql";

constexpr const char* kCheckPartnerDays = R"sql(
SELECT 'partner ' || coalesce(r.partner_id, b.partner_id) || ', ' || coalesce(r.day, b.day) AS key,
       r.human AS r_human, r.bot AS r_bot, r.prefetch AS r_prefetch, r.scanner AS r_scanner,
       b.human AS b_human, b.bot AS b_bot, b.prefetch AS b_prefetch, b.scanner AS b_scanner
FROM (SELECT * FROM refgate_rollup_partner_days
      WHERE ($1::date[] IS NULL OR day = ANY($1::date[]))) r
FULL JOIN (SELECT l.partner_id, d.day, sum(d.human) AS human, sum(d.bot) AS bot,
                  sum(d.prefetch) AS prefetch, sum(d.scanner) AS scanner
           FROM refgate_link_day_sums d JOIN refgate_links l ON l.id = d.link_id
           WHERE ($1::date[] IS NULL OR d.day = ANY($1::date[]))
           GROUP BY 1, 2) b ON b.partner_id = r.partner_id AND b.day = r.day
)sql";

// The base rows of sampled days are found through the link days (the base table has no index
// by day); --all reads it whole.
constexpr const char* kCheckChannelDays = R"sql(
SELECT coalesce(r.day, b.day) || ', ' || coalesce(r.channel, b.channel) AS key,
       r.human AS r_human, r.bot AS r_bot, r.prefetch AS r_prefetch, r.scanner AS r_scanner,
       b.human AS b_human, b.bot AS b_bot, b.prefetch AS b_prefetch, b.scanner AS b_scanner
FROM (SELECT * FROM refgate_rollup_channel_days
      WHERE ($1::date[] IS NULL OR day = ANY($1::date[]))) r
FULL JOIN (SELECT c.day, c.channel, sum(c.human) AS human, sum(c.bot) AS bot,
                  sum(c.prefetch) AS prefetch, sum(c.scanner) AS scanner
           FROM refgate_click_counts c JOIN refgate_links l ON l.id = c.link_id
           WHERE ($2::int IS NULL OR c.day >= DATE '1970-01-01' + $2::int)
             AND ($1::date[] IS NULL OR (c.link_id, c.day) IN (
                     SELECT link_id, day FROM refgate_link_day_sums
                     WHERE day = ANY($1::date[])))
           GROUP BY 1, 2) b ON b.day = r.day AND b.channel = r.channel
)sql";

constexpr const char* kCheckUniqueDays = R"sql(
SELECT (coalesce(r.day, b.day))::text AS key, r.unique_estimate AS r_unique_estimate,
       b.unique_estimate AS b_unique_estimate
FROM (SELECT * FROM refgate_rollup_unique_days
      WHERE ($1::date[] IS NULL OR day = ANY($1::date[]))) r
FULL JOIN (SELECT u.day, sum(u.unique_estimate) AS unique_estimate
           FROM refgate_uniques u JOIN refgate_links l ON l.id = u.link_id
           WHERE ($1::date[] IS NULL OR u.day = ANY($1::date[]))
           GROUP BY 1) b ON b.day = r.day
WHERE coalesce(r.unique_estimate, 0) <> coalesce(b.unique_estimate, 0)
)sql";

constexpr std::size_t kShownDifferences = 20;

void count(const pqxx::result& rows, const char* table, RollupCheck& out, bool uniques) {
    for (const auto& row : rows) {
        ++out.differences;
        if (out.shown.size() >= kShownDifferences) continue;
        RollupDifference d{table, row["key"].c_str(), "", ""};
        if (uniques) {
            auto estimate = [&](const char* column) {
                auto f = row[column];
                return f.is_null() ? std::string("none") : "unique_estimate " + f.as<std::string>();
            };
            d.rollup = estimate("r_unique_estimate");
            d.expected = estimate("b_unique_estimate");
        } else {
            d.rollup = classes_text(row, "r");
            d.expected = classes_text(row, "b");
        }
        out.shown.push_back(std::move(d));
    }
}

}  // namespace

RollupCheck check_rollups(pqxx::connection& conn, bool all, std::size_t sample_links,
                          std::size_t sample_days) {
    RollupCheck out;
    out.all = all;
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(conn);
    out.state = read_rollup_state(tx);
    if (!out.state.complete) return out;
    std::optional<std::string> links, days;
    if (all) {
        auto counted = tx.exec(
            "SELECT (SELECT count(DISTINCT link_id) FROM refgate_rollup_link_days) AS links, "
            "(SELECT count(*) FROM refgate_rollup_unique_days) AS days")[0];
        out.links = counted["links"].as<std::size_t>();
        out.days = counted["days"].as<std::size_t>();
    } else {
        ArrayText link_ids, day_texts;
        for (const auto& row : tx.exec_params(
                 "SELECT id FROM refgate_links ORDER BY random() LIMIT $1", sample_links))
            link_ids.add_number(row["id"].as<std::int64_t>());
        for (const auto& row :
             tx.exec_params("SELECT day::text AS day FROM (SELECT DISTINCT day FROM "
                            "refgate_rollup_partner_days) d ORDER BY random() "
                            "LIMIT $1",
                            sample_days))
            day_texts.add(row["day"].c_str());
        out.links = link_ids.size();
        out.days = day_texts.size();
        links = link_ids.finish();
        days = day_texts.finish();
    }
    auto diff = [&](const char* sql) { return std::string(sql) + kDiffColumns; };
    const auto& base_from = out.state.base_from;
    count(tx.exec_params(diff(kCheckLinkDays), links, base_from), "refgate_rollup_link_days", out,
          false);
    count(tx.exec_params(diff(kCheckLinkMonths), links), "refgate_rollup_link_months", out, false);
    count(tx.exec_params(diff(kCheckPartnerDays), days), "refgate_rollup_partner_days", out, false);
    count(tx.exec_params(diff(kCheckChannelDays), days, base_from), "refgate_rollup_channel_days",
          out, false);
    count(tx.exec_params(kCheckUniqueDays, days), "refgate_rollup_unique_days", out, true);
    // Retention deleted the channels of days before base_from along with their base rows.
    if (out.state.base_from) {
        for (const auto& row : tx.exec_params(
                 "SELECT day::text AS day, count(*) AS channels FROM refgate_rollup_channel_days "
                 "WHERE day < DATE '1970-01-01' + $1::int GROUP BY 1 ORDER BY 1",
                 *out.state.base_from)) {
            ++out.differences;
            if (out.shown.size() < kShownDifferences)
                out.shown.push_back({"refgate_rollup_channel_days", row["day"].c_str(),
                                     row["channels"].as<std::string>() + " channel row(s)",
                                     "none (before the retained days)"});
        }
    }
    tx.commit();
    return out;
}

}  // namespace refgate::pg
