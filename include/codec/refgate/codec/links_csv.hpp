#pragma once

// Links as CSV (RFC 4180) for editors' spreadsheets: one header, then a link per record. The
// import reads a CSV file into the import document's "links", so the JSON import's rules check
// every field.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/domain/model.hpp"

namespace refgate::codec {

// The one header the CSV carries, in this order.
inline constexpr std::string_view kLinksCsvHeader =
    "slug,partner,destination,status,expires_at,fallback,utm_passthrough";

struct CsvProblem {
    std::size_t line = 0;  // 1 is the header
    std::string message;
};

struct LinksCsv {
    nlohmann::ordered_json document;   // {"links": [...]}: empty cells left out
    std::vector<std::size_t> lines;    // the line each of document["links"] starts on
    std::vector<CsvProblem> problems;  // a wrong header or a broken record
};

// Quoted fields may hold commas, quotes ("") and line breaks; lines end in CRLF or LF. A record
// with the wrong number of fields, or an unterminated quote, is a problem at its line; the other
// records are still read.
LinksCsv parse_links_csv(std::string_view text);

// The header and a record per link, quoted where needed, lines ending in CRLF.
std::string links_to_csv(const std::vector<domain::Link>& links);

}  // namespace refgate::codec
