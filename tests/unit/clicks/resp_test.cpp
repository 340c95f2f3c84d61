#include "refgate/clicks/resp.hpp"

#include <catch2/catch.hpp>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace resp_test {

using namespace refgate;

TEST_CASE("commands are written in Redis' wire format, arguments counted up front", "[resp]") {
    clicks::RespWriter out;
    out.command(3).arg("SET").arg("refgate:bucket:last").arg(std::int64_t{1'795'975'200});
    out.command(2).arg("PFADD").arg(std::uint64_t{18'446'744'073'709'551'615ULL});
    CHECK(out.commands() == 2);
    CHECK(out.data() ==
          "*3\r\n$3\r\nSET\r\n$19\r\nrefgate:bucket:last\r\n$10\r\n1795975200\r\n"
          "*2\r\n$5\r\nPFADD\r\n$20\r\n18446744073709551615\r\n");
}

TEST_CASE("an argument is sent as bytes: CR, LF and NUL inside it cannot split the command",
          "[resp]") {
    using namespace std::string_view_literals;
    clicks::RespWriter out;
    std::string value("a\r\n*1\r\n$4\r\nPING\r\n\0b"sv);
    REQUIRE(value.size() == 19);
    out.command(1).arg(value);
    CHECK(out.data() == "*1\r\n$19\r\n" + value + "\r\n");
    out.command(1).arg(std::int64_t{-5});
    CHECK(out.data().ends_with("*1\r\n$2\r\n-5\r\n"));
}

TEST_CASE("clearing the writer starts a new pipeline", "[resp]") {
    clicks::RespWriter out;
    out.command(1).arg("PING");
    out.clear();
    CHECK(out.empty());
    CHECK(out.data().empty());
    out.command(1).arg("PING");
    CHECK(out.data() == "*1\r\n$4\r\nPING\r\n");
    CHECK(out.commands() == 1);
}

}  // namespace resp_test
