#pragma once

// Moving in from another tool (issue 46): `refgate import --from <tool> FILE` reads the export of
// Pretty Links, ThirstyAffiliates, Shlink or YOURLS (tests/fixtures/import/README.md says where
// each format is documented), groups the destinations into partners by registrable domain, and
// writes an import document that the ordinary import validates and applies. A referral parameter
// the tool left in a URL (tag=, ref=, aff=, ...) is proposed as the partner's locked code and,
// with --lock-codes, moved out of the URLs into it. Click history is never read.

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/domain/public_suffix.hpp"

namespace refgate::codec {

enum class ExportTool { pretty_links, thirstyaffiliates, shlink, yourls };

// "prettylinks" (or "pretty-links"), "thirstyaffiliates", "shlink", "yourls".
std::optional<ExportTool> parse_export_tool(std::string_view name);
std::string_view export_tool_name(ExportTool tool);

// One link as the tool exported it.
struct ToolLink {
    std::size_t line = 0;     // the CSV line, or the JSON entry's number (1-based)
    std::string slug;         // as the tool spelled it ("go/Deal")
    std::string destination;  // the target URL
    std::string title;        // empty: none
};

struct ToolProblem {
    std::size_t line = 0;  // 0: the file as a whole
    std::string message;
};

struct ToolExport {
    std::vector<ToolLink> links;
    std::vector<ToolProblem> problems;
};

// Pretty Links, ThirstyAffiliates and Shlink: CSV with the tool's header (columns found by name,
// so the order may differ); YOURLS: the JSON of its API's `action=stats` answer. Visits, clicks
// and the creator's IP address the tools export are never read.
ToolExport read_tool_export(ExportTool tool, std::string_view text);

// --partner-map: a JSON object from registrable domain to a partner slug, or to an object with
// `slug` and optionally `name`, `ref_param` and `ref_code`.
struct PartnerChoice {
    std::string slug;
    std::string name;
    std::string ref_param;
    std::string ref_code;
};
using PartnerMap = std::map<std::string, PartnerChoice>;
// Problems name the domain; an empty list: the map is good.
PartnerMap parse_partner_map(const nlohmann::json& map, std::vector<std::string>& problems);

// The referral parameters looked for in destinations, in order of preference.
const std::vector<std::string>& referral_parameters();

// What the import would make of one partner's links.
struct PlannedPartner {
    std::string domain;  // registrable domain
    std::string slug;
    std::string name;
    bool from_map = false;  // named by --partner-map
    // The referral parameter found in its links' URLs, most common value first; empty: none.
    std::string found_param;
    std::string found_code;
    std::size_t links_with_code = 0;   // links whose URL carries found_param=found_code
    std::size_t links_other_code = 0;  // links whose URL carries found_param with another value
    std::string ref_param;             // what the partner gets (map, else found); empty: none
    std::string ref_code;
};

struct PlannedLink {
    std::size_t line = 0;
    std::string tool_slug;
    std::string slug;  // refgate's: lower case, [a-z0-9-]
    std::string partner;
    std::string destination;  // as imported (without the code with --lock-codes)
    bool code_moved = false;  // its referral parameter moved into the partner's code
};

struct ImportPlan {
    std::vector<PlannedPartner> partners;
    std::vector<PlannedLink> links;
    std::vector<ToolProblem> problems;  // links that cannot be imported, partners without code
    nlohmann::ordered_json document;    // {"partners": [...], "links": [...]}
};

struct PlanOptions {
    const domain::PublicSuffixList& suffixes;
    const PartnerMap& partner_map;
    bool lock_codes = false;
};

ImportPlan plan_tool_import(const ToolExport& input, const PlanOptions& options);

// The mapping as the dry run prints it: partners (domain, slug, proposed code), then links.
std::string plan_text(const ImportPlan& plan, ExportTool tool, bool lock_codes);

// `url` without every `param=...` pair of its query and its empty pairs (the '?' too when
// nothing is left).
std::string without_query_parameter(std::string_view url, std::string_view param);

}  // namespace refgate::codec
