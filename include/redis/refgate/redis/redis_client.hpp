#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/redis/reply.hpp"
#include "refgate/redis/sentinel_url.hpp"

namespace refgate::redis {

struct RedisAddress {
    std::string host = "127.0.0.1";
    int port = 6379;
    int db = 0;
    std::string user;      // an ACL user; empty: AUTH with the password alone (or no AUTH)
    std::string password;  // empty: no AUTH
    // Not empty: host and port are not used; the master of master_name is asked of these
    // sentinels (in turn) at every connect.
    std::vector<SentinelHost> sentinels;
    std::string master_name;
    std::string sentinel_password;  // AUTH to the sentinels; empty: none

    bool via_sentinel() const { return !sentinels.empty(); }
};

// redis://[[user]:password@]host[:port][/db], user and password percent-decoded; or
// redis+sentinel://[user:password@]host1[:port],host2[:port]/<master-name>[/<db>].
std::optional<RedisAddress> parse_redis_url(const std::string& url);

// The generation of the master behind the sentinels: bumped by the SentinelWatcher when the
// sentinels switch the master. A connection made through sentinels at an older generation reports
// !ok(), so its owner reconnects (and re-resolves) before its next command.
std::uint64_t master_generation();
void note_master_switch();

// Redis could not be reached, or the connection broke: whether a command took effect is unknown.
class RedisError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

using Command = std::vector<std::string>;

// A blocking connection (hiredis). Never used on an I/O thread.
class RedisConnection {
  public:
    RedisConnection(const RedisAddress& address, std::chrono::milliseconds timeout);
    ~RedisConnection();
    RedisConnection(const RedisConnection&) = delete;
    RedisConnection& operator=(const RedisConnection&) = delete;

    // False also once the master it was resolved to is no longer the master (sentinels).
    bool ok() const;
    // Why the connection failed or broke; never holds the password.
    const std::string& error() const { return error_; }
    // Redis refused the credentials (or asked for some): a setting to fix, not an outage.
    bool auth_failed() const { return auth_failed_; }
    // PING; false when Redis did not answer PONG.
    bool ping();
    // One command; throws RedisError when the connection fails (and closes it).
    Reply command(const Command& args);
    // Sends every command, then reads every reply: one round trip.
    std::vector<Reply> pipeline(const std::vector<Command>& commands);
    // The same for `count` commands already written in the RESP format (refgate::RespWriter):
    // no argument vectors are built. `replies` is cleared and refilled, keeping its capacity.
    void pipeline_raw(std::string_view commands, std::size_t count, std::vector<Reply>& replies);
    // Every entry of the hash `key`, calling visit(field, value) straight from the replies (no
    // copies into Reply objects), read with HSCAN in replies of about `reply_bytes` (the COUNT
    // follows the entries' size as seen so far): neither Redis nor this thread spends more than
    // a short while on one reply, however large the hash. As with any SCAN, a field can be
    // visited twice (when Redis resizes the hash meanwhile).
    void hscan(std::string_view key, std::size_t reply_bytes,
               const std::function<void(std::string_view, std::string_view)>& visit);

  private:
    bool open_node(const RedisAddress& address, const std::string& host, int port,
                   std::chrono::milliseconds timeout);
    void open_via_sentinels(const RedisAddress& address, std::chrono::milliseconds timeout);
    // Empty when the server at the other end is a master; else what it says it is.
    std::string role_problem();
    // A reply that says the server is no master now (READONLY, MASTERDOWN, LOADING): the
    // connection is closed and a RedisError thrown, so the next command reconnects.
    void check_role_errors(const std::vector<Reply>& replies);
    bool authenticate(const RedisAddress& address);
    void report_auth_failure(const RedisAddress& address);
    // The one place a RedisError is built for a connection: not open, or broken now (its error
    // kept, the connection closed, so the next user reconnects).
    void require_connection() const;
    [[noreturn]] void fail();

    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::string error_;
    bool auth_failed_ = false;
    bool via_sentinel_ = false;
    std::uint64_t generation_ = 0;  // master_generation() when resolved (sentinels)
};

}  // namespace refgate::redis
