#include "refgate/domain/stats_report.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <set>

#include "refgate/domain/counter_key.hpp"

namespace refgate {
namespace {

using Json = nlohmann::ordered_json;

Json counts_json(const ClassCounts& c, bool scanner) {
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
void append_counts(std::vector<std::string>& row, const ClassCounts& c, bool scanner) {
    for (auto n : {c.human, c.bot, c.prefetch}) row.push_back(std::to_string(n));
    if (scanner) row.push_back(std::to_string(c.scanner));
}

std::vector<std::string> counts_header(std::vector<std::string> leading, bool scanner) {
    for (const char* name : {"human", "bot", "prefetch"}) leading.emplace_back(name);
    if (scanner) leading.emplace_back("scanner");
    return leading;
}

std::string range_from(const DayRange& r) { return format_day(r.from); }
std::string range_to(const DayRange& r) { return format_day(r.to); }

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

using Named = std::pair<std::string, ClassCounts>;

Json breakdown_json(std::vector<Named> rows, const char* key, bool scanner) {
    Json out = Json::array();
    for (auto& [name, counts] : rows) {
        Json row = {{key, name}};
        row.update(counts_json(counts, scanner));
        out.push_back(std::move(row));
    }
    return out;
}

void add_breakdown(Json& j, const TargetingBreakdown& t, bool scanner) {
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

void TargetingBreakdown::add(const std::string& country, const std::string& rule,
                             std::uint8_t click_class, std::uint64_t n) {
    by_country[country].add(click_class, n);
    by_rule[rule].add(click_class, n);
}

std::optional<std::int32_t> parse_day(std::string_view text) {
    if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
    auto number = [&](std::size_t at, std::size_t length) -> std::optional<int> {
        int value = 0;
        for (std::size_t i = at; i < at + length; ++i) {
            if (text[i] < '0' || text[i] > '9') return std::nullopt;
            value = value * 10 + (text[i] - '0');
        }
        return value;
    };
    auto y = number(0, 4), m = number(5, 2), d = number(8, 2);
    if (!y || !m || !d) return std::nullopt;
    std::chrono::year_month_day date{std::chrono::year{*y},
                                     std::chrono::month{static_cast<unsigned>(*m)},
                                     std::chrono::day{static_cast<unsigned>(*d)}};
    if (!date.ok() || *y < 1970) return std::nullopt;
    return static_cast<std::int32_t>(std::chrono::sys_days(date).time_since_epoch().count());
}

MonthSpan whole_months(const DayRange& range) {
    using namespace std::chrono;
    auto month_start = [](std::int32_t day) {
        year_month_day date{sys_days{days{day}}};
        return static_cast<std::int32_t>(
            sys_days{date.year() / date.month() / 1}.time_since_epoch().count());
    };
    std::int32_t first = month_start(range.from);
    if (first < range.from) {
        year_month_day date{sys_days{days{first}}};
        first = static_cast<std::int32_t>(
            sys_days{(date.year() / date.month() + months{1}) / 1}.time_since_epoch().count());
    }
    std::int32_t end = month_start(range.to + 1);
    if (first >= end) return {range.to + 1, range.to + 1};
    return {first, end};
}

std::optional<DayRange> parse_range(const std::optional<std::string>& from,
                                    const std::optional<std::string>& to, std::int32_t today,
                                    std::vector<RangeProblem>& problems) {
    std::size_t before = problems.size();
    DayRange range{today - (kDefaultStatsDays - 1), today};
    if (to) {
        if (auto day = parse_day(*to)) {
            range.to = *day;
            range.from = *day - (kDefaultStatsDays - 1);
        } else {
            problems.push_back({"to", "must be a date written YYYY-MM-DD"});
        }
    }
    if (from) {
        if (auto day = parse_day(*from)) {
            range.from = *day;
        } else {
            problems.push_back({"from", "must be a date written YYYY-MM-DD"});
        }
    }
    if (problems.size() != before) return std::nullopt;
    if (range.from > range.to) {
        problems.push_back({"from", "must not be after to"});
        return std::nullopt;
    }
    if (range.to - range.from + 1 > kMaxStatsDays) {
        problems.push_back(
            {"to", "the range may span at most " + std::to_string(kMaxStatsDays) + " days"});
        return std::nullopt;
    }
    return range;
}

void ClassCounts::add(std::uint8_t click_class, std::uint64_t n) {
    switch (click_class) {
        case 0:
            human += n;
            break;
        case 1:
            bot += n;
            break;
        case 2:
            prefetch += n;
            break;
        case 3:
            scanner += n;
            break;
        default:
            break;
    }
}

void ClassCounts::add(const ClassCounts& other) {
    human += other.human;
    bot += other.bot;
    prefetch += other.prefetch;
    scanner += other.scanner;
}

void rank_top(std::vector<TopEntry>& entries, std::size_t limit) {
    std::sort(entries.begin(), entries.end(), [](const TopEntry& a, const TopEntry& b) {
        if (a.clicks.human != b.clicks.human) return a.clicks.human > b.clicks.human;
        return a.link < b.link;
    });
    if (entries.size() > limit) entries.resize(limit);
}

Json to_json(const LinkStats& s) {
    Json days = Json::array();
    ClassCounts total;
    std::map<std::string, std::uint64_t> channels;
    bool scanner = any_scanner(s.days, [](const LinkDay& d) { return d.clicks; });
    for (const auto& d : s.days) {
        Json day = {{"day", format_day(d.day)}};
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
    if (s.targeting) add_breakdown(j, *s.targeting, scanner);
    return j;
}

Json to_json(const PartnerStats& s) {
    Json days = Json::array();
    ClassCounts total;
    auto second = [](const auto& e) { return e.second; };
    bool scanner = any_scanner(s.days, second) || any_scanner(s.links, second);
    for (const auto& [day, counts] : s.days) {
        Json item = {{"day", format_day(day)}};
        item.update(counts_json(counts, scanner));
        days.push_back(std::move(item));
        total.add(counts);
    }
    Json links = Json::array();
    for (const auto& [link, counts] : s.links) {
        Json item = {{"link", link}};
        item.update(counts_json(counts, scanner));
        links.push_back(std::move(item));
    }
    return {{"partner", s.partner},      {"from", range_from(s.range)},
            {"to", range_to(s.range)},   {"days", std::move(days)},
            {"links", std::move(links)}, {"totals", counts_json(total, scanner)}};
}

Json top_to_json(const DayRange& range, const std::vector<TopEntry>& entries) {
    Json items = Json::array();
    bool scanner = any_scanner(entries, [](const TopEntry& e) { return e.clicks; });
    for (const auto& e : entries) {
        Json item = {{"link", e.link}, {"partner", e.partner}};
        item.update(counts_json(e.clicks, scanner));
        items.push_back(std::move(item));
    }
    return {{"from", range_from(range)}, {"to", range_to(range)}, {"items", std::move(items)}};
}

Json overview_to_json(const LinkStats& overview) {
    Json j = to_json(overview);
    j.erase("link");
    j.erase("partner");
    return j;
}

std::vector<TopEntry> top_partners(const std::vector<TopEntry>& links, std::size_t limit) {
    std::map<std::string, ClassCounts> sums;
    for (const auto& e : links) sums[e.partner].add(e.clicks);
    std::vector<TopEntry> partners;
    for (const auto& [partner, clicks] : sums) partners.push_back({partner, partner, clicks});
    rank_top(partners, limit);  // `link` holds the partner's slug: the tie-break
    return partners;
}

Json top_partners_to_json(const DayRange& range, const std::vector<TopEntry>& partners) {
    Json items = Json::array();
    bool scanner = any_scanner(partners, [](const TopEntry& e) { return e.clicks; });
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

std::string top_partners_to_csv(const std::vector<TopEntry>& partners) {
    std::string out;
    bool scanner = any_scanner(partners, [](const TopEntry& e) { return e.clicks; });
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

std::string to_csv(const LinkStats& s) {
    std::set<std::string> channels;
    for (const auto& d : s.days) {
        for (const auto& [channel, n] : d.human_by_channel) channels.insert(channel);
    }
    bool scanner = any_scanner(s.days, [](const LinkDay& d) { return d.clicks; });
    std::vector<std::string> header = counts_header({"day"}, scanner);
    header.emplace_back("unique_estimate");
    for (const auto& c : channels) header.push_back("human:" + c);
    std::string out;
    append_row(out, header);
    for (const auto& d : s.days) {
        std::vector<std::string> row = {format_day(d.day)};
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

std::string to_csv(const PartnerStats& s) {
    std::string out;
    bool scanner = any_scanner(s.days, [](const auto& e) { return e.second; });
    append_row(out, counts_header({"day"}, scanner));
    for (const auto& [day, c] : s.days) {
        std::vector<std::string> row = {format_day(day)};
        append_counts(row, c, scanner);
        append_row(out, row);
    }
    return out;
}

std::string top_to_csv(const std::vector<TopEntry>& entries) {
    std::string out;
    bool scanner = any_scanner(entries, [](const TopEntry& e) { return e.clicks; });
    append_row(out, counts_header({"rank", "link", "partner"}, scanner));
    std::size_t rank = 0;
    for (const auto& e : entries) {
        std::vector<std::string> row = {std::to_string(++rank), e.link, e.partner};
        append_counts(row, e.clicks, scanner);
        append_row(out, row);
    }
    return out;
}

}  // namespace refgate
