#include "refgate/admin/pg_stats_store.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <pqxx/pqxx>
#include <set>
#include <unordered_map>

#include "pg_transaction.hpp"
#include "refgate/admin/admin_store.hpp"
#include "refgate/clicks/redis_bucket_store.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/pg/array_text.hpp"
#include "refgate/pg/connection_pool.hpp"
#include "refgate/pg/stored_rows.hpp"

namespace refgate::admin {
namespace {

constexpr std::chrono::milliseconds kRedisTimeout{2'000};

using ReadTx = pqxx::transaction<pqxx::repeatable_read, pqxx::read_only>;

// A count still in a Redis bucket.
struct Unflushed {
    std::int64_t bucket = 0;
    domain::CounterKey key;
    std::uint64_t clicks = 0;
};

// The class's index in ClassCounts (ClickClass order); 255 for a name this build does not know.
std::uint8_t class_index(std::string_view name) {
    auto cls = domain::parse_click_class(name);
    return cls ? static_cast<std::uint8_t>(*cls) : std::uint8_t{255};
}

std::int32_t day_of(const pqxx::field& field) {
    return domain::parse_day(field.c_str()).value_or(0);
}

// A link's clicks per country and per rule branch over the range, as flushed (the counters still
// in Redis reach the view with the next flush, a few seconds later). None for a link without
// rules and without such clicks in the range.
std::optional<domain::TargetingBreakdown> read_targeting(ReadTx& tx, std::int64_t link_id,
                                                         const domain::DayRange& range,
                                                         bool has_rules) {
    domain::TargetingBreakdown breakdown;
    // By the link's id: a slug may be taken on several domains (issue 46).
    auto rows = tx.exec_params(
        "SELECT c.country, c.rule, v.class, sum(v.clicks)::bigint AS clicks FROM "
        "refgate_click_counts_by_country c CROSS JOIN LATERAL (VALUES ('human'::text, c.human), "
        "('bot'::text, c.bot), ('prefetch'::text, c.prefetch), ('scanner'::text, c.scanner)) AS "
        "v(class, clicks) WHERE c.link_id = $1 AND c.day BETWEEN $2::date AND $3::date AND "
        "v.clicks > 0 GROUP BY 1, 2, 3",
        link_id, domain::format_day(range.from), domain::format_day(range.to));
    for (const auto& row : rows)
        breakdown.add(row["country"].c_str(), row["rule"].c_str(),
                      class_index(row["class"].c_str()), row["clicks"].as<std::uint64_t>());
    if (!has_rules && rows.empty()) return std::nullopt;
    return breakdown;
}

// Whether link `l` is on the domain whose host is parameter $first and which is the default when
// $first + 1 is true (StatsDomain): links naming the host, and the default's links without one.
std::string on_domain_sql(int first) {
    std::string host = "$" + std::to_string(first);
    std::string is_default = "$" + std::to_string(first + 1);
    return "(l.domain = " + host + " OR (l.domain IS NULL AND " + is_default + "::boolean))";
}

// Days as the roll-ups' queries take them: days since 1970-01-01.
constexpr const char* kDay = "DATE '1970-01-01' + ";

// Every link's class sums over a range from the roll-ups, with its slug and its partner's, read
// as rollup_reads() says: the month sums of $7 <= month < $8, and the link days of
// $1 <= day < $2 and $4 <= day < $5, times $3 and $6 (1, or -1 where an edge month's sum is read
// less its days outside the range), so that a year costs about as much as a month; and the open
// days $9 <= day < $10 (sql/026: no link days yet) from the base table, a probe of its primary key
// per link, only when there are any. Only existing links, as the views join them; with
// `one_partner`, only the links of partner $11; with `one_domain`, only the links on the domain
// of the next two parameters (on_domain_sql()).
std::string link_sums_sql(bool one_partner, bool one_domain) {
    std::string links =
        one_partner ? " AND link_id IN (SELECT id FROM refgate_links WHERE partner_id = $11)" : "";
    std::string open_links = one_partner ? " AND o.partner_id = $11" : "";
    if (one_domain) {
        std::string on = " IN (SELECT id FROM refgate_links l WHERE " +
                         on_domain_sql(one_partner ? 12 : 11) + ")";
        links += " AND link_id" + on;
        open_links += " AND o.id" + on;
    }
    std::string d = kDay;
    auto days = [&](const char* first, const char* end, const char* sign) {
        std::string times = std::string(sign) + "::int * ";
        return "SELECT link_id, " + times + "human AS human, " + times + "bot AS bot, " + times +
               "prefetch AS prefetch, " + times + "scanner AS scanner FROM " +
               "refgate_rollup_link_days WHERE day >= " + d + first + "::int AND day < " + d + end +
               "::int" + links;
    };
    return "SELECT l.id AS link_id, l.slug AS link, coalesce(l.domain, '') AS domain, p.slug AS "
           "partner, s.human, s.bot, s.prefetch, s.scanner FROM "
           "(SELECT link_id, sum(human)::bigint AS human, sum(bot)::bigint AS bot, "
           "sum(prefetch)::bigint AS prefetch, sum(scanner)::bigint AS scanner FROM (" +
           days("$1", "$2", "$3") + " UNION ALL " + days("$4", "$5", "$6") +
           " UNION ALL SELECT link_id, human, bot, prefetch, scanner FROM "
           "refgate_rollup_link_months WHERE month >= " +
           d + "$7::int AND month < " + d + "$8::int" + links +
           " UNION ALL SELECT o.id, c.human, c.bot, c.prefetch, c.scanner FROM refgate_links o "
           "CROSS JOIN LATERAL (SELECT sum(human)::bigint AS human, sum(bot)::bigint AS bot, "
           "sum(prefetch)::bigint AS prefetch, sum(scanner)::bigint AS scanner FROM "
           "refgate_click_counts WHERE link_id = o.id AND day >= " +
           d + "$9::int AND day < " + d + "$10::int GROUP BY link_id) c WHERE $9::int < $10::int" +
           open_links +
           ") t GROUP BY link_id) s JOIN refgate_links l ON l.id = s.link_id "
           "JOIN refgate_partners p ON p.id = l.partner_id";
}

// The columns human, bot, prefetch and scanner of a roll-up row.
domain::ClassCounts class_sums(const pqxx::row& row) {
    return {row["human"].as<std::uint64_t>(), row["bot"].as<std::uint64_t>(),
            row["prefetch"].as<std::uint64_t>(), row["scanner"].as<std::uint64_t>()};
}

// Whether the stats read the roll-ups (complete) or, while they are built, the base table; and
// the first day whose channels the base table keeps (retention).
struct Source {
    bool rollups = false;
    std::optional<std::int32_t> base_from;
    std::int32_t months_through = 0;  // month sums exist for the months before it
    std::int32_t days_through = 0;    // link days exist for the days before it (sql/026)
};

// Every link's sums over `range` (link_sums_sql()), or those of partner `partner`'s links; with
// `domain`, only those on it.
pqxx::result link_sums(ReadTx& tx, const domain::DayRange& range, const Source& source,
                       std::optional<std::int64_t> partner, const StatsDomain* domain) {
    domain::RollupReads r = domain::rollup_reads(range, source.months_through, source.days_through);
    auto sign = [](const domain::DaySpan& s) { return s.subtract ? -1 : 1; };
    // $1 to $10, then the partner's id and the domain's two when asked (link_sums_sql()).
    std::vector<std::string> params;
    for (int value : {r.before.first, r.before.end, sign(r.before), r.after.first, r.after.end,
                      sign(r.after), r.months.first, r.months.end, r.open.first, r.open.end})
        params.push_back(std::to_string(value));
    if (partner) params.push_back(std::to_string(*partner));
    if (domain) {
        params.push_back(domain->host);
        params.push_back(pqxx::to_string(domain->is_default));
    }
    return tx.exec_params(link_sums_sql(partner.has_value(), domain != nullptr),
                          pqxx::prepare::make_dynamic_params(params));
}

// The host and default flag of `domain` as on_domain_sql()'s parameters; with none, a condition
// every link meets.
std::string domain_host(const StatsDomain* domain) { return domain ? domain->host : ""; }
std::string any_domain_sql(int first) {
    return "($" + std::to_string(first) + " = '' OR " + on_domain_sql(first) + ")";
}

// Also turns JIT compilation off for the rest of the transaction: the planner deems the roll-ups'
// queries costly enough for it, and compiling them takes longer than running them.
Source read_source(ReadTx& tx) {
    auto row = tx.exec(
        "SELECT complete, base_from - DATE '1970-01-01' AS base_from, set_config('jit', 'off', "
        "true), months_through - DATE '1970-01-01' AS months_through, days_through - DATE "
        "'1970-01-01' AS days_through FROM refgate_rollup_state")[0];
    Source s;
    s.rollups = row["complete"].as<bool>();
    if (!row["base_from"].is_null()) s.base_from = row["base_from"].as<std::int32_t>();
    s.months_through = row["months_through"].as<std::int32_t>();
    s.days_through = row["days_through"].as<std::int32_t>();
    return s;
}

// The day of a link's answer, nullptr outside its range.
domain::LinkDay* day_in(domain::LinkStats& stats, std::int32_t day) {
    if (day < stats.range.from || day > stats.range.to) return nullptr;
    return &stats.days[static_cast<std::size_t>(day - stats.range.from)];
}

void add_clicks(domain::LinkStats& stats, std::int32_t day, std::string_view channel,
                std::uint8_t cls, std::uint64_t n) {
    domain::LinkDay* d = day_in(stats, day);
    if (d == nullptr) return;
    d->clicks.add(cls, n);
    if (cls == 0) d->human_by_channel[std::string(channel)] += n;
}

// A link's stored clicks by day, class and (on the days the base table keeps) channel: from the
// roll-ups, or from the base table while they are built.
void read_link_days(ReadTx& tx, const Source& source, std::int64_t link_id,
                    domain::LinkStats& stats) {
    const domain::DayRange& range = stats.range;
    if (!source.rollups) {
        for (const auto& row : tx.exec_params(
                 "SELECT to_char(day, 'YYYY-MM-DD') AS day, channel, class, clicks FROM "
                 "refgate_clicks WHERE link_id = $1 AND day BETWEEN $2::date AND $3::date",
                 link_id, domain::format_day(range.from), domain::format_day(range.to))) {
            add_clicks(stats, day_of(row["day"]), row["channel"].c_str(),
                       class_index(row["class"].c_str()), row["clicks"].as<std::uint64_t>());
        }
        return;
    }
    std::string d = kDay;
    // The closed days (sql/026); the open ones are in the base table.
    for (const auto& row :
         tx.exec_params("SELECT day - DATE '1970-01-01' AS day, human, bot, prefetch, scanner "
                        "FROM refgate_rollup_link_days WHERE link_id = $1 AND day BETWEEN " +
                            d + "$2::int AND " + d + "$3::int AND day < " + d + "$4::int",
                        link_id, range.from, range.to, source.days_through)) {
        if (domain::LinkDay* day = day_in(stats, row["day"].as<std::int32_t>()))
            day->clicks.add(class_sums(row));
    }
    // The channels of the days the base table keeps (every open day among them), and the open
    // days' classes.
    for (const auto& row : tx.exec_params(
             "SELECT day - DATE '1970-01-01' AS day, channel, human, bot, prefetch, "
             "scanner FROM refgate_click_counts WHERE link_id = $1 AND day BETWEEN " +
                 d + "$2::int AND " + d + "$3::int",
             link_id, std::max(range.from, source.base_from.value_or(range.from)), range.to)) {
        auto day_number = row["day"].as<std::int32_t>();
        domain::LinkDay* day = day_in(stats, day_number);
        if (day == nullptr) continue;
        if (day_number >= source.days_through) day->clicks.add(class_sums(row));
        auto human = row["human"].as<std::uint64_t>();
        if (human > 0) day->human_by_channel[row["channel"].c_str()] += human;
    }
}

// The stored unique estimates of a link's days.
void read_link_uniques(ReadTx& tx, std::int64_t link_id, domain::LinkStats& stats) {
    for (const auto& row : tx.exec_params(
             "SELECT to_char(day, 'YYYY-MM-DD') AS day, unique_estimate FROM "
             "refgate_uniques WHERE link_id = $1 AND day BETWEEN $2::date AND $3::date",
             link_id, domain::format_day(stats.range.from), domain::format_day(stats.range.to))) {
        if (domain::LinkDay* d = day_in(stats, day_of(row["day"])))
            d->unique_estimate = row["unique_estimate"].as<std::uint64_t>();
    }
}

// A partner's answer while it is summed: its days, and its links by id (issue 46: a slug may be
// taken on several domains).
struct PartnerSums {
    domain::PartnerStats stats;
    std::unordered_map<std::int64_t, domain::TopEntry> links;

    domain::ClassCounts* day(std::int32_t d) {
        if (d < stats.range.from || d > stats.range.to) return nullptr;
        return &stats.days[static_cast<std::size_t>(d - stats.range.from)].second;
    }
    // A count of link `link_id` on day `d`: the day's and the link's.
    void add(std::int64_t link_id, std::int32_t d, std::uint8_t cls, std::uint64_t n) {
        domain::ClassCounts* counts = day(d);
        if (counts == nullptr) return;
        counts->add(cls, n);
        if (auto it = links.find(link_id); it != links.end()) it->second.clicks.add(cls, n);
    }
    // The answer, its links by slug then domain.
    domain::PartnerStats answer() && {
        for (auto& [id, entry] : links) stats.links.push_back(std::move(entry));
        std::sort(stats.links.begin(), stats.links.end(),
                  [](const domain::TopEntry& a, const domain::TopEntry& b) {
                      return a.link != b.link ? a.link < b.link : a.domain < b.domain;
                  });
        return std::move(stats);
    }
};

// The links of partner `partner_id` (slug `slug`), on `domain` when given, without clicks yet.
std::unordered_map<std::int64_t, domain::TopEntry> partner_links(ReadTx& tx,
                                                                 std::int64_t partner_id,
                                                                 const std::string& slug,
                                                                 const StatsDomain* domain) {
    std::unordered_map<std::int64_t, domain::TopEntry> links;
    for (const auto& row : tx.exec_params(
             "SELECT id, slug, coalesce(domain, '') AS domain FROM refgate_links l WHERE "
             "partner_id = $1 AND " +
                 any_domain_sql(2),
             partner_id, domain_host(domain), domain != nullptr && domain->is_default)) {
        links[row["id"].as<std::int64_t>()] =
            domain::TopEntry{row["slug"].c_str(), slug, {}, row["domain"].c_str()};
    }
    return links;
}

// A partner's class sums per day from the roll-ups: its own roll-up, or on one domain the days of
// its links there, summed (the open days from the base table, sql/026).
pqxx::result partner_rollup_days(ReadTx& tx, std::int64_t partner_id, const domain::DayRange& range,
                                 const StatsDomain* domain) {
    std::string d = kDay;
    std::string days = " BETWEEN " + d + "$2::int AND " + d + "$3::int";
    if (domain == nullptr) {
        return tx.exec_params(
            "SELECT day - DATE '1970-01-01' AS day, human, bot, prefetch, scanner FROM "
            "refgate_rollup_partner_days WHERE partner_id = $1 AND day" +
                days,
            partner_id, range.from, range.to);
    }
    return tx.exec_params(
        "SELECT day - DATE '1970-01-01' AS day, sum(human)::bigint AS human, sum(bot)::bigint AS "
        "bot, sum(prefetch)::bigint AS prefetch, sum(scanner)::bigint AS scanner FROM "
        "refgate_link_day_sums WHERE link_id IN (SELECT id FROM refgate_links l WHERE partner_id "
        "= $1 AND " +
            on_domain_sql(4) + ") AND day" + days + " GROUP BY day",
        partner_id, range.from, range.to, domain->host, domain->is_default);
}

// A partner's days and its links' sums from the roll-ups.
void read_partner_rollups(ReadTx& tx, const Source& source, std::int64_t partner_id,
                          const StatsDomain* domain, PartnerSums& sums) {
    const domain::DayRange& range = sums.stats.range;
    for (const auto& row : partner_rollup_days(tx, partner_id, range, domain)) {
        if (domain::ClassCounts* counts = sums.day(row["day"].as<std::int32_t>()))
            counts->add(class_sums(row));
    }
    for (const auto& row : link_sums(tx, range, source, partner_id, domain)) {
        auto it = sums.links.find(row["link_id"].as<std::int64_t>());
        if (it != sums.links.end()) it->second.clicks.add(class_sums(row));
    }
}

// A partner's days and its links' sums from the base table, while the roll-ups are built.
void read_partner_base(ReadTx& tx, const std::string& slug, const StatsDomain* domain,
                       PartnerSums& sums) {
    const domain::DayRange& range = sums.stats.range;
    for (const auto& row : tx.exec_params(
             "SELECT l.id AS link, to_char(c.day, 'YYYY-MM-DD') AS day, c.class, "
             "sum(c.clicks)::bigint AS clicks FROM refgate_clicks c JOIN refgate_links l ON l.id "
             "= c.link_id JOIN refgate_partners p ON p.id = l.partner_id WHERE p.slug = $1 AND "
             "c.day BETWEEN $2::date AND $3::date AND " +
                 any_domain_sql(4) + " GROUP BY 1, 2, 3",
             slug, domain::format_day(range.from), domain::format_day(range.to),
             domain_host(domain), domain != nullptr && domain->is_default)) {
        sums.add(row["link"].as<std::int64_t>(), day_of(row["day"]),
                 class_index(row["class"].c_str()), row["clicks"].as<std::uint64_t>());
    }
}

class PgStatsStore final : public StatsStore {
  public:
    explicit PgStatsStore(PgStatsStoreOptions options) : options_(std::move(options)) {}

    std::optional<domain::LinkStats> link(const std::string& name,
                                          const domain::DayRange& range) override {
        auto buckets = open_buckets();
        auto unflushed = read_unflushed(*buckets, range);
        std::optional<domain::LinkStats> stats;
        std::int64_t link_id = 0;
        with_transaction([&](ReadTx& tx) {
            // The link as the admin API finds it (issue 46: "host/slug" on a domain).
            auto named = pg::parse_link_name(name);
            auto found = tx.exec_params(
                "SELECT l.id, l.slug, coalesce(l.domain, '') AS domain, p.slug AS partner, "
                "l.rules <> '[]'::jsonb AS has_rules FROM refgate_links l JOIN refgate_partners p "
                "ON p.id = l.partner_id WHERE " +
                    pg::link_named_sql(1),
                named.host, named.slug);
            if (found.empty()) return;
            link_id = found[0]["id"].as<std::int64_t>();
            stats.emplace();
            stats->link = found[0]["slug"].c_str();
            stats->domain = found[0]["domain"].c_str();
            stats->partner = found[0]["partner"].c_str();
            stats->range = range;
            for (std::int32_t d = range.from; d <= range.to; ++d)
                stats->days.push_back({d, {}, 0, {}});
            read_link_days(tx, read_source(tx), link_id, *stats);
            auto flushed = flushed_among(tx, unflushed);
            for (const auto& u : unflushed) {
                if (u.key.link_id != link_id || flushed.count(u.bucket) != 0) continue;
                add_clicks(*stats, u.key.day, u.key.channel_view(), u.key.click_class, u.clicks);
            }
            read_link_uniques(tx, link_id, *stats);
            stats->targeting = read_targeting(tx, link_id, range, found[0]["has_rules"].as<bool>());
        });
        if (!stats) return stats;
        // A recent day's estimate in Redis covers every sample of that day, flushed or not.
        std::vector<std::int32_t> days;
        for (std::int32_t d =
                 std::max(range.from, utc_today(clock()) - clicks::kUniqueRetentionDays);
             d <= range.to; ++d)
            days.push_back(d);
        auto estimates = redis_value(buckets->unique_estimates(link_id, days));
        for (std::size_t i = 0; i < days.size(); ++i) {
            if (estimates[i] > 0)
                stats->days[static_cast<std::size_t>(days[i] - range.from)].unique_estimate =
                    estimates[i];
        }
        return stats;
    }

    std::optional<domain::PartnerStats> partner(const std::string& slug,
                                                const domain::DayRange& range,
                                                const StatsDomain* domain) override {
        auto buckets = open_buckets();
        auto unflushed = read_unflushed(*buckets, range);
        std::optional<domain::PartnerStats> stats;
        with_transaction([&](ReadTx& tx) {
            auto found = tx.exec_params("SELECT id FROM refgate_partners WHERE slug = $1", slug);
            if (found.empty()) return;
            auto partner_id = found[0]["id"].as<std::int64_t>();
            PartnerSums sums;
            sums.stats.partner = slug;
            sums.stats.range = range;
            for (std::int32_t d = range.from; d <= range.to; ++d)
                sums.stats.days.push_back({d, {}});
            sums.links = partner_links(tx, partner_id, slug, domain);
            Source source = read_source(tx);
            if (source.rollups) {
                read_partner_rollups(tx, source, partner_id, domain, sums);
            } else {
                read_partner_base(tx, slug, domain, sums);
            }
            auto flushed = flushed_among(tx, unflushed);
            for (const auto& u : unflushed) {
                if (!sums.links.contains(u.key.link_id) || flushed.count(u.bucket) != 0) continue;
                sums.add(u.key.link_id, u.key.day, u.key.click_class, u.clicks);
            }
            stats = std::move(sums).answer();
        });
        return stats;
    }

    std::vector<domain::TopEntry> top(const domain::DayRange& range, std::size_t limit,
                                      const StatsDomain* domain) override {
        auto buckets = open_buckets();
        auto unflushed = read_unflushed(*buckets, range);
        // By the link's id: a slug may be taken on several domains (issue 46).
        std::map<std::int64_t, domain::TopEntry> entries;
        with_transaction([&](ReadTx& tx) {
            auto entry = [&](const pqxx::row& row) -> domain::TopEntry& {
                auto& e = entries[row["link_id"].as<std::int64_t>()];
                e.link = row["link"].c_str();
                e.partner = row["partner"].c_str();
                e.domain = row["domain"].c_str();
                return e;
            };
            Source source = read_source(tx);
            if (source.rollups) {
                for (const auto& row : link_sums(tx, range, source, std::nullopt, domain))
                    entry(row).clicks.add(class_sums(row));
            } else {
                for (const auto& row : tx.exec_params(
                         "SELECT l.id AS link_id, l.slug AS link, coalesce(l.domain, '') AS "
                         "domain, p.slug AS partner, c.class, "
                         "sum(c.clicks)::bigint AS clicks FROM refgate_clicks c JOIN "
                         "refgate_links l ON l.id = c.link_id JOIN refgate_partners p ON p.id = "
                         "l.partner_id WHERE c.day BETWEEN $1::date AND $2::date AND " +
                             any_domain_sql(3) + " GROUP BY 1, 2, 3, 4, 5",
                         domain::format_day(range.from), domain::format_day(range.to),
                         domain_host(domain), domain != nullptr && domain->is_default)) {
                    entry(row).clicks.add(class_index(row["class"].c_str()),
                                          row["clicks"].as<std::uint64_t>());
                }
            }
            auto flushed = flushed_among(tx, unflushed);
            std::set<std::int64_t> ids;
            for (const auto& u : unflushed) {
                if (flushed.count(u.bucket) == 0) ids.insert(u.key.link_id);
            }
            if (ids.empty()) return;
            std::set<std::int64_t> named;
            for (const auto& row : tx.exec_params(
                     "SELECT l.id AS link_id, l.slug AS link, coalesce(l.domain, '') AS domain, "
                     "p.slug AS partner FROM refgate_links l JOIN refgate_partners p ON p.id = "
                     "l.partner_id WHERE l.id = ANY($1::bigint[]) AND " +
                         any_domain_sql(2),
                     pg::bigint_array(std::vector<std::int64_t>(ids.begin(), ids.end())),
                     domain_host(domain), domain != nullptr && domain->is_default)) {
                entry(row);
                named.insert(row["link_id"].as<std::int64_t>());
            }
            for (const auto& u : unflushed) {
                if (!named.contains(u.key.link_id) || flushed.count(u.bucket) != 0) continue;
                entries[u.key.link_id].clicks.add(u.key.click_class, u.clicks);
            }
        });
        std::vector<domain::TopEntry> out;
        for (auto& [id, e] : entries) {
            if (e.clicks.total() > 0) out.push_back(std::move(e));
        }
        domain::rank_top(out, limit);
        return out;
    }

    std::vector<domain::TopEntry> top_partners(const domain::DayRange& range, std::size_t limit,
                                               const StatsDomain* domain) override {
        // The partners' roll-ups sum every domain: on one, the sums of its links' entries.
        if (domain != nullptr) return StatsStore::top_partners(range, limit, domain);
        auto buckets = open_buckets();
        auto unflushed = read_unflushed(*buckets, range);
        std::map<std::string, domain::ClassCounts> sums;
        bool from_rollups = false;
        with_transaction([&](ReadTx& tx) {
            if (!read_source(tx).rollups) return;
            from_rollups = true;
            std::string d = kDay;
            for (const auto& row :
                 tx.exec_params("SELECT p.slug AS partner, sum(r.human)::bigint AS human, "
                                "sum(r.bot)::bigint AS bot, sum(r.prefetch)::bigint AS prefetch, "
                                "sum(r.scanner)::bigint AS scanner FROM "
                                "refgate_rollup_partner_days r JOIN refgate_partners p ON p.id = "
                                "r.partner_id WHERE r.day BETWEEN " +
                                    d + "$1::int AND " + d + "$2::int GROUP BY 1",
                                range.from, range.to))
                sums[row["partner"].c_str()].add(class_sums(row));
            auto flushed = flushed_among(tx, unflushed);
            std::set<std::int64_t> ids;
            for (const auto& u : unflushed) {
                if (flushed.count(u.bucket) == 0) ids.insert(u.key.link_id);
            }
            if (ids.empty()) return;
            std::unordered_map<std::int64_t, std::string> partners;
            for (const auto& row : tx.exec_params(
                     "SELECT l.id, p.slug AS partner FROM refgate_links l JOIN refgate_partners p "
                     "ON p.id = l.partner_id WHERE l.id = ANY($1::bigint[])",
                     pg::bigint_array(std::vector<std::int64_t>(ids.begin(), ids.end()))))
                partners[row["id"].as<std::int64_t>()] = row["partner"].c_str();
            for (const auto& u : unflushed) {
                auto it = partners.find(u.key.link_id);
                if (it == partners.end() || flushed.count(u.bucket) != 0) continue;
                sums[it->second].add(u.key.click_class, u.clicks);
            }
        });
        // While the roll-ups are built: every link's figures, summed per partner.
        if (!from_rollups) return StatsStore::top_partners(range, limit, nullptr);
        std::vector<domain::TopEntry> out;
        for (auto& [partner, clicks] : sums) {
            if (clicks.total() > 0) out.push_back({partner, partner, clicks, {}});
        }
        domain::rank_top(out, limit);  // `link` holds the partner's slug: the tie-break
        return out;
    }

    domain::LinkStats overview(const domain::DayRange& range) override {
        auto buckets = open_buckets();
        auto unflushed = read_unflushed(*buckets, range);
        domain::LinkStats stats;
        stats.range = range;
        for (std::int32_t d = range.from; d <= range.to; ++d) stats.days.push_back({d, {}, 0, {}});
        auto add = [&](std::int32_t day, std::string_view channel, std::uint8_t cls,
                       std::uint64_t n) {
            if (day < range.from || day > range.to) return;
            domain::LinkDay& d = stats.days[static_cast<std::size_t>(day - range.from)];
            d.clicks.add(cls, n);
            if (cls == 0) d.human_by_channel[std::string(channel)] += n;
        };
        RecentUniques recent{
            std::max(range.from, utc_today(clock()) - clicks::kUniqueRetentionDays), range.to, {}};
        with_transaction([&](ReadTx& tx) {
            Source source = read_source(tx);
            if (source.rollups) {
                read_overview_rollups(tx, stats);
            } else {
                for (const auto& row : tx.exec_params(
                         "SELECT to_char(day, 'YYYY-MM-DD') AS day, channel, class, "
                         "sum(clicks)::bigint AS clicks FROM refgate_clicks_daily WHERE day "
                         "BETWEEN $1::date AND $2::date GROUP BY 1, 2, 3",
                         domain::format_day(range.from), domain::format_day(range.to))) {
                    add(day_of(row["day"]), row["channel"].c_str(),
                        class_index(row["class"].c_str()), row["clicks"].as<std::uint64_t>());
                }
            }
            auto flushed = flushed_among(tx, unflushed);
            std::set<std::int64_t> ids;
            for (const auto& u : unflushed) {
                if (flushed.count(u.bucket) == 0) ids.insert(u.key.link_id);
            }
            auto live = live_links(tx, ids);
            for (const auto& u : unflushed) {
                if (live.count(u.key.link_id) == 0 || flushed.count(u.bucket) != 0) continue;
                add(u.key.day, u.key.channel_view(), u.key.click_class, u.clicks);
            }
            if (!source.rollups) {
                for (const auto& row : tx.exec_params(
                         "SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(unique_estimate)::bigint "
                         "AS unique_estimate FROM refgate_uniques_daily WHERE day BETWEEN "
                         "$1::date AND $2::date GROUP BY 1",
                         domain::format_day(range.from), domain::format_day(range.to))) {
                    std::int32_t day = day_of(row["day"]);
                    if (day >= range.from && day <= range.to)
                        stats.days[static_cast<std::size_t>(day - range.from)].unique_estimate =
                            row["unique_estimate"].as<std::uint64_t>();
                }
            }
            read_recent_uniques(tx, live, recent, source.rollups);
        });
        add_recent_uniques(*buckets, recent, stats);
        return stats;
    }

  private:
    // The days whose unique estimates Redis may hold, and what PostgreSQL stores for them per
    // link (0: nothing), for each link that may have one.
    struct RecentUniques {
        std::int32_t from = 0;
        std::int32_t to = 0;
        std::map<std::int64_t, std::map<std::int32_t, std::uint64_t>> stored;
    };

    // Of `ids`, the links that exist.
    static std::set<std::int64_t> live_links(ReadTx& tx, const std::set<std::int64_t>& ids) {
        std::set<std::int64_t> live;
        if (ids.empty()) return live;
        for (const auto& row :
             tx.exec_params("SELECT id FROM refgate_links WHERE id = ANY($1::bigint[])",
                            pg::bigint_array(std::vector<std::int64_t>(ids.begin(), ids.end()))))
            live.insert(row["id"].as<std::int64_t>());
        return live;
    }

    // The links with clicks in the recent days (flushed, or `unflushed`), with their stored
    // estimates of those days.
    static void read_recent_uniques(ReadTx& tx, const std::set<std::int64_t>& unflushed,
                                    RecentUniques& recent, bool rollups) {
        if (recent.from > recent.to) return;
        for (std::int64_t id : unflushed) recent.stored[id];
        for (const auto& row : tx.exec_params(
                 std::string("SELECT DISTINCT c.link_id FROM ") +
                     (rollups ? "refgate_link_day_sums" : "refgate_clicks") +
                     " c JOIN refgate_links l ON l.id = c.link_id WHERE c.day BETWEEN $1::date "
                     "AND $2::date",
                 domain::format_day(recent.from), domain::format_day(recent.to)))
            recent.stored[row["link_id"].as<std::int64_t>()];
        for (const auto& row :
             tx.exec_params("SELECT link_id, to_char(day, 'YYYY-MM-DD') AS day, unique_estimate "
                            "FROM refgate_uniques WHERE day BETWEEN $1::date AND $2::date",
                            domain::format_day(recent.from), domain::format_day(recent.to))) {
            auto it = recent.stored.find(row["link_id"].as<std::int64_t>());
            if (it != recent.stored.end())
                it->second[day_of(row["day"])] = row["unique_estimate"].as<std::uint64_t>();
        }
    }

    // The overview's days from the roll-ups: classes per partner and day summed, the channels
    // (of the days the base table keeps) and the unique estimates summed per day.
    static void read_overview_rollups(ReadTx& tx, domain::LinkStats& stats) {
        const domain::DayRange& range = stats.range;
        auto day_at = [&](const pqxx::field& f) -> domain::LinkDay* {
            auto day = f.as<std::int32_t>();
            if (day < range.from || day > range.to) return nullptr;
            return &stats.days[static_cast<std::size_t>(day - range.from)];
        };
        std::string between = std::string(" BETWEEN ") + kDay + "$1::int AND " + kDay + "$2::int";
        for (const auto& row : tx.exec_params(
                 "SELECT day - DATE '1970-01-01' AS day, sum(human)::bigint AS human, "
                 "sum(bot)::bigint AS bot, sum(prefetch)::bigint AS prefetch, "
                 "sum(scanner)::bigint AS scanner FROM refgate_rollup_partner_days WHERE day" +
                     between + " GROUP BY 1",
                 range.from, range.to)) {
            if (domain::LinkDay* d = day_at(row["day"])) d->clicks.add(class_sums(row));
        }
        for (const auto& row :
             tx.exec_params("SELECT day - DATE '1970-01-01' AS day, channel, human FROM "
                            "refgate_rollup_channel_days WHERE human > 0 AND day" +
                                between,
                            range.from, range.to)) {
            if (domain::LinkDay* d = day_at(row["day"]))
                d->human_by_channel[row["channel"].c_str()] += row["human"].as<std::uint64_t>();
        }
        for (const auto& row :
             tx.exec_params("SELECT day - DATE '1970-01-01' AS day, unique_estimate FROM "
                            "refgate_rollup_unique_days WHERE day" +
                                between,
                            range.from, range.to)) {
            if (domain::LinkDay* d = day_at(row["day"]))
                d->unique_estimate = row["unique_estimate"].as<std::uint64_t>();
        }
    }

    // As link() does per link: a recent day's estimate in Redis replaces the stored one.
    static void add_recent_uniques(clicks::BucketStore& buckets, const RecentUniques& recent,
                                   domain::LinkStats& stats) {
        std::vector<std::int32_t> days;
        for (std::int32_t d = recent.from; d <= recent.to; ++d) days.push_back(d);
        if (days.empty()) return;
        std::vector<std::int64_t> links;
        for (const auto& entry : recent.stored) links.push_back(entry.first);
        auto all = redis_value(buckets.unique_estimates(links, days));
        std::size_t link = 0;
        for (const auto& [link_id, stored] : recent.stored) {
            const auto& estimates = all[link++];
            for (std::size_t i = 0; i < days.size(); ++i) {
                if (estimates[i] == 0) continue;
                auto it = stored.find(days[i]);
                auto& total = stats.days[static_cast<std::size_t>(days[i] - stats.range.from)]
                                  .unique_estimate;
                total = total - (it == stored.end() ? 0 : it->second) + estimates[i];
            }
        }
    }

    // Cached for kLiveCacheFor, computed under the lock: however many editors watch, an instance
    // asks Redis once in that time. PostgreSQL is read only for the slugs of links it has not
    // named before (the names kept up to kSlugsKeptFor).
    std::unordered_map<std::int64_t, std::uint64_t> human_totals(
        const std::vector<std::int64_t>& link_ids) override {
        std::unordered_map<std::int64_t, std::uint64_t> totals;
        if (link_ids.empty()) return totals;
        std::set<std::int64_t> wanted(link_ids.begin(), link_ids.end());
        auto buckets = open_buckets();
        // All days: the Redis counts first, then PostgreSQL's snapshot (read_unflushed()).
        auto unflushed =
            read_unflushed(*buckets, domain::DayRange{0, std::numeric_limits<int>::max()});
        std::erase_if(unflushed, [&](const Unflushed& u) {
            return u.key.click_class != static_cast<std::uint8_t>(domain::ClickClass::human) ||
                   !wanted.contains(u.key.link_id);
        });
        with_transaction([&](ReadTx& tx) {
            Source source = read_source(tx);
            // The roll-ups: the closed days' link days, the open days' base rows (sql/026).
            const char* sql =
                source.rollups
                    ? "SELECT link_id, sum(human)::bigint AS human FROM refgate_link_day_sums "
                      "WHERE link_id = ANY($1::bigint[]) GROUP BY link_id"
                    : "SELECT link_id, sum(human)::bigint AS human FROM refgate_click_counts "
                      "WHERE link_id = ANY($1::bigint[]) GROUP BY link_id";
            for (const auto& row : tx.exec_params(sql, pg::bigint_array(link_ids)))
                totals[row["link_id"].as<std::int64_t>()] += row["human"].as<std::uint64_t>();
            auto flushed = flushed_among(tx, unflushed);
            for (const auto& u : unflushed) {
                if (!flushed.contains(u.bucket)) totals[u.key.link_id] += u.clicks;
            }
        });
        return totals;
    }

    LiveStats live() override {
        std::lock_guard lock(live_mutex_);
        auto now = std::chrono::steady_clock::now();
        if (live_cache_ && now - live_at_ < kLiveCacheFor) return *live_cache_;
        if (!live_buckets_) live_buckets_ = open_buckets();
        auto counts = live_buckets_->live_counts();
        if (!counts) {
            live_buckets_.reset();
            throw StoreError("Redis: " + counts.fault().message);
        }
        if (now - slugs_at_ > kSlugsKeptFor) {
            slugs_.clear();
            slugs_at_ = now;
        }
        std::vector<std::int64_t> unknown;
        for (const auto& [id, clicks] : counts->human_by_link) {
            if (!slugs_.contains(id)) unknown.push_back(id);
        }
        if (!unknown.empty()) {
            with_transaction([&](ReadTx& tx) {
                for (const auto& row : tx.exec_params(
                         "SELECT id, slug FROM refgate_links WHERE id = ANY($1::bigint[])",
                         pg::bigint_array(unknown)))
                    slugs_[row["id"].as<std::int64_t>()] = row["slug"].c_str();
            });
            // A link deleted since is named by nothing: left out, and not asked for again soon.
            for (std::int64_t id : unknown) slugs_.try_emplace(id);
        }
        LiveStats live;
        live.as_of = counts->store_now;
        live.window_seconds = counts->window_seconds;
        live.today = counts->today;
        live.yesterday_same_hours = counts->yesterday_same_hours;
        for (const auto& [id, clicks] : counts->human_by_link) {
            const std::string& slug = slugs_[id];
            if (!slug.empty() && clicks > 0) live.links.push_back({slug, clicks});
        }
        std::sort(live.links.begin(), live.links.end(), [](const LiveLink& a, const LiveLink& b) {
            return a.human_clicks != b.human_clicks ? a.human_clicks > b.human_clicks
                                                    : a.link < b.link;
        });
        live_cache_ = live;
        live_at_ = now;
        return live;
    }

    std::unique_ptr<clicks::BucketStore> open_buckets() {
        return clicks::make_redis_bucket_store({options_.redis, kRedisTimeout});
    }

    template <typename T>
    static T redis_value(clicks::Result<T> result) {
        if (!result) throw StoreError("Redis: " + result.fault().message);
        return std::move(*result);
    }

    // Every count in the Redis buckets, read before PostgreSQL's snapshot is taken: a bucket
    // flushed meanwhile is then either recorded as flushed in that snapshot (and skipped), or not
    // yet committed, and its counts were still in Redis when they were read here. A bucket is read
    // as the flusher reads it, in short replies, so that a stats request never keeps Redis busy
    // for long; one flushed (and deleted) while it is read is recorded as flushed in the snapshot
    // taken afterwards, and skipped then.
    static std::vector<Unflushed> read_unflushed(clicks::BucketStore& buckets,
                                                 const domain::DayRange& range) {
        std::vector<Unflushed> out;
        for (std::int64_t id : redis_value(buckets.pending_buckets())) {
            for (const auto& [field, clicks] : redis_value(buckets.read_bucket(id))) {
                Unflushed u;
                u.bucket = id;
                u.clicks = clicks;
                if (!domain::CounterKey::parse_field(field, u.key) || u.key.is_targeting())
                    continue;
                if (u.key.day < range.from || u.key.day > range.to) continue;
                out.push_back(u);
            }
        }
        return out;
    }

    static std::set<std::int64_t> flushed_among(ReadTx& tx, const std::vector<Unflushed>& counts) {
        std::set<std::int64_t> buckets;
        for (const auto& u : counts) buckets.insert(u.bucket);
        std::set<std::int64_t> flushed;
        if (buckets.empty()) return flushed;
        for (const auto& row : tx.exec_params(
                 "SELECT bucket FROM refgate_flushed_buckets WHERE bucket = ANY($1::bigint[])",
                 pg::bigint_array(std::vector<std::int64_t>(buckets.begin(), buckets.end())))) {
            flushed.insert(row["bucket"].as<std::int64_t>());
        }
        return flushed;
    }

    // One read-only, repeatable-read transaction on a pooled connection.
    template <typename F>
    void with_transaction(F&& f) {
        try {
            pool_.run([&](pqxx::connection& conn) {
                ReadTx tx(conn);
                f(tx);
                tx.commit();
                return true;
            });
        } catch (const pqxx::failure& e) {
            throw_database_failure(e);
        } catch (const pg::PoolTimeout& e) {
            throw StoreError(e.what());
        }
    }

    const domain::Clock& clock() const {
        return options_.clock != nullptr ? *options_.clock : system_clock_;
    }

    static constexpr std::chrono::milliseconds kLiveCacheFor{1'000};
    static constexpr std::chrono::minutes kSlugsKeptFor{5};

    PgStatsStoreOptions options_;
    domain::SystemClock system_clock_;
    std::mutex live_mutex_;
    std::unique_ptr<clicks::BucketStore> live_buckets_;
    std::optional<LiveStats> live_cache_;
    std::chrono::steady_clock::time_point live_at_{};
    std::unordered_map<std::int64_t, std::string> slugs_;
    std::chrono::steady_clock::time_point slugs_at_{};
    pg::ConnectionPool pool_{pg::with_application_name(options_.database_url, "refgate-stats"),
                             {.max_idle = options_.max_idle_connections,
                              .max_open = options_.max_open_connections,
                              .wait = options_.connection_wait,
                              .server = pg::Server::any}};
};

}  // namespace

std::unique_ptr<StatsStore> make_pg_stats_store(PgStatsStoreOptions options) {
    return std::make_unique<PgStatsStore>(std::move(options));
}

}  // namespace refgate::admin
