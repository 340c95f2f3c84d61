#include "refgate/clicks/reply_readers.hpp"

#include <hiredis/hiredis.h>

#include <catch2/catch.hpp>
#include <memory>

#include "refgate/domain/stats_report.hpp"
#include "refgate/redis/reply_readers.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace reply_readers_test {

using namespace refgate;
using redis::Reply;

struct FreeReply {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using RawReply = std::unique_ptr<redisReply, FreeReply>;

// The reply hiredis's own reader makes of `resp` (the bytes a server would send).
RawReply parse(std::string_view resp) {
    std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redisReaderCreate(),
                                                                redisReaderFree);
    REQUIRE(redisReaderFeed(reader.get(), resp.data(), resp.size()) == REDIS_OK);
    void* raw = nullptr;
    REQUIRE(redisReaderGetReply(reader.get(), &raw) == REDIS_OK);
    REQUIRE(raw != nullptr);
    return RawReply(static_cast<redisReply*>(raw));
}

Reply reply(std::string_view resp) { return redis::copy_reply(parse(resp).get()); }

template <typename T>
std::string problem(const clicks::ReplyRead<T>& read) {
    const auto* problem = std::get_if<clicks::ReplyProblem>(&read);
    return problem == nullptr ? std::string() : problem->what;
}

