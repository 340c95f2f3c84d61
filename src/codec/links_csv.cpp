#include "refgate/codec/links_csv.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "refgate/codec/stats_formats.hpp"
#include "refgate/domain/time.hpp"
#include "refgate/domain/utf8.hpp"

namespace refgate {
namespace {

constexpr std::array<const char*, 7> kColumns{"slug",       "partner",  "destination",    "status",
                                              "expires_at", "fallback", "utm_passthrough"};

// Reads records one at a time, counting lines (a quoted line break is a line too).
class CsvReader {
  public:
    explicit CsvReader(std::string_view text) : text_(text) {}

    bool done() const { return pos_ >= text_.size(); }
    std::size_t line() const { return line_; }

    // The next record's fields; nullopt when a quote is not closed before the end.
    std::optional<std::vector<std::string>> next() {
        std::vector<std::string> fields(1);
        bool quoted = false;
        while (pos_ < text_.size()) {
            char c = text_[pos_++];
            if (quoted) {
                if (c == '"' && pos_ < text_.size() && text_[pos_] == '"') {
                    fields.back().push_back('"');
                    ++pos_;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    if (c == '\n') ++line_;
                    fields.back().push_back(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                fields.emplace_back();
            } else if (c == '\n' || (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n')) {
                if (c == '\r') ++pos_;
                ++line_;
                return fields;
            } else {
                fields.back().push_back(c);
            }
        }
        if (quoted) return std::nullopt;
        return fields;
    }

  private:
    std::string_view text_;
    std::size_t pos_ = 0;
    std::size_t line_ = 1;
};

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
                         [](const auto& f) { return valid_utf8(f); })) {
            csv.problems.push_back({line, "is not UTF-8 text: save the file as \"CSV UTF-8\""});
            continue;
        }
        csv.document["links"].push_back(link_of(*fields));
        csv.lines.push_back(line);
    }
    return csv;
}

std::string links_to_csv(const std::vector<Link>& links) {
    std::string out(kLinksCsvHeader);
    out.append("\r\n");
    for (const auto& l : links) {
        for (std::string_view value : {std::string_view(l.slug), std::string_view(l.partner),
                                       std::string_view(l.destination), to_string(l.status)}) {
            out.append(csv_field(value));
            out.push_back(',');
        }
        if (l.expires_at) out.append(format_rfc3339(*l.expires_at));
        out.push_back(',');
        if (l.fallback) out.append(csv_field(*l.fallback));
        out.append(l.utm_passthrough ? ",true\r\n" : ",false\r\n");
    }
    return out;
}

}  // namespace refgate
