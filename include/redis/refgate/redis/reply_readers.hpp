#pragma once

// Readers of the replies the Redis client itself interprets (HSCAN pages, the sentinels' answers,
// ROLE), over hiredis's reply tree (a redisReply): pure functions, fuzzed with replies that
// hiredis's own reader builds from raw bytes (tests/fuzz/fuzz_redis_replies.cpp). Each answers what
// was wrong with an unexpected reply instead of reading past it or misreading it; none throws.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "refgate/redis/reply.hpp"

// hiredis's reply (hiredis/hiredis.h): only its callers need hiredis's header.
struct redisReply;

namespace refgate::redis {

// A copy of hiredis's reply (a type hiredis 0.14 does not know becomes nil).
Reply copy_reply(const redisReply* r);

// What an unexpected reply said, for an error message: its text, "nil" or its type.
std::string reply_text(const redisReply* r);

struct MasterAddress {
    std::string host;
    int port = 0;
    std::string text() const { return host + ":" + std::to_string(port); }
};

// SENTINEL get-master-addr-by-name: [host, port]; nil when the sentinel knows no such master.
// The host is a non-empty name or address without blanks or controls, the port 1-65535.
std::variant<MasterAddress, std::string> read_master_address(const redisReply* r,
                                                             const std::string& master_name);

// ROLE: the role named first ("master", "slave", "sentinel"), nullopt when there is none.
std::optional<std::string> read_role(const redisReply* r);

// A "+switch-master" subscription message ("message", channel, "<name> <old ip> <old port> <new
// ip> <new port>"): the master's name and its new "ip:port"; false for anything else.
bool read_switch_message(const redisReply* r, std::string& name, std::string& to);

// One HSCAN reply: [cursor, [field, value, ...]]. The entries point into the reply.
struct HscanPage {
    std::string cursor;  // decimal digits; "0" when the scan is complete
    std::vector<std::pair<std::string_view, std::string_view>> entries;
};
std::variant<HscanPage, std::string> read_hscan_page(const redisReply* r);

}  // namespace refgate::redis
