#include "refgate/domain/counter_key.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>

#include "refgate/domain/ascii.hpp"
#include "refgate/domain/click_classifier.hpp"

namespace refgate::domain {
namespace {

constexpr std::string_view kDirect = kDirectChannel;

// The shared helper, not a copy: in the fuzz build's unity batch beside html.cpp, which declares
// the same name with `using`, clang refuses a second function of that name.
using ascii::is_digit;
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_separator(char c) { return c == '.' || c == '_' || c == '-'; }

bool all_hex(std::string_view piece) {
    for (char c : piece) {
        if (!is_hex(c)) return false;
    }
    return true;
}

// Hex pieces of 8, 4, 4, 4 and 12 characters joined by '-' from `at`.
bool uuid_at(std::string_view text, std::size_t at) {
    constexpr std::size_t kLengths[] = {8, 4, 4, 4, 12};
    for (std::size_t i = 0; i < 5; ++i) {
        if (at + kLengths[i] > text.size() || !all_hex(text.substr(at, kLengths[i]))) return false;
        at += kLengths[i];
        if (i < 4 && (at >= text.size() || text[at] != '-')) return false;
        ++at;
    }
    // The twelve end a piece.
    return at - 1 == text.size() || is_separator(text[at - 1]);
}

}  // namespace

bool looks_like_identifier(std::string_view value) {
    constexpr std::size_t kDigitRun = 10;
    constexpr std::size_t kMixedPiece = 16;
    constexpr std::size_t kLongPiece = 24;
    std::size_t digits = 0;
    std::size_t piece_start = 0;
    bool letters = false, numbers = false;
    for (std::size_t i = 0; i <= value.size(); ++i) {
        char c = i < value.size() ? value[i] : '.';
        if (c == '@' ||
            (c == '%' && i + 2 < value.size() && value[i + 1] == '4' && value[i + 2] == '0'))
            return true;
        digits = is_digit(c) ? digits + 1 : 0;
        if (digits >= kDigitRun) return true;
        if (!is_separator(c)) {
            letters = letters || is_letter(c);
            numbers = numbers || is_digit(c);
            continue;
        }
        std::size_t length = i - piece_start;
        if (length >= kLongPiece || (length >= kMixedPiece && letters && numbers)) return true;
        if (length == 8 && uuid_at(value, piece_start)) return true;
        piece_start = i + 1;
        letters = numbers = false;
    }
    return false;
}

bool valid_channel(std::string_view channel) {
    if (channel.empty() || channel.size() > kMaxChannelLength) return false;
    auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!alnum(channel.front())) return false;
    for (char c : channel) {
        if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
    }
    return true;
}

ChannelTag read_channel(std::string_view raw_query) {
    // The first src parameter decides; its raw form must already be a valid tag, so anything
    // percent-encoded is "direct" (unless it is an e-mail address: "other").
    std::size_t pos = 0;
    while (pos <= raw_query.size()) {
        auto amp = raw_query.find('&', pos);
        std::string_view param = raw_query.substr(
            pos, amp == std::string_view::npos ? std::string_view::npos : amp - pos);
        if (param.starts_with("src=")) {
            std::string_view value = param.substr(4);
            if (looks_like_identifier(value)) return {kOtherChannel, true};
            return {valid_channel(value) ? value : kDirect};
        }
        if (amp == std::string_view::npos) break;
        pos = amp + 1;
    }
    return {kDirect};
}

std::string_view channel_of(std::string_view raw_query) { return read_channel(raw_query).channel; }

bool counted_channel(std::string_view src) {
    return valid_channel(src) && !looks_like_identifier(src);
}

