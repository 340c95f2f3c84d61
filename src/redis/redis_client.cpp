#include "refgate/redis/redis_client.hpp"

#include <hiredis/hiredis.h>

#include <charconv>

#include "refgate/core/log.hpp"

namespace refgate::redis {
namespace {

struct ContextDeleter {
    void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyDeleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextDeleter>;
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

bool parse_int(std::string_view text, int& out, int min, int max) {
    int value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || ptr != text.data() + text.size() || value < min || value > max)
        return false;
    out = value;
    return true;
}

timeval to_timeval(std::chrono::milliseconds ms) {
    return timeval{static_cast<time_t>(ms.count() / 1000),
                   static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

}  // namespace

std::optional<RedisAddress> parse_redis_url(const std::string& url) {
    constexpr std::string_view kScheme = "redis://";
    if (url.rfind(kScheme, 0) != 0) return std::nullopt;
    std::string_view rest(url);
    rest.remove_prefix(kScheme.size());
    RedisAddress address;
    std::string_view hostport = rest.substr(0, rest.find('/'));
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        if (!parse_int(rest.substr(slash + 1), address.db, 0, 1024)) return std::nullopt;
    }
    if (auto colon = hostport.rfind(':'); colon != std::string_view::npos) {
        if (!parse_int(hostport.substr(colon + 1), address.port, 1, 65535)) return std::nullopt;
        hostport = hostport.substr(0, colon);
    }
    if (hostport.empty()) return std::nullopt;
    address.host = std::string(hostport);
    return address;
}

struct RedisConnection::Impl {
    ContextPtr context;
};

RedisConnection::RedisConnection(const RedisAddress& address, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
    timeval tv = to_timeval(timeout);
    impl_->context.reset(redisConnectWithTimeout(address.host.c_str(), address.port, tv));
    if (!impl_->context) {
        error_ = "cannot allocate a Redis context";
        return;
    }
    if (impl_->context->err) {
        error_ = impl_->context->errstr;
        impl_->context.reset();
        return;
    }
    redisSetTimeout(impl_->context.get(), tv);
    if (address.db != 0) {
        ReplyPtr reply(
            static_cast<redisReply*>(redisCommand(impl_->context.get(), "SELECT %d", address.db)));
        if (!reply || reply->type == REDIS_REPLY_ERROR) {
            error_ = reply ? reply->str : impl_->context->errstr;
            impl_->context.reset();
        }
    }
}

RedisConnection::~RedisConnection() = default;

bool RedisConnection::ok() const { return impl_->context != nullptr; }

bool RedisConnection::ping() {
    if (!ok()) return false;
    ReplyPtr reply(static_cast<redisReply*>(redisCommand(impl_->context.get(), "PING")));
    if (!reply) {
        error_ = impl_->context->errstr;
        impl_->context.reset();
        return false;
    }
    return reply->type == REDIS_REPLY_STATUS && std::string_view(reply->str, reply->len) == "PONG";
}

RedisHealthMonitor::RedisHealthMonitor(RedisAddress address, HealthState& health,
                                       std::chrono::milliseconds interval)
    : address_(std::move(address)), health_(health), interval_(interval) {}

RedisHealthMonitor::~RedisHealthMonitor() { stop(); }

void RedisHealthMonitor::start() {
    thread_ = std::thread([this] { run(); });
}

void RedisHealthMonitor::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void RedisHealthMonitor::run() {
    std::unique_ptr<RedisConnection> connection;
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        lock.unlock();
        if (!connection || !connection->ok()) {
            connection =
                std::make_unique<RedisConnection>(address_, std::chrono::milliseconds{500});
        }
        bool up = connection->ping();
        auto before = health_.redis.exchange(up ? DependencyState::up : DependencyState::down);
        if (!up && before != DependencyState::down) {
            log::warn("redis_unavailable", {{"error", connection->error()}});
        } else if (up && before == DependencyState::down) {
            log::info("redis_available");
        }
        lock.lock();
        wake_.wait_for(lock, interval_, [this] { return stopping_; });
    }
}

}  // namespace refgate::redis
