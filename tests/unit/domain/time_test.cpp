#include "refgate/domain/time.hpp"

#include <catch2/catch.hpp>
#include <string>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace time_test {

namespace {

using namespace std::chrono;
using refgate::domain::parse_rfc3339;
using refgate::domain::SysSeconds;

std::int64_t unix_of(std::string_view text) {
    auto t = refgate::domain::parse_rfc3339(text);
    REQUIRE(t.has_value());
    return t->time_since_epoch().count();
}

std::string http_date(std::int64_t unix_seconds) {
    char out[29];
    refgate::domain::format_http_date(unix_seconds, out);
    return std::string(out, sizeof out);
}

}  // namespace

TEST_CASE("an RFC 3339 time in UTC parses to unix seconds", "[time]") {
    CHECK(unix_of("1970-01-01T00:00:00Z") == 0);
    CHECK(unix_of("1994-11-06T08:49:37Z") == 784111777);
    CHECK(unix_of("2026-11-29T16:00:00Z") == 1795968000);
    CHECK(unix_of("2026-11-29t16:00:00z") == 1795968000);
}

TEST_CASE("an offset is applied to reach UTC", "[time]") {
    CHECK(unix_of("2026-11-29T17:00:00+01:00") == unix_of("2026-11-29T16:00:00Z"));
    CHECK(unix_of("2026-11-29T10:30:00-05:30") == unix_of("2026-11-29T16:00:00Z"));
    CHECK(unix_of("2026-11-30T00:30:00+08:30") == unix_of("2026-11-29T16:00:00Z"));
    CHECK(unix_of("2026-11-29T16:00:00+00:00") == unix_of("2026-11-29T16:00:00Z"));
}

TEST_CASE("fractional seconds are truncated", "[time]") {
    CHECK(unix_of("2026-11-29T16:00:00.999Z") == unix_of("2026-11-29T16:00:00Z"));
    CHECK(unix_of("2026-11-29T16:00:00.123456789+01:00") == unix_of("2026-11-29T15:00:00Z"));
}

TEST_CASE("leap days exist only in leap years", "[time]") {
    CHECK(refgate::domain::parse_rfc3339("2024-02-29T00:00:00Z").has_value());
    CHECK_FALSE(refgate::domain::parse_rfc3339("2026-02-29T00:00:00Z").has_value());
}

TEST_CASE("invalid dates and times are refused", "[time]") {
    for (const char* text : {
             "2026-02-30T00:00:00Z",       // no such day
             "2026-13-01T00:00:00Z",       // no such month
             "2026-00-10T00:00:00Z",       // no such month
             "2026-11-31T00:00:00Z",       // November has 30 days
             "2026-11-29T24:00:00Z",       // no hour 24
             "2026-11-29T16:60:00Z",       // no minute 60
             "2099-01-01T00:00:60Z",       // no second 60: it would be read as 00:01:00
             "2016-12-31T23:59:60Z",       // a leap second: no count of seconds can hold it
             "2016-12-31T23:59:60.5Z",     // nor a fraction of one
             "2017-01-01T00:59:60+01:00",  // nor one in another offset
             "2026-11-29T16:00:00",        // no offset
             "2026-11-29T16:00:00+0100",   // offset without colon
             "2026-11-29T16:00:00+24:00",  // offset out of range
             "2026-11-29T16:00:00.Z",      // empty fraction
             "2026-11-29T16:00:00Zjunk",   // trailing text
             "2026-11-29 16:00Z",          // no seconds
             "2026-11-29",                 // date only
             "26-11-29T16:00:00Z",         // two-digit year
             "tomorrow",
             "",
         }) {
        INFO(text);
        CHECK_FALSE(refgate::domain::parse_rfc3339(text).has_value());
    }
}

TEST_CASE("formatted times parse back to the same second", "[time]") {
    for (std::int64_t s : {std::int64_t{0}, std::int64_t{784111777}, std::int64_t{1795968000},
                           std::int64_t{951782400} /* 2000-02-29 */,
                           std::int64_t{4102444799} /* 2099-12-31T23:59:59Z */}) {
        SysSeconds t{seconds{s}};
        std::string text = refgate::domain::format_rfc3339(t);
        INFO(text);
        auto back = refgate::domain::parse_rfc3339(text);
        REQUIRE(back.has_value());
        CHECK(*back == t);
    }
    CHECK(refgate::domain::format_rfc3339(SysSeconds{seconds{1795968000}}) ==
          "2026-11-29T16:00:00Z");
    CHECK(refgate::domain::format_rfc3339(SysSeconds{seconds{951782400}}) ==
          "2000-02-29T00:00:00Z");
}

TEST_CASE("millisecond times keep three digits of fraction", "[time]") {
    system_clock::time_point t{milliseconds{1795968000'042}};
    CHECK(refgate::domain::format_rfc3339_millis(t) == "2026-11-29T16:00:00.042Z");
    CHECK(unix_of(refgate::domain::format_rfc3339_millis(t)) == 1795968000);
}

TEST_CASE("the http date is an IMF-fixdate in GMT", "[time]") {
    CHECK(http_date(784111777) == "Sun, 06 Nov 1994 08:49:37 GMT");
    CHECK(http_date(0) == "Thu, 01 Jan 1970 00:00:00 GMT");
    CHECK(http_date(1795968000) == "Sun, 29 Nov 2026 16:00:00 GMT");
    CHECK(http_date(951868799) == "Tue, 29 Feb 2000 23:59:59 GMT");
}

}  // namespace time_test