std::int32_t utc_day(std::int64_t unix_seconds) {
    auto days = unix_seconds / 86'400;
    if (unix_seconds < 0 && unix_seconds % 86'400 != 0) --days;
    return static_cast<std::int32_t>(days);
}

std::string format_day(std::int32_t day) {
    char buf[kDayLength];
    format_day(day, buf);
    return std::string(buf, sizeof buf);
}

void format_day(std::int32_t day, char (&out)[kDayLength]) {
    using namespace std::chrono;
    year_month_day ymd{sys_days{days{day}}};
    // Years outside 0000-9999 cannot occur for a click; they are clamped rather than overflow.
    int y = std::clamp(static_cast<int>(ymd.year()), 0, 9999);
    auto m = static_cast<unsigned>(ymd.month());
    auto d = static_cast<unsigned>(ymd.day());
    out[0] = static_cast<char>('0' + y / 1000);
    out[1] = static_cast<char>('0' + y / 100 % 10);
    out[2] = static_cast<char>('0' + y / 10 % 10);
    out[3] = static_cast<char>('0' + y % 10);
    out[4] = '-';
    out[5] = static_cast<char>('0' + m / 10);
    out[6] = static_cast<char>('0' + m % 10);
    out[7] = '-';
    out[8] = static_cast<char>('0' + d / 10);
    out[9] = static_cast<char>('0' + d % 10);
}

CounterKey::CounterKey(std::int64_t link, std::int32_t d, ClickClass cls, std::string_view ch)
    : link_id(link), day(d), click_class(static_cast<std::uint8_t>(cls)) {
    if (ch.size() > kMaxChannelLength) ch = kDirect;
    channel_length = static_cast<std::uint8_t>(ch.size());
    std::memcpy(channel.data(), ch.data(), ch.size());
}

CounterKey CounterKey::targeting(std::int64_t link, std::int32_t d, ClickClass cls,
                                 std::string_view country, unsigned rule, unsigned branch) {
    CounterKey key;
    key.link_id = link;
    key.day = d;
    key.click_class = static_cast<std::uint8_t>(cls);
    key.targeting_counter = true;
    key.target = TargetDimension{{'X', 'X'}, 0, 0};
    auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
    if (country.size() == 2 && upper(country[0]) && upper(country[1]))
        key.target.country = {country[0], country[1]};
    key.target.rule = static_cast<std::uint16_t>(std::min(rule, 999u));
    key.target.branch = static_cast<std::uint16_t>(std::min(branch, 999u));
    return key;
}

namespace {

// "@DE:0", "@XX:3", "@FR:4.2": a target in the field's channel place. Into `out` (at least 12
// bytes); returns the end.
char* write_target(const TargetDimension& t, char* out) {
    char* const end = out + 12;
    *out++ = '@';
    *out++ = t.country[0];
    *out++ = t.country[1];
    *out++ = ':';
    out = std::to_chars(out, end, t.rule).ptr;
    if (t.branch != 0) {
        *out++ = '.';
        out = std::to_chars(out, end, t.branch).ptr;
    }
    return out;
}

// The inverse of write_target, for exactly the form it writes.
bool parse_target(std::string_view tag, TargetDimension& out) {
    if (tag.size() < 5 || tag.size() > 12 || tag[0] != '@' || tag[3] != ':') return false;
    if (tag[1] < 'A' || tag[1] > 'Z' || tag[2] < 'A' || tag[2] > 'Z') return false;
    auto rest = tag.substr(4);
    auto dot = rest.find('.');
    auto number = [](std::string_view n, std::uint16_t& value) {
        if (n.empty() || n.size() > 3 || (n.size() > 1 && n[0] == '0')) return false;
        if (!std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return false;
        std::from_chars(n.data(), n.data() + n.size(), value);
        return true;
    };
    TargetDimension t{{tag[1], tag[2]}, 0, 0};
    if (dot == std::string_view::npos) {
        if (!number(rest, t.rule)) return false;
    } else if (!number(rest.substr(0, dot), t.rule) || !number(rest.substr(dot + 1), t.branch) ||
               t.branch == 0) {
        return false;
    }
    out = t;
    return true;
}

}  // namespace

std::string CounterKey::target_rule() const {
    char text[12];
    char* end = write_target(target, text);
    return std::string(text + 4, end);
}

std::string CounterKey::field() const {
    char buf[kMaxFieldLength];
    return std::string(buf, write_field(buf));
}

std::size_t CounterKey::write_field(char* out) const {
    char* p = std::to_chars(out, out + 20, link_id).ptr;
    *p++ = '|';
    char day_text[kDayLength];
    format_day(day, day_text);
    p = std::copy_n(day_text, kDayLength, p);
    *p++ = '|';
    if (targeting_counter) {
        p = write_target(target, p);
    } else {
        auto ch = channel_view();
        p = std::copy(ch.begin(), ch.end(), p);
    }
    *p++ = '|';
    auto cls = to_string(static_cast<ClickClass>(click_class));
    p = std::copy(cls.begin(), cls.end(), p);
    return static_cast<std::size_t>(p - out);
}

bool CounterKey::parse_field(std::string_view field, CounterKey& out) {
    auto a = field.find('|');
    auto b = a == std::string_view::npos ? a : field.find('|', a + 1);
    auto c = b == std::string_view::npos ? b : field.find('|', b + 1);
    if (c == std::string_view::npos) return false;
    std::int64_t link = 0;
    auto link_text = field.substr(0, a);
    // Only the form write_field() produces ("42", "-3"; not "042" or "42x"), so that one counter
    // is never read under two spellings.
    auto [link_end, link_ec] =
        std::from_chars(link_text.data(), link_text.data() + link_text.size(), link);
    if (link_ec != std::errc{} || link_end != link_text.data() + link_text.size()) return false;
    char canonical[20];
    auto canonical_end = std::to_chars(canonical, canonical + sizeof canonical, link).ptr;
    if (std::string_view(canonical, static_cast<std::size_t>(canonical_end - canonical)) !=
        link_text)
        return false;
    auto day_text = field.substr(a + 1, b - a - 1);
    // Unsigned: from_chars would read "-000" as a signed 0, a second spelling of year 0.
    unsigned y = 0, m = 0, d = 0;
    auto number = [&](std::size_t at, std::size_t length, auto& out) {
        const char* first = day_text.data() + at;
        auto [end, ec] = std::from_chars(first, first + length, out);
        return ec == std::errc{} && end == first + length;
    };
    if (day_text.size() != kDayLength || day_text[4] != '-' || day_text[7] != '-' ||
        !number(0, 4, y) || !number(5, 2, m) || !number(8, 2, d)) {
        return false;
    }
    using namespace std::chrono;
    year_month_day ymd{year{static_cast<int>(y)}, month{m}, std::chrono::day{d}};
    if (!ymd.ok()) return false;
    auto channel = field.substr(b + 1, c - b - 1);
    auto cls = field.substr(c + 1);
    auto parsed = parse_click_class(cls);
    if (!parsed) return false;
    auto day_number = static_cast<std::int32_t>(sys_days{ymd}.time_since_epoch().count());
    if (valid_channel(channel)) {
        out = CounterKey(link, day_number, *parsed, channel);
        return true;
    }
    TargetDimension target{};
    if (!parse_target(channel, target)) return false;
    out = CounterKey::targeting(link, day_number, *parsed, {}, target.rule, target.branch);
    out.target.country = target.country;
    return true;
}

}  // namespace refgate::domain
