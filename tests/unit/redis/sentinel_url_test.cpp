#include "refgate/redis/sentinel_url.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <variant>

namespace sentinel_url_test {

refgate::redis::SentinelUrl good(const std::string& url) {
    INFO(url);
    auto parsed = refgate::redis::parse_sentinel_url(url);
    if (auto* error = std::get_if<std::string>(&parsed)) FAIL(*error);
    return std::get<refgate::redis::SentinelUrl>(parsed);
}

std::string bad(const std::string& url) {
    INFO(url);
    auto parsed = refgate::redis::parse_sentinel_url(url);
    REQUIRE(std::holds_alternative<std::string>(parsed));
    return std::get<std::string>(parsed);
}

}  // namespace sentinel_url_test

using sentinel_url_test::bad;
using sentinel_url_test::good;

TEST_CASE("a sentinel URL names every sentinel, the master name, the database and the credentials",
          "[sentinel]") {
    auto url = good("redis+sentinel://counter:p%40ss@s1.example:26380,10.0.0.2,[::1]:26381/main/3");
    REQUIRE(url.sentinels.size() == 3);
    CHECK(url.sentinels[0].host == "s1.example");
    CHECK(url.sentinels[0].port == 26380);
    CHECK(url.sentinels[1].host == "10.0.0.2");
    CHECK(url.sentinels[1].port == 26379);
    CHECK(url.sentinels[2].host == "::1");
    CHECK(url.sentinels[2].port == 26381);
    CHECK(url.master_name == "main");
    CHECK(url.db == 3);
    CHECK(url.user == "counter");
    CHECK(url.password == "p@ss");
}

TEST_CASE("a sentinel URL without credentials or database uses database 0 and no AUTH",
          "[sentinel]") {
    auto url = good("redis+sentinel://127.0.0.1:26379/mymaster");
    CHECK(url.sentinels.size() == 1);
    CHECK(url.master_name == "mymaster");
    CHECK(url.db == 0);
    CHECK(url.user.empty());
    CHECK(url.password.empty());
    CHECK(good("redis+sentinel://:secret@h/m").password == "secret");
}

TEST_CASE("a bad sentinel URL is refused with the part at fault named, never the password",
          "[sentinel]") {
    CHECK(bad("redis://h:26379/m").find("redis+sentinel://") != std::string::npos);
    CHECK(bad("redis+sentinel://h1,h2").find("master name") != std::string::npos);
    CHECK(bad("redis+sentinel://h1,h2/").find("master name") != std::string::npos);
    CHECK(bad("redis+sentinel:///m").find("no sentinel host") != std::string::npos);
    CHECK(bad("redis+sentinel://h1,,h2/m").find("without a host") != std::string::npos);
    CHECK(bad("redis+sentinel://h1:0/m").find("bad port") != std::string::npos);
    CHECK(bad("redis+sentinel://h1:99999/m").find("bad port") != std::string::npos);
    CHECK(bad("redis+sentinel://h1:/m").find("empty port") != std::string::npos);
    CHECK(bad("redis+sentinel://h1/m/1025").find("database") != std::string::npos);
    CHECK(bad("redis+sentinel://h1/m/x").find("database") != std::string::npos);
    CHECK(bad("redis+sentinel://h1/m?x=1").find("query") != std::string::npos);
    CHECK(bad("redis+sentinel://[::1/m").find("unclosed") != std::string::npos);
    CHECK(bad("redis+sentinel://h\x01/m").find("bad host") != std::string::npos);
    auto no_colon = bad("redis+sentinel://hunter2@h1/m");
    CHECK(no_colon.find("user:password") != std::string::npos);
    CHECK(no_colon.find("hunter2") == std::string::npos);
}
