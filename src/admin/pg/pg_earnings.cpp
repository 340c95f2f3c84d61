#include "pg_earnings.hpp"

#include <map>
#include <tuple>

#include "refgate/domain/counter_key.hpp"

namespace refgate::admin {
namespace {

// Every group's rows carry its key as three texts, k1, k2 and k3 (empty where the group has no
// such part; k3, a placement's channel, may be NULL: a commission whose token named no channel).
struct GroupSql {
    const char* commission_keys;  // over c (commission), l (its link), lp (the link's partner),
                                  // cp (the commission's partner), day
    const char* click_keys;       // over s (click rows), l (their link), p (its partner)
};

GroupSql group_sql(codec::EarningsGroup group) {
    switch (group) {
        case codec::EarningsGroup::placement:
            return {"l.slug, lp.slug, c.channel", "l.slug, p.slug, s.channel"};
        case codec::EarningsGroup::partner:
            return {"''::text, cp.slug, ''::text", "''::text, p.slug, ''::text"};
        case codec::EarningsGroup::day:
            return {"to_char(c.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), ''::text, ''::text",
                    "to_char(s.day, 'YYYY-MM-DD'), ''::text, ''::text"};
        default:
            return {"l.slug, lp.slug, ''::text", "l.slug, p.slug, ''::text"};
    }
}

// The commissions of the range: occurred_at within [from 00:00 UTC, to + 1 day 00:00 UTC), of
// the filter's link ($3) and partner ($4, the one that reported them) when given.
constexpr const char* kCommissionsInRange =
    "FROM refgate_commissions c JOIN refgate_partners cp ON cp.id = c.partner_id "
    "LEFT JOIN refgate_links l ON l.id = c.link_id "
    "LEFT JOIN refgate_partners lp ON lp.id = l.partner_id "
    "WHERE c.occurred_at >= $1::date::timestamp AT TIME ZONE 'UTC' "
    "AND c.occurred_at < ($2::date + 1)::timestamp AT TIME ZONE 'UTC' "
    "AND ($3::text IS NULL OR l.slug = $3::text) AND ($4::text IS NULL OR cp.slug = $4::text)";

std::string clicks_sql(codec::EarningsGroup group, bool rollups) {
    // A placement is a link's channel: only the base table keeps clicks per channel. The roll-ups'
    // link days: the closed days', and the open days' from the base table (sql/026).
    const char* source = group == codec::EarningsGroup::placement || !rollups
                             ? "refgate_click_counts"
                             : "refgate_link_day_sums";
    return std::string("SELECT ") + group_sql(group).click_keys +
           ", sum(s.human)::bigint AS human FROM " + source +
           " s JOIN refgate_links l ON l.id = s.link_id JOIN refgate_partners p ON p.id = "
           "l.partner_id WHERE s.day BETWEEN $1::date AND $2::date AND ($3::text IS NULL OR "
           "l.slug = $3::text) AND ($4::text IS NULL OR p.slug = $4::text) GROUP BY 1, 2, 3";
}

using Key = std::tuple<std::string, std::string, std::optional<std::string>>;

Key key_of(const pqxx::row& row) {
    std::optional<std::string> k3;
    if (!row["k3"].is_null()) k3 = row["k3"].as<std::string>();
    return {row["k1"].as<std::string>(), row["k2"].as<std::string>(), std::move(k3)};
}

void add_status(std::map<std::string, codec::CurrencyEarnings>& currencies, const pqxx::row& row) {
    auto& c = currencies[row["currency"].as<std::string>()];
    codec::StatusFigure* figure = c.of(row["status"].c_str());
    if (figure == nullptr) return;  // the table's CHECK allows no other
    figure->count = row["n"].as<std::uint64_t>();
    figure->amount = row["amount"].as<std::string>();
    if (!row["epc"].is_null()) c.epc = row["epc"].as<std::string>();
}

}  // namespace

std::optional<codec::EarningsReport> read_earnings(pqxx::transaction_base& tx,
                                                   const domain::DayRange& range,
                                                   codec::EarningsGroup group,
                                                   const codec::EarningsFilter& filter) {
    const auto& [link, partner] = filter;
    if (link && tx.exec_params("SELECT 1 FROM refgate_links WHERE slug = $1", *link).empty())
        return std::nullopt;
    if (partner &&
        tx.exec_params("SELECT 1 FROM refgate_partners WHERE slug = $1", *partner).empty())
        return std::nullopt;
    codec::EarningsReport report{.range = range, .group = group, .filter = filter};
    std::string from = domain::format_day(range.from);
    std::string to = domain::format_day(range.to);
    bool rollups = tx.exec("SELECT complete FROM refgate_rollup_state")[0]["complete"].as<bool>();
    std::string clicks = clicks_sql(group, rollups);
    const GroupSql keys = group_sql(group);

    std::map<Key, codec::EarningsItem> items;
    for (const auto& row : tx.exec_params(
             "SELECT k1, k2, k3, human FROM (" + clicks + ") t(k1, k2, k3, human) WHERE human > 0",
             from, to, link, partner)) {
        auto& item = items[key_of(row)];
        item.human_clicks = row["human"].as<std::uint64_t>();
    }
    // Per key, currency and status: how many and their sum; EPC per key and currency, the
    // non-reversed sum over the key's human clicks.
    std::string sql =
        "WITH clicks AS (" + clicks +
        "), agg AS (SELECT k1, k2, k3, currency, status, count(*)::bigint AS n, sum(amount) AS "
        "amount FROM (SELECT " +
        keys.commission_keys + ", c.currency, c.status, c.amount " + kCommissionsInRange +
        " AND l.id IS NOT NULL) x(k1, k2, k3, currency, status, amount) GROUP BY 1, 2, 3, 4, 5) "
        "SELECT a.k1, a.k2, a.k3, a.currency, a.status, a.n, a.amount::text AS amount, "
        "round(sum(CASE WHEN a.status <> 'reversed' THEN a.amount ELSE 0 END) OVER (PARTITION "
        "BY a.k1, a.k2, a.k3, a.currency) / NULLIF(k.human, 0), 4)::text AS epc FROM agg a "
        "LEFT JOIN clicks k(k1, k2, k3, human) ON k.k1 = a.k1 AND k.k2 = a.k2 AND k.k3 IS NOT "
        "DISTINCT FROM a.k3";
    for (const auto& row : tx.exec_params(sql, from, to, link, partner))
        add_status(items[key_of(row)].currencies, row);

    for (const auto& row :
         tx.exec_params(std::string("SELECT c.currency, c.status, count(*)::bigint AS n, "
                                    "sum(c.amount)::text AS amount, NULL::text AS epc ") +
                            kCommissionsInRange + " AND l.id IS NULL GROUP BY 1, 2",
                        from, to, link, partner))
        add_status(report.unattributed, row);

    for (auto& [key, item] : items) {
        auto& [k1, k2, k3] = key;
        switch (group) {
            case codec::EarningsGroup::day:
                item.day = k1;
                break;
            case codec::EarningsGroup::partner:
                item.partner = k2;
                break;
            default:
                item.link = k1;
                item.partner = k2;
                if (group == codec::EarningsGroup::placement) item.placement = k3;
        }
        report.items.push_back(std::move(item));
    }
    return report;
}

std::vector<codec::EpcZeroLink> read_epc_zero_links(pqxx::transaction_base& tx,
                                                    const domain::DayRange& range) {
    bool rollups = tx.exec("SELECT complete FROM refgate_rollup_state")[0]["complete"].as<bool>();
    const char* source = rollups ? "refgate_link_day_sums" : "refgate_click_counts";
    // A commission earns unless reversed; the window is [from 00:00 UTC, to + 1 day 00:00 UTC).
    std::string sql =
        std::string(
            "WITH clicks AS (SELECT s.link_id, sum(s.human)::bigint AS human, count(DISTINCT "
            "s.day) FILTER (WHERE s.human > 0) AS days FROM ") +
        source +
        " s WHERE s.day BETWEEN $1::date AND $2::date GROUP BY s.link_id) SELECT l.slug AS link, "
        "p.slug AS partner, k.human, (SELECT to_char(max(c.occurred_at) AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD') FROM refgate_commissions c WHERE c.link_id = l.id AND c.status <> "
        "'reversed' AND c.occurred_at < $1::date::timestamp AT TIME ZONE 'UTC') AS last_day "
        "FROM clicks k JOIN refgate_links l ON l.id = k.link_id JOIN refgate_partners p ON p.id "
        "= l.partner_id WHERE k.days = ($2::date - $1::date + 1) AND NOT EXISTS (SELECT 1 FROM "
        "refgate_commissions c WHERE c.link_id = l.id AND c.status <> 'reversed' AND "
        "c.occurred_at >= $1::date::timestamp AT TIME ZONE 'UTC' AND c.occurred_at < ($2::date "
        "+ 1)::timestamp AT TIME ZONE 'UTC') ORDER BY l.slug";
    std::vector<codec::EpcZeroLink> links;
    for (const auto& row :
         tx.exec_params(sql, domain::format_day(range.from), domain::format_day(range.to))) {
        if (row["last_day"].is_null()) continue;  // never earned: nothing fell
        links.push_back({.link = row["link"].as<std::string>(),
                         .partner = row["partner"].as<std::string>(),
                         .human_clicks = row["human"].as<std::uint64_t>(),
                         .last_earning_day = row["last_day"].as<std::string>()});
    }
    return links;
}

}  // namespace refgate::admin
