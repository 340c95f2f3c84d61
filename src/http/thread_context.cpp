#include <time.h>

#include "refgate/domain/time.hpp"
#include "session.hpp"

// What an I/O thread keeps for its connections: the coarse clocks, the buffer pool and the Date
// header's text.
namespace refgate::http {
namespace {

// Bytes read but not yet parsed may exceed a full header by this much (pipelined requests).
constexpr std::size_t kReadSlack = 8 * 1024;

// The wall clock as of the kernel's last tick: the Date header, read several times a request.
std::int64_t coarse_unix_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return ts.tv_sec;
}

}  // namespace

SteadyClock::time_point coarse_steady_now() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return SteadyClock::time_point(std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

SessionBuffers::SessionBuffers(const HttpLimits& limits)
    : input(limits.max_header_bytes + kReadSlack) {
    storage.arena.reserve(limits.max_header_bytes);
}

std::unique_ptr<SessionBuffers> BufferPool::take() {
    if (spare_.empty()) return std::make_unique<SessionBuffers>(limits_);
    auto buffers = std::move(spare_.back());
    spare_.pop_back();
    return buffers;
}

void BufferPool::give_back(std::unique_ptr<SessionBuffers> buffers) {
    if (spare_.size() >= kMaxSpare || buffers->output.capacity() > kMaxKeptCapacity ||
        buffers->response.body().capacity() > kMaxKeptCapacity ||
        buffers->storage.body.capacity() > kMaxKeptCapacity) {
        return;
    }
    buffers->input.clear();
    buffers->output.clear();
    buffers->storage.reset();
    buffers->response.reset();
    spare_.push_back(std::move(buffers));
}

std::string_view ThreadContext::http_date() {
    std::int64_t now = coarse_unix_seconds();
    if (now != date_second) {
        format_http_date(now, date);
        date_second = now;
    }
    return {date, sizeof date};
}

}  // namespace refgate::http
