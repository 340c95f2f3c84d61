#include "refgate/redis/redis_client.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <atomic>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <charconv>
#include <variant>

#include "hiredis_handles.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::redis {
namespace {

constexpr std::chrono::seconds kAuthLogInterval{10};

bool parse_int(std::string_view text, int& out, int min, int max) {
    int value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || ptr != text.data() + text.size() || value < min || value > max)
        return false;
    out = value;
    return true;
}

// Errors that say the server is no master (now): a replica (READONLY, also inside a script's
// error), a replica cut off from its master (MASTERDOWN), or a server loading its data (LOADING).
bool role_error(const Reply& r) {
    if (!r.is_error()) return false;
    for (std::string_view code : {"READONLY", "MASTERDOWN", "LOADING"}) {
        if (r.str.starts_with(code)) return true;
    }
    return r.str.find("READONLY You can't write") != std::string::npos;
}

std::optional<RedisAddress> parse_sentinel_address(const std::string& url) {
    auto parsed = parse_sentinel_url(url);
    auto* sentinel = std::get_if<SentinelUrl>(&parsed);
    if (sentinel == nullptr) return std::nullopt;
    RedisAddress address;
    address.sentinels = sentinel->sentinels;
    address.master_name = sentinel->master_name;
    address.db = sentinel->db;
    address.user = sentinel->user;
    address.password = sentinel->password;
    return address;
}

}  // namespace

std::optional<RedisAddress> parse_redis_url(const std::string& url) {
    if (url.starts_with(kSentinelScheme)) return parse_sentinel_address(url);
    auto parsed = boost::urls::parse_uri(url);
    if (!parsed || parsed->scheme() != "redis" || parsed->has_query() || parsed->has_fragment())
        return std::nullopt;
    RedisAddress address;
    address.host = parsed->host_address();
    if (address.host.empty()) return std::nullopt;
    if (parsed->has_port() && !parse_int(parsed->port(), address.port, 1, 65535))
        return std::nullopt;
    std::string path = parsed->path();
    if (!path.empty() && path != "/" && !parse_int(path.substr(1), address.db, 0, 1024))
        return std::nullopt;
    if (parsed->has_password()) {
        address.user = parsed->user();
        address.password = parsed->password();
    }
    return address;
}

struct RedisConnection::Impl {
    ContextPtr context;
};

RedisConnection::RedisConnection(const RedisAddress& address, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
    if (address.via_sentinel()) {
        open_via_sentinels(address, timeout);
    } else {
        open_node(address, address.host, address.port, timeout);
    }
}

bool RedisConnection::open_node(const RedisAddress& address, const std::string& host, int port,
                                std::chrono::milliseconds timeout) {
    impl_->context = connect_to(host, port, timeout, error_);
    if (!impl_->context) return false;
    if (!address.password.empty() && !authenticate(address)) return false;
    if (address.db == 0) return true;
    ReplyPtr reply(
        static_cast<redisReply*>(redisCommand(impl_->context.get(), "SELECT %d", address.db)));
    if (reply && reply->type != REDIS_REPLY_ERROR) return true;
    error_ = reply ? reply->str : impl_->context->errstr;
    // Without AUTH a server that wants a password answers NOAUTH.
    if (reply && error_.rfind("NOAUTH", 0) == 0) report_auth_failure(address);
    impl_->context.reset();
    return false;
}

// Each sentinel in turn, the one that answered last time first, until one names a server that
// says it is the master.
void RedisConnection::open_via_sentinels(const RedisAddress& address,
                                         std::chrono::milliseconds timeout) {
    via_sentinel_ = true;
    // Taken before asking: a switch announced meanwhile makes this connection stale at once.
    generation_ = master_generation();
    std::string said;
    std::size_t count = address.sentinels.size(), first = preferred_sentinel() % count;
    for (std::size_t i = 0; i < count; ++i) {
        std::size_t index = (first + i) % count;
        const SentinelHost& s = address.sentinels[index];
        std::string problem;
        auto sentinel = connect_sentinel(s, address.sentinel_password,
                                         std::min(timeout, kSentinelTimeout), problem);
        if (sentinel) {
            auto answer = ask_master(sentinel.get(), address.master_name);
            if (auto* master = std::get_if<MasterAddress>(&answer)) {
                if (!open_node(address, master->host, master->port, timeout)) {
                    problem = "master " + master->text() + ": " + error_;
                } else if (problem = role_problem(); !problem.empty()) {
                    problem = master->text() + " " + problem;
                    impl_->context.reset();
                } else {
                    prefer_sentinel(index);
                    return;
                }
            } else {
                problem = std::get<std::string>(answer);
            }
        }
        said += (said.empty() ? "" : "; ") + s.host + ":" + std::to_string(s.port) + ": " + problem;
        // Wrong data-node credentials are the same on every master: a setting to fix.
        if (auth_failed_) break;
    }
    error_ = "no sentinel gave a master for '" + address.master_name + "' (" + said + ")";
}

