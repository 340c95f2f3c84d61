#include "refgate/codec/earnings.hpp"

#include "refgate/codec/stats_formats.hpp"
#include "refgate/domain/counter_key.hpp"

namespace refgate::codec {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kStatuses[] = {"pending", "approved", "reversed", "paid"};

bool keyed_by_link(EarningsGroup g) {
    return g == EarningsGroup::link || g == EarningsGroup::placement;
}

// {conversions: {status: count}, amount: {CUR: {status: "sum"}}} over `currencies`.
void add_figures(Json& object, const std::map<std::string, CurrencyEarnings>& currencies) {
    Json conversions = Json::object();
    Json amount = Json::object();
    for (auto status : kStatuses) {
        std::uint64_t n = 0;
        for (auto& [code, c] : currencies) n += c.of(status)->count;
        conversions[std::string(status)] = n;
    }
    for (const auto& [code, c] : currencies) {
        Json sums = Json::object();
        for (auto status : kStatuses) sums[std::string(status)] = c.of(status)->amount;
        amount[code] = std::move(sums);
    }
    object["conversions"] = std::move(conversions);
    object["amount"] = std::move(amount);
}

}  // namespace

std::string_view to_string(EarningsGroup group) noexcept {
    switch (group) {
        case EarningsGroup::placement:
            return "placement";
        case EarningsGroup::partner:
            return "partner";
        case EarningsGroup::day:
            return "day";
        default:
            return "link";
    }
}

std::optional<EarningsGroup> parse_earnings_group(std::string_view text) noexcept {
    for (auto g : {EarningsGroup::link, EarningsGroup::placement, EarningsGroup::partner,
                   EarningsGroup::day}) {
        if (text == to_string(g)) return g;
    }
    return std::nullopt;
}

StatusFigure* CurrencyEarnings::of(std::string_view status) noexcept {
    if (status == "pending") return &pending;
    if (status == "approved") return &approved;
    if (status == "reversed") return &reversed;
    if (status == "paid") return &paid;
    return nullptr;
}

const StatusFigure* CurrencyEarnings::of(std::string_view status) const noexcept {
    return const_cast<CurrencyEarnings*>(this)->of(status);
}

Json view_json(const EarningsReport& report) {
    Json items = Json::array();
    for (const auto& item : report.items) {
        Json j = Json::object();
        if (keyed_by_link(report.group)) j["link"] = item.link;
        if (report.group != EarningsGroup::day) j["partner"] = item.partner;
        if (report.group == EarningsGroup::placement)
            j["placement"] = item.placement ? Json(*item.placement) : Json(nullptr);
        if (report.group == EarningsGroup::day) j["day"] = item.day;
        j["human_clicks"] = item.human_clicks;
        add_figures(j, item.currencies);
        Json epc = Json::object();
        for (const auto& [code, c] : item.currencies)
            epc[code] = c.epc ? Json(*c.epc) : Json(nullptr);
        j["epc"] = std::move(epc);
        items.push_back(std::move(j));
    }
    Json unattributed = Json::object();
    add_figures(unattributed, report.unattributed);
    Json answer = {{"from", domain::format_day(report.range.from)},
                   {"to", domain::format_day(report.range.to)},
                   {"group", to_string(report.group)}};
    if (report.filter.link) answer["link"] = *report.filter.link;
    if (report.filter.partner) answer["partner"] = *report.filter.partner;
    answer["items"] = std::move(items);
    answer["unattributed"] = std::move(unattributed);
    return answer;
}

Json view_json(const EpcZeroReport& report) {
    Json items = Json::array();
    for (const auto& item : report.items) {
        items.push_back({{"link", item.link},
                         {"partner", item.partner},
                         {"human_clicks", item.human_clicks},
                         {"last_earning_day", item.last_earning_day}});
    }
    return {{"days", report.days},
            {"from", domain::format_day(report.range.from)},
            {"to", domain::format_day(report.range.to)},
            {"items", std::move(items)}};
}

std::string earnings_csv(const EarningsReport& report) {
    std::string out =
        "link,partner,placement,day,human_clicks,currency,pending,approved,reversed,paid,"
        "pending_amount,approved_amount,reversed_amount,paid_amount,epc\r\n";
    auto row = [&](std::string_view keys, const std::string& clicks, const std::string& code,
                   const CurrencyEarnings* c) {
        out += keys;
        out += clicks + csv_field(code);
        for (auto status : kStatuses) {
            out += ',';
            if (c) out += std::to_string(c->of(status)->count);
        }
        for (auto status : kStatuses) {
            out += ',';
            if (c) out += c->of(status)->amount;
        }
        out += ',';
        if (c && c->epc) out += *c->epc;
        out += "\r\n";
    };
    for (const auto& item : report.items) {
        std::string keys = csv_field(item.link) + "," + csv_field(item.partner) + "," +
                           csv_field(item.placement.value_or("")) + "," + item.day + ",";
        std::string clicks = std::to_string(item.human_clicks) + ",";
        if (item.currencies.empty()) row(keys, clicks, "", nullptr);
        for (const auto& [code, c] : item.currencies) row(keys, clicks, code, &c);
    }
    for (const auto& [code, c] : report.unattributed) row(",,,,", ",", code, &c);
    return out;
}

}  // namespace refgate::codec
