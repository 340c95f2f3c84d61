#include "refgate/codec/stats_formats.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <set>

#include "refgate/domain/counter_key.hpp"

namespace refgate::codec {
namespace {

using Json = nlohmann::ordered_json;

Json counts_json(const domain::ClassCounts& c, bool scanner) {
    Json j = {{"human", c.human}, {"bot", c.bot}, {"prefetch", c.prefetch}};
    if (scanner) j["scanner"] = c.scanner;
    return j;
}

// Whether any of the counts has scanner clicks; `counts` maps an element to its ClassCounts.
template <typename Range, typename Counts>
bool any_scanner(const Range& range, Counts&& counts) {
    return std::any_of(range.begin(), range.end(),
                       [&](const auto& e) { return counts(e).scanner > 0; });
}

// The class columns of a CSV row: human, bot, prefetch (and scanner).
void append_counts(std::vector<std::string>& row, const domain::ClassCounts& c, bool scanner) {
    for (auto n : {c.human, c.bot, c.prefetch}) row.push_back(std::to_string(n));
    if (scanner) row.push_back(std::to_string(c.scanner));
}

std::vector<std::string> counts_header(std::vector<std::string> leading, bool scanner) {
    for (const char* name : {"human", "bot", "prefetch"}) leading.emplace_back(name);
    if (scanner) leading.emplace_back("scanner");
    return leading;
}

std::string range_from(const domain::DayRange& r) { return domain::format_day(r.from); }
std::string range_to(const domain::DayRange& r) { return domain::format_day(r.to); }

void append_row(std::string& out, const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) out.push_back(',');
        out += csv_field(fields[i]);
    }
    out += "\r\n";
}

// "4.2" -> (4, 2), "3" -> (3, 0): rule branches in the rules' order, not as text sorts them.
std::pair<int, int> rule_order(const std::string& rule) {
    int major = 0;
    int minor = 0;
    auto dot = rule.find('.');
    std::from_chars(rule.data(), rule.data() + (dot == std::string::npos ? rule.size() : dot),
                    major);
    if (dot != std::string::npos)
        std::from_chars(rule.data() + dot + 1, rule.data() + rule.size(), minor);
    return {major, minor};
}

using Named = std::pair<std::string, domain::ClassCounts>;

Json breakdown_json(std::vector<Named> rows, const char* key, bool scanner) {
    Json out = Json::array();
    for (auto& [name, counts] : rows) {
        Json row = {{key, name}};
        row.update(counts_json(counts, scanner));
        out.push_back(std::move(row));
    }
    return out;
}

void add_breakdown(Json& j, const domain::TargetingBreakdown& t, bool scanner) {
    std::vector<Named> countries(t.by_country.begin(), t.by_country.end());
    std::stable_sort(countries.begin(), countries.end(), [](const Named& a, const Named& b) {
        return a.second.human > b.second.human;
    });
    std::vector<Named> rules(t.by_rule.begin(), t.by_rule.end());
    std::stable_sort(rules.begin(), rules.end(), [](const Named& a, const Named& b) {
        return rule_order(a.first) < rule_order(b.first);
    });
    j["by_country"] = breakdown_json(std::move(countries), "country", scanner);
    j["by_rule"] = breakdown_json(std::move(rules), "rule", scanner);
}

}  // namespace

Json to_json(const domain::LinkStats& s) {
    Json days = Json::array();
    domain::ClassCounts total;
    std::map<std::string, std::uint64_t> channels;
    bool scanner = any_scanner(s.days, [](const domain::LinkDay& d) { return d.clicks; });
    for (const auto& d : s.days) {
        Json day = {{"day", domain::format_day(d.day)}};
        day.update(counts_json(d.clicks, scanner));
        day["unique_estimate"] = d.unique_estimate;
        day["human_by_channel"] = d.human_by_channel;
        days.push_back(std::move(day));
        total.add(d.clicks);
        for (const auto& [channel, n] : d.human_by_channel) channels[channel] += n;
    }
    Json totals = counts_json(total, scanner);
    totals["human_by_channel"] = channels;
    Json j = {{"link", s.link},          {"partner", s.partner},    {"from", range_from(s.range)},
              {"to", range_to(s.range)}, {"days", std::move(days)}, {"totals", std::move(totals)}};
    if (!s.domain.empty()) j["domain"] = s.domain;  // issue 46: absent on the default domain
    if (s.targeting) add_breakdown(j, *s.targeting, scanner);
    if (s.placements) {
        Json placements = Json::array();
        for (const auto& p : *s.placements) {
            placements.push_back(
                {{"channel", p.channel}, {"token", p.token}, {"human_clicks", p.human_clicks}});
        }
        j["placements"] = std::move(placements);
    }
    return j;
}

