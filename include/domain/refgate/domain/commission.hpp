#pragma once

// Commissions (issue 43): what a network reports about an order that followed a click, and the
// one validation every way in (CSV, JSON, postback) runs. Only the fields named here exist: a
// report's other columns (a customer's e-mail, an address, an IP) are never read into a value.
// Pure values in, values out.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/domain/model.hpp"
#include "refgate/domain/time.hpp"

namespace refgate::domain {

enum class CommissionStatus { pending, approved, reversed, paid };

std::string_view to_string(CommissionStatus status) noexcept;
std::optional<CommissionStatus> parse_commission_status(std::string_view text) noexcept;

// An exact decimal amount: `units` of 10^-scale, never a floating-point number. "12.50" is
// {1250, 2}; the scale written is kept, so the text reads back as it came.
struct Amount {
    std::int64_t units = 0;
    int scale = 0;
    bool operator==(const Amount&) const = default;
};
constexpr int kMaxAmountScale = 6;
constexpr int kMaxAmountIntegerDigits = 12;
// Digits with an optional '.' and 1 to 6 digits after it; no sign, exponent, spaces or
// thousands separators; at most 12 digits before the point. nullopt otherwise.
std::optional<Amount> parse_amount(std::string_view text) noexcept;
std::string to_string(const Amount& amount);

// An active ISO 4217 currency code (three upper-case letters, from a fixed list).
bool valid_currency(std::string_view code) noexcept;

// The names of the fields, in the CSV header's order.
inline constexpr std::array<std::string_view, 7> kCommissionFields{
    "order_id", "subid", "tracking_id", "status", "amount", "currency", "occurred_at"};
inline constexpr std::string_view kCommissionsCsvHeader =
    "order_id,subid,tracking_id,status,amount,currency,occurred_at";
constexpr std::size_t kMaxOrderId = 128;
constexpr std::size_t kMaxTrackingId = 128;

// The fields as they came in (CSV cells, JSON strings, query parameters); absent and empty are
// the same.
struct CommissionFields {
    std::optional<std::string> order_id;
    std::optional<std::string> subid;
    std::optional<std::string> tracking_id;
    std::optional<std::string> status;
    std::optional<std::string> amount;
    std::optional<std::string> currency;
    std::optional<std::string> occurred_at;
    // The field of that name (one of kCommissionFields); null for any other name.
    std::optional<std::string>* field(std::string_view name) noexcept;
};

struct Commission {
    std::string order_id;
    std::string subid;        // a placement token; empty when tracking_id is given
    std::string tracking_id;  // a per-channel code; empty when subid is given
    CommissionStatus status = CommissionStatus::pending;
    Amount amount;
    std::string currency;
    SysSeconds occurred_at{};
    bool operator==(const Commission&) const = default;
};

struct CommissionProblem {
    std::string field;    // one of kCommissionFields
    std::string message;  // never repeats the value
};

struct CommissionCheck {
    std::optional<Commission> commission;  // set when `problems` is empty
    std::vector<CommissionProblem> problems;
};

// A commission's time: RFC 3339 (with "Z" or an offset, 'T' or a space between date and time),
// or the form Awin's transaction notifications and ShareASale's postback transDate write,
// "YYYY-MM-DD HH:MM:SS" (a 'T' for the space as well) without an offset, which is read as UTC.
// Leap seconds are refused. nullopt for anything else.
std::optional<SysSeconds> parse_commission_time(std::string_view text);

// The one validation: order_id 1-128 of [A-Za-z0-9_.:/#-], beginning with a letter or digit
// (so no spreadsheet formula); exactly one of subid (a placement token's characters) and
// tracking_id (1-128 of [A-Za-z0-9_.-]); status; amount; currency; occurred_at
// (parse_commission_time).
CommissionCheck check_commission(const CommissionFields& fields);

// Attribution: the link and channel a commission's subid or tracking_id names, recomputed from
// the partner's settings as the placements API does (nothing about tokens is stored).
//
// The link of an opaque token: the id it carries (whether that link exists is the caller's).
std::optional<std::int64_t> opaque_token_link(std::string_view token) noexcept;
// The link of a readable token among the partner's links' `slugs`: the index of the one whose
// readable prefix begins the token (the save paths keep prefixes from overlapping).
std::optional<std::size_t> readable_token_link(const Partner& partner, std::string_view token,
                                               std::span<const std::string> slugs);
// The channel among `channels` whose token for the link (`link_id`, `slug`) is `token`.
std::optional<std::string> token_channel(const Partner& partner, std::int64_t link_id,
                                         std::string_view slug, std::string_view token,
                                         std::span<const std::string> channels);
// The channel of a tracking id: the channel of the partner's channel_codes entry with that code,
// when the entry names one channel (a prefix pattern such as "nl-*" names no single one).
std::optional<std::string> tracking_id_channel(const Partner& partner,
                                               std::string_view tracking_id);

// How a stored commission changes when the same (partner, order_id) comes again.
enum class CommissionChange { created, updated, unchanged };

}  // namespace refgate::domain
