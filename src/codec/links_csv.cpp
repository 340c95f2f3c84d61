#include "refgate/codec/links_csv.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "csv_reader.hpp"
#include "refgate/codec/stats_formats.hpp"
#include "refgate/domain/time.hpp"
#include "refgate/domain/utf8.hpp"

namespace refgate::codec {
namespace {

constexpr std::array<const char*, 7> kColumns{"slug",       "partner",  "destination",    "status",
                                              "expires_at", "fallback", "utm_passthrough"};

nlohmann::ordered_json link_of(const std::vector<std::string>& f) {
    nlohmann::ordered_json link = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < kColumns.size(); ++i) {
        if (f[i].empty()) continue;
        if (i + 1 == kColumns.size() && (f[i] == "true" || f[i] == "false")) {
            link[kColumns[i]] = f[i] == "true";
        } else {
            link[kColumns[i]] = f[i];  // anything else is the import's to refuse
        }
    }
    return link;
}

}  // namespace

LinksCsv parse_links_csv(std::string_view text) {
    LinksCsv csv;
    csv.document = {{"links", nlohmann::ordered_json::array()}};
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a spreadsheet's BOM
    CsvReader reader(text);
    auto header = reader.next();
    std::string expected(kLinksCsvHeader);
    if (!header || header->size() != kColumns.size() ||
        text.substr(0, expected.size()) != expected) {
        csv.problems.push_back({1, "the header must be " + expected});
        return csv;
    }
    while (!reader.done()) {
        std::size_t line = reader.line();
        auto fields = reader.next();
        if (!fields) {
            csv.problems.push_back({line, "a quoted field is not closed"});
            break;
        }
        if (fields->size() == 1 && fields->front().empty()) continue;  // a blank line
        if (fields->size() != kColumns.size()) {
            csv.problems.push_back(
                {line, "has " + std::to_string(fields->size()) + " fields; the header has 7"});
            continue;
        }
        // A spreadsheet may save in its own code page (Windows-1252 and the like).
        if (!std::all_of(fields->begin(), fields->end(),
                         [](const auto& f) { return domain::valid_utf8(f); })) {
            csv.problems.push_back({line, "is not UTF-8 text: save the file as \"CSV UTF-8\""});
            continue;
        }
        csv.document["links"].push_back(link_of(*fields));
        csv.lines.push_back(line);
    }
    return csv;
}

std::string links_to_csv(const std::vector<domain::Link>& links) {
    std::string out(kLinksCsvHeader);
    out.append("\r\n");
    for (const auto& l : links) {
        for (std::string_view value : {std::string_view(l.slug), std::string_view(l.partner),
                                       std::string_view(l.destination), to_string(l.status)}) {
            out.append(csv_field(value));
            out.push_back(',');
        }
        if (l.expires_at) out.append(domain::format_rfc3339(*l.expires_at));
        out.push_back(',');
        if (l.fallback) out.append(csv_field(*l.fallback));
        out.append(l.utm_passthrough ? ",true\r\n" : ",false\r\n");
    }
    return out;
}

}  // namespace refgate::codec
