#pragma once

// How the stats API shows its figures: JSON and CSV (RFC 4180).

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/domain/stats_report.hpp"

namespace refgate::codec {

// Reports list `scanner` (a field after `prefetch`, a CSV column after it) only when some count
// of the report has scanner clicks, so that a report without any reads as it did before the class.
// A link's `targeting` becomes "by_country": [{country, human, bot, prefetch}] (most human clicks
// first, then by code) and "by_rule": [{rule, human, bot, prefetch}] (in the rules' order); the CSV
// form keeps the days only.
nlohmann::ordered_json to_json(const domain::LinkStats& stats);
nlohmann::ordered_json to_json(const domain::PartnerStats& stats);
nlohmann::ordered_json top_to_json(const domain::DayRange& range,
                                   const std::vector<domain::TopEntry>& entries);

// Every link together: {from, to, days: [{day, human, bot, prefetch, unique_estimate,
// human_by_channel}], totals}; as CSV like a link's.
nlohmann::ordered_json overview_to_json(const domain::LinkStats& overview);

// Partners as top_partners() ranks them. JSON: {from, to, by: "partner", items: [{partner, human,
// bot, prefetch}]}.
nlohmann::ordered_json top_partners_to_json(const domain::DayRange& range,
                                            const std::vector<domain::TopEntry>& partners);
std::string top_partners_to_csv(const std::vector<domain::TopEntry>& partners);

// CSV (RFC 4180: CRLF line ends, a header row, fields quoted when they need it).
std::string to_csv(const domain::LinkStats& stats);
std::string to_csv(const domain::PartnerStats& stats);
std::string top_to_csv(const std::vector<domain::TopEntry>& entries);
std::string csv_field(std::string_view text);

}  // namespace refgate::codec
