// Asking sentinels for the master; the process-wide master generation.

#include <atomic>

#include "hiredis_handles.hpp"
#include "refgate/redis/redis_client.hpp"

namespace refgate::redis {
namespace {

// One process follows one master name: a single generation and a single preferred sentinel.
std::atomic<std::uint64_t> g_master_generation{0};
std::atomic<std::size_t> g_preferred_sentinel{0};

}  // namespace

std::uint64_t master_generation() { return g_master_generation.load(std::memory_order_acquire); }

void note_master_switch() { g_master_generation.fetch_add(1, std::memory_order_acq_rel); }

std::size_t preferred_sentinel() { return g_preferred_sentinel.load(std::memory_order_relaxed); }

void prefer_sentinel(std::size_t index) {
    g_preferred_sentinel.store(index, std::memory_order_relaxed);
}

timeval to_timeval(std::chrono::milliseconds ms) {
    return timeval{static_cast<time_t>(ms.count() / 1000),
                   static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

ContextPtr connect_to(const std::string& host, int port, std::chrono::milliseconds timeout,
                      std::string& error) {
    timeval tv = to_timeval(timeout);
    ContextPtr context(redisConnectWithTimeout(host.c_str(), port, tv));
    if (!context) {
        error = "cannot allocate a Redis context";
        return nullptr;
    }
    if (context->err) {
        error = context->errstr;
        return nullptr;
    }
    redisSetTimeout(context.get(), tv);
    return context;
}

ContextPtr connect_sentinel(const SentinelHost& sentinel, const std::string& password,
                            std::chrono::milliseconds timeout, std::string& error) {
    auto context = connect_to(sentinel.host, sentinel.port, timeout, error);
    if (!context || password.empty()) return context;
    const char* argv[] = {"AUTH", password.data()};
    std::size_t lengths[] = {4, password.size()};
    ReplyPtr reply(static_cast<redisReply*>(redisCommandArgv(context.get(), 2, argv, lengths)));
    if (reply && reply->type != REDIS_REPLY_ERROR) return context;
    // The error names no credential ("WRONGPASS invalid username-password pair").
    error = reply ? "sentinel AUTH: " + reply_text(reply.get()) : std::string(context->errstr);
    return nullptr;
}

std::variant<MasterAddress, std::string> ask_master(redisContext* sentinel,
                                                    const std::string& master_name) {
    const char* argv[] = {"SENTINEL", "get-master-addr-by-name", master_name.data()};
    std::size_t lengths[] = {8, 23, master_name.size()};
    ReplyPtr reply(static_cast<redisReply*>(redisCommandArgv(sentinel, 3, argv, lengths)));
    if (!reply) return std::string(sentinel->errstr);
    return read_master_address(reply.get(), master_name);
}

}  // namespace refgate::redis
