#include "refgate/redis/sentinel_watcher.hpp"

#include <poll.h>

#include <cerrno>
#include <string_view>
#include <variant>

#include "hiredis_handles.hpp"
#include "refgate/runtime/background_thread.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::redis {
namespace {

// How often a waiting watcher looks at stop().
constexpr int kPollMillis = 100;
// A subscription is renewed this often (connect, ask for the master, subscribe): a sentinel that
// went silent without closing the connection cannot hide a switch for longer.
constexpr std::chrono::seconds kRenewInterval{10};

}  // namespace

SentinelWatcher::SentinelWatcher(SentinelWatcherOptions options) : options_(std::move(options)) {}

SentinelWatcher::~SentinelWatcher() { stop(); }

void SentinelWatcher::start() {
    if (thread_.joinable() || !options_.address.via_sentinel()) return;
    stopping_ = false;
    thread_ = std::thread([this] { run(); });
}

void SentinelWatcher::stop() {
    if (!thread_.joinable()) return;
    stopping_ = true;
    thread_.join();
}

void SentinelWatcher::run() {
    runtime::become_background_thread("rg-sentinel", runtime::BackgroundPriority::low);
    const auto& sentinels = options_.address.sentinels;
    std::size_t i = preferred_sentinel();
    while (!stopping_) {
        if (follow(sentinels[i % sentinels.size()])) continue;  // renewed on the same sentinel
        ++i;
        if (!wait_retry()) break;
    }
}

bool SentinelWatcher::wait_retry() {
    auto until = std::chrono::steady_clock::now() + options_.retry;
    while (!stopping_ && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds{kPollMillis});
    return !stopping_;
}

void SentinelWatcher::switched(const std::string& to) {
    if (to == master_) return;
    if (!master_.empty()) {
        note_master_switch();
        if (options_.on_switch) options_.on_switch();
        runtime::log::warn(
            "redis_master_switched",
            {{"master", options_.address.master_name}, {"from", master_}, {"to", to}});
    }
    master_ = to;
}

bool SentinelWatcher::follow(const SentinelHost& sentinel) {
    const RedisAddress& a = options_.address;
    std::string error;
    auto c = connect_sentinel(sentinel, a.sentinel_password, kSentinelTimeout, error);
    if (!c) return false;
    // A switch missed while no sentinel was followed shows as another master now.
    auto answer = ask_master(c.get(), a.master_name);
    if (auto* master = std::get_if<MasterAddress>(&answer)) switched(master->text());
    ReplyPtr subscribed(
        static_cast<redisReply*>(redisCommand(c.get(), "SUBSCRIBE %s", "+switch-master")));
    if (!subscribed || subscribed->type == REDIS_REPLY_ERROR) return false;
    auto renew_at = std::chrono::steady_clock::now() + kRenewInterval;
    while (!stopping_ && std::chrono::steady_clock::now() < renew_at) {
        void* raw = nullptr;
        if (redisReaderGetReply(c->reader, &raw) != REDIS_OK) return false;
        if (raw != nullptr) {
            ReplyPtr message(static_cast<redisReply*>(raw));
            std::string name, to;
            if (read_switch_message(message.get(), name, to) && name == a.master_name) switched(to);
            continue;
        }
        pollfd p{c->fd, POLLIN, 0};
        int ready = ::poll(&p, 1, kPollMillis);
        if (ready < 0 && errno != EINTR) return false;
        if (ready > 0 && redisBufferRead(c.get()) != REDIS_OK) return false;
    }
    return true;
}

}  // namespace refgate::redis
