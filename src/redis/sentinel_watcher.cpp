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

// "+switch-master" payload: "<name> <old ip> <old port> <new ip> <new port>".
bool parse_switch(std::string_view payload, std::string& name, std::string& to) {
    std::string parts[5];
    std::size_t n = 0, pos = 0;
    while (n < 5 && pos <= payload.size()) {
        auto space = payload.find(' ', pos);
        parts[n++] = std::string(payload.substr(pos, space - pos));
        if (space == std::string_view::npos) break;
        pos = space + 1;
    }
    if (n != 5) return false;
    name = parts[0];
    to = parts[3] + ":" + parts[4];
    return true;
}

// The switch a subscription message announces, if it is one.
bool switch_message(const redisReply* r, std::string& name, std::string& to) {
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) return false;
    for (std::size_t i = 0; i < 3; ++i) {
        if (r->element[i]->type != REDIS_REPLY_STRING) return false;
    }
    if (std::string_view(r->element[0]->str, r->element[0]->len) != "message") return false;
    return parse_switch({r->element[2]->str, r->element[2]->len}, name, to);
}

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
    become_background_thread("rg-sentinel", BackgroundPriority::low);
    const auto& sentinels = options_.address.sentinels;
    for (std::size_t i = preferred_sentinel(); !stopping_; ++i) {
        follow(sentinels[i % sentinels.size()]);
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
        log::warn("redis_master_switched",
                  {{"master", options_.address.master_name}, {"from", master_}, {"to", to}});
    }
    master_ = to;
}

void SentinelWatcher::follow(const SentinelHost& sentinel) {
    const RedisAddress& a = options_.address;
    std::string error;
    auto c = connect_sentinel(sentinel, a.sentinel_password, kSentinelTimeout, error);
    if (!c) return;
    // A switch missed while no sentinel was followed shows as another master now.
    auto answer = ask_master(c.get(), a.master_name);
    if (auto* master = std::get_if<MasterAddress>(&answer)) switched(master->text());
    ReplyPtr subscribed(
        static_cast<redisReply*>(redisCommand(c.get(), "SUBSCRIBE %s", "+switch-master")));
    if (!subscribed || subscribed->type == REDIS_REPLY_ERROR) return;
    while (!stopping_) {
        void* raw = nullptr;
        if (redisReaderGetReply(c->reader, &raw) != REDIS_OK) return;
        if (raw != nullptr) {
            ReplyPtr message(static_cast<redisReply*>(raw));
            std::string name, to;
            if (switch_message(message.get(), name, to) && name == a.master_name) switched(to);
            continue;
        }
        pollfd p{c->fd, POLLIN, 0};
        int ready = ::poll(&p, 1, kPollMillis);
        if (ready < 0 && errno != EINTR) return;
        if (ready > 0 && redisBufferRead(c.get()) != REDIS_OK) return;
    }
}

}  // namespace refgate::redis
