#pragma once

// RAII owners of hiredis handles, and the small helpers the connection and the sentinel code
// share.

#include <hiredis/hiredis.h>

#include <chrono>
#include <memory>
#include <string>
#include <variant>

#include "refgate/redis/reply_readers.hpp"
#include "refgate/redis/sentinel_url.hpp"

namespace refgate::redis {

struct ContextDeleter {
    void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyDeleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextDeleter>;
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

timeval to_timeval(std::chrono::milliseconds ms);

// A connection to a server, its read/write timeout set; nullptr with `error` set when it failed.
ContextPtr connect_to(const std::string& host, int port, std::chrono::milliseconds timeout,
                      std::string& error);

// A connection to a sentinel, authenticated with `password` when there is one.
ContextPtr connect_sentinel(const SentinelHost& sentinel, const std::string& password,
                            std::chrono::milliseconds timeout, std::string& error);

// SENTINEL get-master-addr-by-name on one sentinel: the master, or what went wrong.
std::variant<MasterAddress, std::string> ask_master(redisContext* sentinel,
                                                    const std::string& master_name);

// Each sentinel at most this long: the next one is asked soon when one does not answer.
inline constexpr std::chrono::milliseconds kSentinelTimeout{500};

// The sentinel to ask first: the one that answered last time.
std::size_t preferred_sentinel();
void prefer_sentinel(std::size_t index);

}  // namespace refgate::redis
