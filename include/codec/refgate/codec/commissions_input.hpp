#pragma once

// Commissions as editors and scripts send them (issue 43): CSV with the header
// kCommissionsCsvHeader, or JSON (an array of objects, or an object with "items"). Only the
// fields of kCommissionFields are read; any other column or member is dropped here, before
// anything is stored or logged. Checking the values is check_commission()'s.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/domain/commission.hpp"

namespace refgate::codec {

struct CommissionRow {
    std::size_t line =
        0;  // CSV: the line the record starts on (1 is the header); JSON: item, from 1
    domain::CommissionFields fields;
};

struct CommissionInputProblem {
    std::size_t line = 0;  // 0: the input as a whole
    std::string field;     // empty when the problem is the record's, not a field's
    std::string message;
};

struct CommissionsInput {
    std::vector<CommissionRow> rows;
    std::vector<CommissionInputProblem> problems;  // records that could not be read
};

// The header must name each of the seven fields once, in any order; other columns are dropped.
// A spreadsheet's BOM is skipped; blank lines are ignored; a record with the wrong number of
// cells, an unclosed quote or text that is not UTF-8 is a problem at its line.
CommissionsInput parse_commissions_csv(std::string_view text);

// An array of objects, or {"items": [...]}: each member of the seven must be a string (an amount
// as a JSON number would not be exact) or null; other members are dropped.
CommissionsInput parse_commissions_json(const nlohmann::json& document);

// The networks' own exports (issue 43's named formats), mapped onto the same seven fields; every
// other column or member is dropped unread, as above.
//
// Impact: its partner API's Actions, as CSV with a header naming the fields as the API does
// (Id, SubId1, State, Payout, Currency, EventDate; in any order, others dropped) or as JSON
// ({"Actions": [...]} or an array): order_id <- Id, subid <- SubId1, status <- State (PENDING,
// APPROVED, REVERSED), amount <- Payout, currency <- Currency, occurred_at <- EventDate.
CommissionsInput parse_impact_actions_csv(std::string_view text);
CommissionsInput parse_impact_actions_json(const nlohmann::json& document);
// Awin: the array its publisher API's transactions list answers (fetched with timezone=UTC,
// its default): order_id <- id, subid <- clickRefs.clickRef, status <- commissionStatus
// (declined and deleted are reversed; paidToPublisher true is paid), amount <-
// commissionAmount.amount (a number as JSON writes it, or a string), currency <-
// commissionAmount.currency, occurred_at <- transactionDate (without an offset: UTC).
CommissionsInput parse_awin_transactions_json(const nlohmann::json& document);

// The format of a commissions file: refgate's own (the seven fields), or a network's export.
enum class CommissionsFormat { refgate, impact, awin };
// "refgate" (or empty), "impact" or "awin"; nullopt for another name.
std::optional<CommissionsFormat> parse_commissions_format(std::string_view name) noexcept;
// A file of that format: CSV when `csv`, else JSON (text that is not JSON is a problem at line
// 0; Awin's transactions are JSON only).
CommissionsInput read_commissions(std::string_view text, CommissionsFormat format, bool csv);

// What recording commissions did (or, in a dry run, would do).
struct RecordedCommissions {
    std::size_t created = 0;
    std::size_t updated = 0;
    std::size_t unchanged = 0;
    std::size_t unattributed = 0;  // of those recorded, resolving to neither link nor channel
};

// The import's answer: {dry_run, applied, created, updated, unchanged, unattributed,
// refused: [{line, field, message}]}.
struct CommissionsReport {
    bool dry_run = false;
    bool applied = false;
    RecordedCommissions recorded;
    std::vector<CommissionInputProblem> refused;
};
nlohmann::ordered_json view_json(const CommissionsReport& report);

// A partner's new postback secret, shown once: {"secret": "..."}.
struct PostbackSecretView {
    std::string secret;
};
nlohmann::ordered_json view_json(const PostbackSecretView& view);

}  // namespace refgate::codec
