#include "refgate/codec/commissions_input.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "csv_reader.hpp"
#include "refgate/domain/utf8.hpp"

namespace refgate::codec {
namespace {

constexpr std::size_t kNoColumn = static_cast<std::size_t>(-1);

// A format's name for each of kCommissionFields, in its order; empty: the format has none.
using FieldNames = std::array<std::string_view, domain::kCommissionFields.size()>;

// Impact's Action (its partner API's Actions list, and the CSV of it): Id, SubId1, State,
// Payout, Currency, EventDate. Its states are PENDING, APPROVED and REVERSED.
constexpr FieldNames kImpactNames{"Id", "SubId1", "", "State", "Payout", "Currency", "EventDate"};

std::string header_of(const FieldNames& names) {
    std::string out;
    for (auto name : names) {
        if (name.empty()) continue;
        if (!out.empty()) out += ',';
        out += name;
    }
    return out;
}

CommissionsInput parse_csv_with(std::string_view text, const FieldNames& names) {
    CommissionsInput input;
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a spreadsheet's BOM
    CsvReader reader(text);
    auto header = reader.next();
    // The column of each field, in kCommissionFields' order.
    std::array<std::size_t, domain::kCommissionFields.size()> column;
    column.fill(kNoColumn);
    bool header_ok = header.has_value();
    if (header) {
        for (std::size_t i = 0; i < header->size(); ++i) {
            auto known = std::find(names.begin(), names.end(), (*header)[i]);
            if ((*header)[i].empty() || known == names.end()) continue;  // dropped: never read
            auto& slot = column[static_cast<std::size_t>(known - names.begin())];
            if (slot != kNoColumn) header_ok = false;
            slot = i;
        }
    }
    bool complete = true;
    for (std::size_t f = 0; f < names.size(); ++f) {
        if (!names[f].empty() && column[f] == kNoColumn) complete = false;
    }
    if (!header_ok || !complete) {
        input.problems.push_back({1, "",
                                  "the header must name each of " + header_of(names) +
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
            if (column[f] == kNoColumn) continue;
            std::string& cell = (*cells)[column[f]];
            if (!domain::valid_utf8(cell)) utf8 = false;
            if (!cell.empty()) *row.fields.field(domain::kCommissionFields[f]) = std::move(cell);
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

// The array of `document`, or its member `key`; nullptr (with the problem) otherwise.
const nlohmann::json* items_of(const nlohmann::json& document, const std::string& key,
                               CommissionsInput& input) {
    const nlohmann::json* items = &document;
    if (document.is_object()) {
        auto it = document.find(key);
        if (it == document.end()) {
            input.problems.push_back({0, key, "is required: an array of commissions"});
            return nullptr;
        }
        items = &*it;
    }
    if (!items->is_array()) {
        input.problems.push_back({0, key, "must be an array of commissions"});
        return nullptr;
    }
    return items;
}

CommissionsInput parse_json_with(const nlohmann::json& document, const std::string& key,
                                 const FieldNames& names) {
    CommissionsInput input;
    const nlohmann::json* items = items_of(document, key, input);
    if (items == nullptr) return input;
    std::size_t n = 0;
    for (const auto& item : *items) {
        ++n;
        if (!item.is_object()) {
            input.problems.push_back({n, "", "must be an object"});
            continue;
        }
        CommissionRow row{.line = n};
        bool ok = true;
        for (std::size_t f = 0; f < names.size(); ++f) {
            if (names[f].empty()) continue;
            auto name = domain::kCommissionFields[f];
            auto it = item.find(std::string(names[f]));
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

// A JSON value as the text of a field: a string as it is, an integer or a decimal number as
// JSON writes it (the shortest text that reads back as the same number: 4.5, 1.64); nullopt for
// anything else, or a number written with an exponent.
std::optional<std::string> awin_text(const nlohmann::json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (!value.is_number()) return std::nullopt;
    std::string text = value.dump();
    if (text.find_first_of("eE") != std::string::npos) return std::nullopt;
    return text;
}

// Awin's commissionStatus (pending, approved, declined, deleted) and paidToPublisher as
// refgate's status; another value is passed on for the check to refuse.
std::string awin_status(const nlohmann::json& item, const std::string& status) {
    auto paid = item.find("paidToPublisher");
    if (paid != item.end() && paid->is_boolean() && paid->get<bool>()) return "paid";
    if (status == "declined" || status == "deleted") return "reversed";
    return status;
}

}  // namespace

CommissionsInput parse_commissions_csv(std::string_view text) {
    static constexpr FieldNames kNames{domain::kCommissionFields};
    return parse_csv_with(text, kNames);
}

CommissionsInput parse_commissions_json(const nlohmann::json& document) {
    static constexpr FieldNames kNames{domain::kCommissionFields};
    return parse_json_with(document, "items", kNames);
}

CommissionsInput parse_impact_actions_csv(std::string_view text) {
    return parse_csv_with(text, kImpactNames);
}

CommissionsInput parse_impact_actions_json(const nlohmann::json& document) {
    return parse_json_with(document, "Actions", kImpactNames);
}

CommissionsInput parse_awin_transactions_json(const nlohmann::json& document) {
    CommissionsInput input;
    if (!document.is_array()) {
        input.problems.push_back({0, "", "must be the array of transactions Awin's API answers"});
        return input;
    }
    const nlohmann::json* items = &document;
    std::size_t n = 0;
    for (const auto& item : *items) {
        ++n;
        if (!item.is_object()) {
            input.problems.push_back({n, "", "must be an object"});
            continue;
        }
        CommissionRow row{.line = n};
        bool ok = true;
        // The field of `name` from `value` (absent or null: not given).
        auto take = [&](std::string_view name, const nlohmann::json* value, const char* what) {
            if (value == nullptr || value->is_null()) return;
            auto text = awin_text(*value);
            if (!text) {
                input.problems.push_back({n, std::string(name), what});
                ok = false;
                return;
            }
            *row.fields.field(name) = std::move(*text);
        };
        auto member = [](const nlohmann::json& object, const char* name) -> const nlohmann::json* {
            if (!object.is_object()) return nullptr;
            auto it = object.find(name);
            return it == object.end() ? nullptr : &*it;
        };
        take("order_id", member(item, "id"), "id must be a number or a string");
        const auto* refs = member(item, "clickRefs");
        take("subid", refs ? member(*refs, "clickRef") : nullptr,
             "clickRefs.clickRef must be a string");
        const auto* commission = member(item, "commissionAmount");
        take("amount", commission ? member(*commission, "amount") : nullptr,
             "commissionAmount.amount must be a decimal number");
        take("currency", commission ? member(*commission, "currency") : nullptr,
             "commissionAmount.currency must be a string");
        take("occurred_at", member(item, "transactionDate"), "transactionDate must be a string");
        const auto* status = member(item, "commissionStatus");
        if (status != nullptr && status->is_string()) {
            row.fields.status = awin_status(item, status->get<std::string>());
        } else if (status != nullptr && !status->is_null()) {
            input.problems.push_back({n, "status", "commissionStatus must be a string"});
            ok = false;
        }
        if (ok) input.rows.push_back(std::move(row));
    }
    return input;
}

std::optional<CommissionsFormat> parse_commissions_format(std::string_view name) noexcept {
    if (name.empty() || name == "refgate") return CommissionsFormat::refgate;
    if (name == "impact") return CommissionsFormat::impact;
    if (name == "awin") return CommissionsFormat::awin;
    return std::nullopt;
}

CommissionsInput read_commissions(std::string_view text, CommissionsFormat format, bool csv) {
    if (csv) {
        if (format == CommissionsFormat::impact) return parse_impact_actions_csv(text);
        if (format == CommissionsFormat::refgate) return parse_commissions_csv(text);
        CommissionsInput input;
        input.problems.push_back({0, "", "Awin's transactions come as JSON, not CSV"});
        return input;
    }
    auto document = nlohmann::json::parse(text, nullptr, false);
    if (document.is_discarded()) {
        CommissionsInput input;
        input.problems.push_back({0, "", "is not valid JSON"});
        return input;
    }
    switch (format) {
        case CommissionsFormat::impact:
            return parse_impact_actions_json(document);
        case CommissionsFormat::awin:
            return parse_awin_transactions_json(document);
        default:
            return parse_commissions_json(document);
    }
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

}  // namespace refgate::codec