TEST_CASE("closed buckets are read as whole numbers, and a reply of any other shape is an error",
          "[clicks][redis]") {
    auto good =
        clicks::read_closed_buckets(reply("*3\r\n$10\r\n1795975260\r\n:1795975200\r\n"
                                          "$10\r\n1795975140\r\n"));
    REQUIRE(problem(good).empty());
    CHECK(std::get<clicks::ClosedBuckets>(good).store_now == 1'795'975'260);
    CHECK(std::get<clicks::ClosedBuckets>(good).ids ==
          std::vector<std::int64_t>{1'795'975'140, 1'795'975'200});
    for (const char* bad :
         {"*0\r\n", "$-1\r\n", ":5\r\n", "-ERR no script\r\n", "*2\r\n$2\r\n12\r\n$5\r\n12abc\r\n",
          "*2\r\n$2\r\n12\r\n$3\r\n012\r\n", "*2\r\n$2\r\n-0\r\n$1\r\n1\r\n",
          "*2\r\n$2\r\n12\r\n$3\r\n+12\r\n", "*2\r\n$2\r\n12\r\n$0\r\n\r\n",
          "*2\r\n$2\r\n12\r\n$-1\r\n", "*2\r\n$2\r\n12\r\n:-3\r\n",
          "*2\r\n$2\r\n12\r\n*1\r\n:1\r\n", "*2\r\n$2\r\n12\r\n$20\r\n99999999999999999999\r\n"}) {
        INFO(bad);
        CHECK_FALSE(problem(clicks::read_closed_buckets(reply(bad))).empty());
    }
}

TEST_CASE("pending bucket ids that are not whole non-negative numbers make the listing an error",
          "[clicks][redis]") {
    auto good = clicks::read_bucket_ids(reply("*2\r\n$2\r\n60\r\n$1\r\n0\r\n"));
    CHECK(std::get<std::vector<std::int64_t>>(good) == std::vector<std::int64_t>{60, 0});
    CHECK(problem(clicks::read_bucket_ids(reply("*1\r\n$3\r\n 60\r\n"))) ==
          "expected a bucket id, got ' 60'");
    CHECK_FALSE(problem(clicks::read_bucket_ids(reply("$2\r\n60\r\n"))).empty());
}

TEST_CASE("a daily salt is exactly 32 hex digits: signs, blanks and prefixes are refused",
          "[clicks][redis]") {
    auto good = clicks::read_salt(reply("$32\r\n00ff10Ab00000000000000000000000e\r\n"));
    REQUIRE(problem(good).empty());
    CHECK(std::get<clicks::SaltKey>(good)[1] == 0xff);
    CHECK(std::get<clicks::SaltKey>(good)[3] == 0xab);
    CHECK(std::get<clicks::SaltKey>(good)[15] == 0x0e);
    for (const char* bad : {"$32\r\n-1000000000000000000000000000000\r\n",
                            "$32\r\n 1000000000000000000000000000000\r\n",
                            "$32\r\n0x00000000000000000000000000000g\r\n",
                            "$31\r\n0000000000000000000000000000000\r\n", "$-1\r\n",
                            "+00000000000000000000000000000000\r\n"}) {
        INFO(bad);
        CHECK_FALSE(problem(clicks::read_salt(reply(bad))).empty());
    }
}

TEST_CASE("CONFIG GET is read only when it names the setting asked for", "[clicks][redis]") {
    auto good =
        clicks::read_config_value(reply("*2\r\n$10\r\nappendonly\r\n$3\r\nyes\r\n"), "appendonly");
    CHECK(std::get<std::string>(good) == "yes");
    CHECK_FALSE(problem(clicks::read_config_value(reply("*0\r\n"), "appendonly")).empty());
    CHECK_FALSE(
        problem(clicks::read_config_value(reply("*2\r\n$3\r\nfoo\r\n$3\r\nyes\r\n"), "appendonly"))
            .empty());
}

TEST_CASE("changed estimates skip members of another form and refuse a reply that is no list",
          "[clicks][redis]") {
    auto good = clicks::read_changed_members(
        reply("*4\r\n$13\r\n2026-11-29:42\r\n$15\r\n2026-11-29:42ab\r\n$13\r\n2026-11-29:-4\r\n"
              "$5\r\nhello\r\n"));
    REQUIRE(problem(good).empty());
    const auto& members = std::get<std::vector<clicks::UniqueEstimate>>(good);
    REQUIRE(members.size() == 1);
    CHECK(members[0].link_id == 42);
    CHECK(members[0].day == *domain::parse_day("2026-11-29"));
    CHECK_FALSE(problem(clicks::read_changed_members(reply("*1\r\n:7\r\n"))).empty());
    CHECK_FALSE(problem(clicks::read_changed_members(reply("-ERR wrong type\r\n"))).empty());
}

TEST_CASE("a count is a non-negative integer reply", "[clicks][redis]") {
    CHECK(std::get<std::uint64_t>(clicks::read_count(reply(":3\r\n"))) == 3);
    CHECK_FALSE(problem(clicks::read_count(reply(":-1\r\n"))).empty());
    CHECK_FALSE(problem(clicks::read_count(reply("$1\r\n3\r\n"))).empty());
}

TEST_CASE("an HSCAN page with a bad cursor, an odd entry or an entry that is no string is an error",
          "[clicks][redis]") {
    auto raw = parse("*2\r\n$2\r\n17\r\n*2\r\n$7\r\nbatch:1\r\n$4\r\nx 1\n\r\n");
    auto good = redis::read_hscan_page(raw.get());  // the entries point into `raw`
    REQUIRE(std::holds_alternative<redis::HscanPage>(good));
    const auto& page = std::get<redis::HscanPage>(good);
    CHECK(page.cursor == "17");
    REQUIRE(page.entries.size() == 1);
    CHECK(page.entries[0].first == "batch:1");
    for (const char* bad :
         {"*2\r\n$0\r\n\r\n*0\r\n", "*2\r\n$2\r\n-1\r\n*0\r\n",
          "*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n", "*2\r\n$1\r\n0\r\n*2\r\n:1\r\n:2\r\n",
          "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n*0\r\n", "*1\r\n$1\r\n0\r\n", "-ERR wrong type\r\n"}) {
        INFO(bad);
        CHECK(std::holds_alternative<std::string>(redis::read_hscan_page(parse(bad).get())));
    }
}

TEST_CASE("a sentinel's master address needs a plain host and a port 1-65535", "[clicks][redis]") {
    auto good = redis::read_master_address(parse("*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6380\r\n").get(),
                                           "mymaster");
    REQUIRE(std::holds_alternative<redis::MasterAddress>(good));
    CHECK(std::get<redis::MasterAddress>(good).text() == "127.0.0.1:6380");
    CHECK(std::get<std::string>(redis::read_master_address(parse("$-1\r\n").get(), "mymaster")) ==
          "no master named 'mymaster'");
    for (const char* bad : {"*2\r\n$9\r\n127.0.0.1\r\n$5\r\n70000\r\n",
                            "*2\r\n$9\r\n127.0.0.1\r\n$2\r\n+1\r\n", "*2\r\n$0\r\n\r\n$2\r\n80\r\n",
                            "*2\r\n$3\r\na b\r\n$2\r\n80\r\n", "*2\r\n$1\r\na\r\n:80\r\n"}) {
        INFO(bad);
        CHECK(std::holds_alternative<std::string>(
            redis::read_master_address(parse(bad).get(), "mymaster")));
    }
}

TEST_CASE("only a well-formed +switch-master message announces a new master", "[clicks][redis]") {
    std::string name, to;
    auto message = [](std::string_view payload) {
        return "*3\r\n$7\r\nmessage\r\n$14\r\n+switch-master\r\n$" +
               std::to_string(payload.size()) + "\r\n" + std::string(payload) + "\r\n";
    };
    CHECK(redis::read_switch_message(parse(message("m 10.0.0.1 6379 10.0.0.2 6380")).get(), name,
                                     to));
    CHECK(name == "m");
    CHECK(to == "10.0.0.2:6380");
    for (const char* bad : {"m 10.0.0.1 6379 10.0.0.2", "m 10.0.0.1 6379 10.0.0.2 6380 extra",
                            "m 10.0.0.1 6379 10.0.0.2 0", "m 10.0.0.1 6379  6380"}) {
        INFO(bad);
        CHECK_FALSE(redis::read_switch_message(parse(message(bad)).get(), name, to));
    }
    CHECK_FALSE(redis::read_switch_message(parse("*3\r\n:1\r\n:2\r\n:3\r\n").get(), name, to));
}

}  // namespace reply_readers_test
