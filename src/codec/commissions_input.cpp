#include "refgate/codec/commissions_input.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "csv_reader.hpp"
#include "refgate/domain/utf8.hpp"

namespace refgate {
namespace {

constexpr std::size_t kNoColumn = static_cast<std::size_t>(-1);

}  // namespace

CommissionsInput parse_commissions_csv(std::string_view text) {
    CommissionsInput input;
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a spreadsheet's BOM
    CsvReader reader(text);
    auto header = reader.next();
    // The column of each field, in kCommissionFields' order.
    std::array<std::size_t, kCommissionFields.size()> column;
    column.fill(kNoColumn);
    bool header_ok = header.has_value();
    if (header) {
        for (std::size_t i = 0; i < header->size(); ++i) {
            auto known =
                std::find(kCommissionFields.begin(), kCommissionFields.end(), (*header)[i]);
            if (known == kCommissionFields.end()) continue;  // dropped: never read
            auto& slot = column[static_cast<std::size_t>(known - kCommissionFields.begin())];
            if (slot != kNoColumn) header_ok = false;
            slot = i;
        }
    }
    if (!header_ok || std::find(column.begin(), column.end(), kNoColumn) != column.end()) {
        input.problems.push_back({1, "",
                                  "the header must name each of " +
                                      std::string(kCommissionsCsvHeader) +
                                      " once (other columns are dropped)"});
        return input;
    }
    const std::size_t width = header->size();
    while (!reader.done()) {
        std::size_t line = reader.line();
        auto cells = reader.next();
        if (!cells) {
            input.problems.push_back({line, "", "a quoted field is not closed"});
            break;
        }
        if (cells->size() == 1 && cells->front().empty()) continue;  // a blank line
        if (cells->size() != width) {
            input.problems.push_back({line, "",
                                      "has " + std::to_string(cells->size()) +
                                          " fields; the header has " + std::to_string(width)});
            continue;
        }
        CommissionRow row{.line = line};
        bool utf8 = true;
        for (std::size_t f = 0; f < column.size(); ++f) {
            std::string& cell = (*cells)[column[f]];
            if (!valid_utf8(cell)) utf8 = false;
            if (!cell.empty()) *row.fields.field(kCommissionFields[f]) = std::move(cell);
        }
        if (!utf8) {
            input.problems.push_back(
                {line, "", "is not UTF-8 text: save the file as \"CSV UTF-8\""});
            continue;
        }
        input.rows.push_back(std::move(row));
    }
    return input;
}

CommissionsInput parse_commissions_json(const nlohmann::json& document) {
    CommissionsInput input;
    const nlohmann::json* items = &document;
    if (document.is_object()) {
        auto it = document.find("items");
        if (it == document.end()) {
            input.problems.push_back({0, "items", "is required: an array of commissions"});
            return input;
        }
        items = &*it;
    }
    if (!items->is_array()) {
        input.problems.push_back({0, "items", "must be an array of commissions"});
        return input;
    }
    std::size_t n = 0;
    for (const auto& item : *items) {
        ++n;
        if (!item.is_object()) {
            input.problems.push_back({n, "", "must be an object"});
            continue;
        }
        CommissionRow row{.line = n};
        bool ok = true;
        for (auto name : kCommissionFields) {
            auto it = item.find(std::string(name));
            if (it == item.end() || it->is_null()) continue;
            if (!it->is_string()) {
                input.problems.push_back(
                    {n, std::string(name),
                     name == "amount" ? "must be a string such as \"12.50\" (a JSON number is "
                                        "not exact)"
                                      : "must be a string"});
                ok = false;
                continue;
            }
            *row.fields.field(name) = it->get<std::string>();
        }
        if (ok) input.rows.push_back(std::move(row));
    }
    return input;
}

nlohmann::ordered_json view_json(const CommissionsReport& report) {
    auto refused = nlohmann::ordered_json::array();
    for (const auto& r : report.refused) {
        auto j = nlohmann::ordered_json::object();
        if (r.line != 0) j["line"] = r.line;
        j["field"] = r.field;
        j["message"] = r.message;
        refused.push_back(std::move(j));
    }
    return {{"dry_run", report.dry_run},
            {"applied", report.applied},
            {"created", report.recorded.created},
            {"updated", report.recorded.updated},
            {"unchanged", report.recorded.unchanged},
            {"unattributed", report.recorded.unattributed},
            {"refused", std::move(refused)}};
}

nlohmann::ordered_json view_json(const PostbackSecretView& view) {
    return {{"secret", view.secret}};
}

}  // namespace refgate
