#include "refgate/redis/redis_client.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>

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

Reply copy_reply(const redisReply* r) {
    Reply out;
    switch (r->type) {
        case REDIS_REPLY_STATUS:
            out.type = Reply::Type::status;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ERROR:
            out.type = Reply::Type::error;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_INTEGER:
            out.type = Reply::Type::integer;
            out.integer = r->integer;
            break;
        case REDIS_REPLY_STRING:
            out.type = Reply::Type::string;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ARRAY:
            out.type = Reply::Type::array;
            for (std::size_t i = 0; i < r->elements; ++i)
                out.elements.push_back(copy_reply(r->element[i]));
            break;
        default:
            out.type = Reply::Type::nil;
    }
    return out;
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

Reply RedisConnection::command(const Command& args) { return pipeline({args}).front(); }

std::vector<Reply> RedisConnection::pipeline(const std::vector<Command>& commands) {
    if (!ok()) throw RedisError("not connected to Redis: " + error_);
    redisContext* c = impl_->context.get();
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const auto& command : commands) {
        argv.clear();
        lengths.clear();
        for (const auto& a : command) {
            argv.push_back(a.data());
            lengths.push_back(a.size());
        }
        if (redisAppendCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lengths.data()) !=
            REDIS_OK) {
            error_ = c->errstr;
            impl_->context.reset();
            throw RedisError("Redis: " + error_);
        }
    }
    std::vector<Reply> replies;
    replies.reserve(commands.size());
    for (std::size_t i = 0; i < commands.size(); ++i) {
        void* raw = nullptr;
        if (redisGetReply(c, &raw) != REDIS_OK || raw == nullptr) {
            error_ = c->errstr;
            impl_->context.reset();
            throw RedisError("Redis: " + error_);
        }
        ReplyPtr reply(static_cast<redisReply*>(raw));
        replies.push_back(copy_reply(reply.get()));
    }
    return replies;
}

void RedisConnection::pipeline_raw(std::string_view commands, std::size_t count,
                                   std::vector<Reply>& replies) {
    if (!ok()) throw RedisError("not connected to Redis: " + error_);
    redisContext* c = impl_->context.get();
    replies.clear();
    if (count == 0) return;
    if (redisAppendFormattedCommand(c, commands.data(), commands.size()) != REDIS_OK) {
        error_ = c->errstr;
        impl_->context.reset();
        throw RedisError("Redis: " + error_);
    }
    for (std::size_t i = 0; i < count; ++i) {
        void* raw = nullptr;
        if (redisGetReply(c, &raw) != REDIS_OK || raw == nullptr) {
            error_ = c->errstr;
            impl_->context.reset();
            throw RedisError("Redis: " + error_);
        }
        ReplyPtr reply(static_cast<redisReply*>(raw));
        replies.push_back(copy_reply(reply.get()));
    }
}

void RedisConnection::hscan(std::string_view key, std::size_t reply_bytes,
                            const std::function<void(std::string_view, std::string_view)>& visit) {
    if (!ok()) throw RedisError("not connected to Redis: " + error_);
    constexpr std::size_t kMaxCount = 10'000;
    std::size_t entries_seen = 0, bytes_seen = 0;
    std::string cursor = "0", count_text = "1";
    do {
        redisContext* c = impl_->context.get();
        const char* argv[] = {"HSCAN", key.data(), cursor.c_str(), "COUNT", count_text.c_str()};
        std::size_t lengths[] = {5, key.size(), cursor.size(), 5, count_text.size()};
        ReplyPtr reply(static_cast<redisReply*>(redisCommandArgv(c, 5, argv, lengths)));
        if (!reply) {
            error_ = c->errstr;
            impl_->context.reset();
            throw RedisError("Redis: " + error_);
        }
        if (reply->type == REDIS_REPLY_ERROR)
            throw RedisError("HSCAN: " + std::string(reply->str, reply->len));
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
            reply->element[0]->type != REDIS_REPLY_STRING ||
            reply->element[1]->type != REDIS_REPLY_ARRAY)
            throw RedisError("HSCAN: unexpected reply");
        cursor.assign(reply->element[0]->str, reply->element[0]->len);
        const redisReply* entries = reply->element[1];
        for (std::size_t i = 0; i + 1 < entries->elements; i += 2) {
            const redisReply* field = entries->element[i];
            const redisReply* value = entries->element[i + 1];
            visit({field->str, field->len}, {value->str, value->len});
            ++entries_seen;
            bytes_seen += field->len + value->len;
        }
        if (entries_seen > 0) {
            std::size_t per_entry = std::max<std::size_t>(1, bytes_seen / entries_seen);
            count_text =
                std::to_string(std::clamp<std::size_t>(reply_bytes / per_entry, 1, kMaxCount));
        }
    } while (cursor != "0");
}

}  // namespace refgate::redis
