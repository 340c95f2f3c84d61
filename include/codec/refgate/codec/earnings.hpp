#pragma once

// The earnings answer (issue 43, GET /api/v1/stats/earnings): commissions per link, placement,
// partner or day next to the human clicks of the same days, and EPC per currency. Values in,
// JSON and CSV out; the figures come from the commission store.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/domain/stats_report.hpp"

namespace refgate::codec {

enum class EarningsGroup { link, placement, partner, day };
std::string_view to_string(EarningsGroup group) noexcept;
std::optional<EarningsGroup> parse_earnings_group(std::string_view text) noexcept;

// Commissions of one status in one currency: how many, and their amounts' exact sum (a decimal
// text, "0" for none).
struct StatusFigure {
    std::uint64_t count = 0;
    std::string amount = "0";
};

// One currency's commissions by status, and EPC: (pending + approved + paid) / human clicks,
// rounded to 4 decimal places (nullopt without human clicks).
struct CurrencyEarnings {
    StatusFigure pending;
    StatusFigure approved;
    StatusFigure reversed;
    StatusFigure paid;
    std::optional<std::string> epc;
    StatusFigure* of(std::string_view status) noexcept;  // null for another name
    const StatusFigure* of(std::string_view status) const noexcept;
};

// An item: its key (by group: link and partner; link, partner and placement; partner; day),
// its human clicks and its commissions per currency.
struct EarningsItem {
    std::string link;                      // group link and placement
    std::string partner;                   // group link, placement and partner
    std::optional<std::string> placement;  // group placement: the channel; nullopt: none named
    std::string day;                       // group day: "YYYY-MM-DD"
    std::uint64_t human_clicks = 0;
    std::map<std::string, CurrencyEarnings> currencies;
};

// ?link= and ?partner= of the earnings answer: one link's or one partner's commissions (by the
// partner that reported them) and human clicks (by the link's partner); both may be given.
struct EarningsFilter {
    std::optional<std::string> link;
    std::optional<std::string> partner;
};

struct EarningsReport {
    domain::DayRange range;
    EarningsGroup group = EarningsGroup::link;
    EarningsFilter filter;
    std::vector<EarningsItem> items;
    // Commissions of the range that name no existing link (an unknown subid, a tracking_id's
    // channel without a link, a deleted link), per currency; no clicks, no EPC.
    std::map<std::string, CurrencyEarnings> unattributed;
};

// {from, to, group, link?, partner? (the filter), items: [{link, partner, placement?, day?,
// human_clicks, conversions: {pending, approved, reversed, paid}, amount: {CUR: {pending, approved,
// reversed, paid}}, epc: {CUR: "0.1234"}}], unattributed: {conversions, amount}}. An item names the
// keys of its group only (a partner's item has no link, a day's neither link nor partner).
nlohmann::ordered_json view_json(const EarningsReport& report);
// One row per item and currency (an item without commissions: one row, currency empty), then
// the unattributed ones (link, partner, placement and day empty, human_clicks empty):
// link,partner,placement,day,human_clicks,currency,pending,approved,reversed,paid,
// pending_amount,approved_amount,reversed_amount,paid_amount,epc.
std::string earnings_csv(const EarningsReport& report);

// GET /api/v1/stats/earnings/attention?days=N: the links whose EPC fell to zero while their
// clicks went on. The window is the N full UTC days before today; a link is listed when it had
// human clicks on each of them, no commission that earns (pending, approved or paid) occurred in
// them, and one did before them.
inline constexpr int kDefaultEpcZeroDays = 7;
inline constexpr int kMaxEpcZeroDays = 90;

struct EpcZeroLink {
    std::string link;
    std::string partner;
    std::uint64_t human_clicks = 0;  // over the window
    std::string last_earning_day;    // "YYYY-MM-DD": the UTC day of its latest earning commission
};

struct EpcZeroReport {
    domain::DayRange range;  // the window
    int days = kDefaultEpcZeroDays;
    std::vector<EpcZeroLink> items;  // by link slug
};

// {days, from, to, items: [{link, partner, human_clicks, last_earning_day}]}.
nlohmann::ordered_json view_json(const EpcZeroReport& report);

}  // namespace refgate::codec