std::string RedisConnection::role_problem() {
    ReplyPtr reply(static_cast<redisReply*>(redisCommand(impl_->context.get(), "ROLE")));
    if (!reply) return std::string("did not answer ROLE: ") + impl_->context->errstr;
    auto role = read_role(reply.get());
    if (!role) return "gave no role";
    return *role == "master" ? std::string() : "says it is a " + *role;
}

void RedisConnection::check_role_errors(const std::vector<Reply>& replies) {
    for (const auto& reply : replies) {
        if (!role_error(reply)) continue;
        error_ = reply.str;
        impl_->context.reset();
        throw RedisError("Redis is no master now (" + error_ + "): reconnecting");
    }
}

bool RedisConnection::authenticate(const RedisAddress& address) {
    std::vector<const char*> argv{"AUTH"};
    std::vector<std::size_t> lengths{4};
    if (!address.user.empty()) {
        argv.push_back(address.user.data());
        lengths.push_back(address.user.size());
    }
    argv.push_back(address.password.data());
    lengths.push_back(address.password.size());
    ReplyPtr reply(static_cast<redisReply*>(redisCommandArgv(
        impl_->context.get(), static_cast<int>(argv.size()), argv.data(), lengths.data())));
    if (reply && reply->type != REDIS_REPLY_ERROR) return true;
    // Redis's error text names no credential ("WRONGPASS invalid username-password pair").
    error_ = reply ? std::string(reply->str, reply->len) : impl_->context->errstr;
    if (reply) report_auth_failure(address);
    impl_->context.reset();
    return false;
}

void RedisConnection::report_auth_failure(const RedisAddress& address) {
    auth_failed_ = true;
    // Every reconnect of every Redis client would repeat it: one line per interval is enough.
    static std::atomic<std::int64_t> last_logged{0};
    auto now = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
                   .count();
    auto last = last_logged.load(std::memory_order_relaxed);
    if (last != 0 && now - last < kAuthLogInterval.count()) return;
    if (!last_logged.compare_exchange_strong(last, now)) return;
    runtime::log::error("redis_auth_failed",
                        {{"host", address.host},
                         {"port", address.port},
                         {"user", address.user.empty() ? "default" : address.user},
                         {"error", error_}});
}

RedisConnection::~RedisConnection() = default;

void RedisConnection::require_connection() const {
    if (!ok()) throw RedisError("not connected to Redis: " + error_);
}

void RedisConnection::fail() {
    error_ = impl_->context->errstr;
    impl_->context.reset();
    throw RedisError("Redis: " + error_);
}

bool RedisConnection::ok() const {
    return impl_->context != nullptr && (!via_sentinel_ || generation_ == master_generation());
}

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
    require_connection();
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
            fail();
        }
    }
    std::vector<Reply> replies;
    replies.reserve(commands.size());
    for (std::size_t i = 0; i < commands.size(); ++i) {
        void* raw = nullptr;
        if (redisGetReply(c, &raw) != REDIS_OK || raw == nullptr) {
            fail();
        }
        ReplyPtr reply(static_cast<redisReply*>(raw));
        replies.push_back(copy_reply(reply.get()));
    }
    check_role_errors(replies);
    return replies;
}

void RedisConnection::pipeline_raw(std::string_view commands, std::size_t count,
                                   std::vector<Reply>& replies) {
    require_connection();
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
            fail();
        }
        ReplyPtr reply(static_cast<redisReply*>(raw));
        replies.push_back(copy_reply(reply.get()));
    }
    check_role_errors(replies);
}

void RedisConnection::hscan(std::string_view key, std::size_t reply_bytes,
                            const std::function<void(std::string_view, std::string_view)>& visit) {
    require_connection();
    constexpr std::size_t kMaxCount = 10'000;
    std::size_t entries_seen = 0, bytes_seen = 0;
    std::string cursor = "0", count_text = "1";
    do {
        redisContext* c = impl_->context.get();
        const char* argv[] = {"HSCAN", key.data(), cursor.c_str(), "COUNT", count_text.c_str()};
        std::size_t lengths[] = {5, key.size(), cursor.size(), 5, count_text.size()};
        ReplyPtr reply(static_cast<redisReply*>(redisCommandArgv(c, 5, argv, lengths)));
        if (!reply) {
            fail();
        }
        if (reply->type == REDIS_REPLY_ERROR) check_role_errors({copy_reply(reply.get())});
        auto read = read_hscan_page(reply.get());
        auto* page = std::get_if<HscanPage>(&read);
        if (page == nullptr) throw RedisError("HSCAN: " + std::get<std::string>(read));
        cursor = std::move(page->cursor);
        for (const auto& [field, value] : page->entries) {
            visit(field, value);
            ++entries_seen;
            bytes_seen += field.size() + value.size();
        }
        if (entries_seen > 0) {
            std::size_t per_entry = std::max<std::size_t>(1, bytes_seen / entries_seen);
            count_text =
                std::to_string(std::clamp<std::size_t>(reply_bytes / per_entry, 1, kMaxCount));
        }
    } while (cursor != "0");
}

}  // namespace refgate::redis
