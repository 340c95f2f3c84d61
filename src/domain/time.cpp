#include "refgate/domain/time.hpp"

#include <cstdio>

namespace refgate::domain {
namespace {

bool read_digits(std::string_view text, std::size_t pos, std::size_t count, int& out) {
    if (pos + count > text.size()) return false;
    int value = 0;
    for (std::size_t i = pos; i < pos + count; ++i) {
        char c = text[i];
        if (c < '0' || c > '9') return false;
        value = value * 10 + (c - '0');
    }
    out = value;
    return true;
}

}  // namespace

std::optional<SysSeconds> parse_rfc3339(std::string_view text) {
    using namespace std::chrono;
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    if (!read_digits(text, 0, 4, y) || text.size() < 20 || text[4] != '-' ||
        !read_digits(text, 5, 2, mo) || text[7] != '-' || !read_digits(text, 8, 2, d) ||
        (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || !read_digits(text, 11, 2, h) ||
        text[13] != ':' || !read_digits(text, 14, 2, mi) || text[16] != ':' ||
        !read_digits(text, 17, 2, s)) {
        return std::nullopt;
    }
    year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
    // RFC 3339 admits a leap second (second 60), but a time here is a count of seconds that has
    // none: "00:00:60" would be stored as 00:01:00, a time the writer never named. Refused.
    if (!ymd.ok() || h > 23 || mi > 59 || s > 59) return std::nullopt;
    std::size_t pos = 19;
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        std::size_t start = pos;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
        if (pos == start) return std::nullopt;
    }
    if (pos >= text.size()) return std::nullopt;
    int offset_minutes = 0;
    if (text[pos] == 'Z' || text[pos] == 'z') {
        ++pos;
    } else if (text[pos] == '+' || text[pos] == '-') {
        int oh = 0, om = 0;
        if (!read_digits(text, pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
            !read_digits(text, pos + 4, 2, om) || oh > 23 || om > 59) {
            return std::nullopt;
        }
        offset_minutes = (oh * 60 + om) * (text[pos] == '-' ? -1 : 1);
        pos += 6;
    } else {
        return std::nullopt;
    }
    if (pos != text.size()) return std::nullopt;
    SysSeconds t = sys_days{ymd} + hours{h} + minutes{mi} + seconds{s};
    return t - minutes{offset_minutes};
}

std::string format_rfc3339(SysSeconds t) {
    using namespace std::chrono;
    auto days = floor<std::chrono::days>(t);
    year_month_day ymd{days};
    hh_mm_ss hms{t - days};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                  static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                  static_cast<int>(hms.seconds().count()));
    return buf;
}

std::string format_rfc3339_millis(std::chrono::system_clock::time_point t) {
    using namespace std::chrono;
    auto secs = floor<seconds>(t);
    auto millis = duration_cast<milliseconds>(t - secs).count();
    std::string text = format_rfc3339(SysSeconds{secs.time_since_epoch()});
    char frac[8];
    std::snprintf(frac, sizeof frac, ".%03d", static_cast<int>(millis));
    text.insert(text.size() - 1, frac);
    return text;
}

void format_http_date(std::int64_t unix_seconds, char (&out)[29]) {
    using namespace std::chrono;
    static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    SysSeconds t{seconds{unix_seconds}};
    auto days = floor<std::chrono::days>(t);
    year_month_day ymd{days};
    weekday wd{days};
    hh_mm_ss hms{t - days};
    char buf[40];
    std::snprintf(buf, sizeof buf, "%s, %02u %s %04d %02d:%02d:%02d GMT", kDays[wd.c_encoding()],
                  static_cast<unsigned>(ymd.day()), kMonths[static_cast<unsigned>(ymd.month()) - 1],
                  static_cast<int>(ymd.year()), static_cast<int>(hms.hours().count()),
                  static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()));
    for (int i = 0; i < 29; ++i) out[i] = buf[i];
}

}  // namespace refgate::domain