Json to_json(const domain::PartnerStats& s) {
    Json days = Json::array();
    domain::ClassCounts total;
    auto second = [](const auto& e) { return e.second; };
    bool scanner = any_scanner(s.days, second) ||
                   any_scanner(s.links, [](const domain::TopEntry& e) { return e.clicks; });
    for (const auto& [day, counts] : s.days) {
        Json item = {{"day", domain::format_day(day)}};
        item.update(counts_json(counts, scanner));
        days.push_back(std::move(item));
        total.add(counts);
    }
    Json links = Json::array();
    for (const auto& l : s.links) {
        Json item = {{"link", l.link}};
        if (!l.domain.empty()) item["domain"] = l.domain;  // issue 46
        item.update(counts_json(l.clicks, scanner));
        links.push_back(std::move(item));
    }
    return {{"partner", s.partner},      {"from", range_from(s.range)},
            {"to", range_to(s.range)},   {"days", std::move(days)},
            {"links", std::move(links)}, {"totals", counts_json(total, scanner)}};
}

Json top_to_json(const domain::DayRange& range, const std::vector<domain::TopEntry>& entries) {
    Json items = Json::array();
    bool scanner = any_scanner(entries, [](const domain::TopEntry& e) { return e.clicks; });
    for (const auto& e : entries) {
        Json item = {{"link", e.link}, {"partner", e.partner}};
        if (!e.domain.empty()) item["domain"] = e.domain;  // issue 46: absent on the default
        item.update(counts_json(e.clicks, scanner));
        items.push_back(std::move(item));
    }
    return {{"from", range_from(range)}, {"to", range_to(range)}, {"items", std::move(items)}};
}

Json overview_to_json(const domain::LinkStats& overview) {
    Json j = to_json(overview);
    j.erase("link");
    j.erase("partner");
    return j;
}

Json top_partners_to_json(const domain::DayRange& range,
                          const std::vector<domain::TopEntry>& partners) {
    Json items = Json::array();
    bool scanner = any_scanner(partners, [](const domain::TopEntry& e) { return e.clicks; });
    for (const auto& e : partners) {
        Json item = {{"partner", e.partner}};
        item.update(counts_json(e.clicks, scanner));
        items.push_back(std::move(item));
    }
    return {{"from", range_from(range)},
            {"to", range_to(range)},
            {"by", "partner"},
            {"items", std::move(items)}};
}

std::string top_partners_to_csv(const std::vector<domain::TopEntry>& partners) {
    std::string out;
    bool scanner = any_scanner(partners, [](const domain::TopEntry& e) { return e.clicks; });
    append_row(out, counts_header({"partner"}, scanner));
    for (const auto& e : partners) {
        std::vector<std::string> row = {e.partner};
        append_counts(row, e.clicks, scanner);
        append_row(out, row);
    }
    return out;
}

std::string csv_field(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
    return out;
}

std::string to_csv(const domain::LinkStats& s) {
    std::set<std::string> channels;
    for (const auto& d : s.days) {
        for (const auto& [channel, n] : d.human_by_channel) channels.insert(channel);
    }
    bool scanner = any_scanner(s.days, [](const domain::LinkDay& d) { return d.clicks; });
    std::vector<std::string> header = counts_header({"day"}, scanner);
    header.emplace_back("unique_estimate");
    for (const auto& c : channels) header.push_back("human:" + c);
    std::string out;
    append_row(out, header);
    for (const auto& d : s.days) {
        std::vector<std::string> row = {domain::format_day(d.day)};
        append_counts(row, d.clicks, scanner);
        row.push_back(std::to_string(d.unique_estimate));
        for (const auto& c : channels) {
            auto it = d.human_by_channel.find(c);
            row.push_back(std::to_string(it == d.human_by_channel.end() ? 0 : it->second));
        }
        append_row(out, row);
    }
    return out;
}

std::string to_csv(const domain::PartnerStats& s) {
    std::string out;
    bool scanner = any_scanner(s.days, [](const auto& e) { return e.second; });
    append_row(out, counts_header({"day"}, scanner));
    for (const auto& [day, c] : s.days) {
        std::vector<std::string> row = {domain::format_day(day)};
        append_counts(row, c, scanner);
        append_row(out, row);
    }
    return out;
}

std::string top_to_csv(const std::vector<domain::TopEntry>& entries) {
    std::string out;
    bool scanner = any_scanner(entries, [](const domain::TopEntry& e) { return e.clicks; });
    // `domain` last (issue 46), so that readers of the earlier columns keep working.
    auto header = counts_header({"rank", "link", "partner"}, scanner);
    header.emplace_back("domain");
    append_row(out, header);
    std::size_t rank = 0;
    for (const auto& e : entries) {
        std::vector<std::string> row = {std::to_string(++rank), e.link, e.partner};
        append_counts(row, e.clicks, scanner);
        row.push_back(e.domain);
        append_row(out, row);
    }
    return out;
}

}  // namespace refgate::codec
