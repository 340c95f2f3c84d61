#include <time.h>
#include <unistd.h>

#include <boost/asio/post.hpp>

#include "refgate/domain/ip_network.hpp"
#include "refgate/domain/time.hpp"
#include "refgate/runtime/background_thread.hpp"
#include "session.hpp"

// What an I/O thread keeps for its connections: the coarse clocks, the buffer pool, the Date
// header's text, and a peer's address as accept4() reports it.
namespace refgate::http {
namespace {

// Bytes read but not yet parsed may exceed a full header by this much (pipelined requests).
constexpr std::size_t kReadSlack = 8 * 1024;
// With connections parked, each listener's pool keeps this many spare buffers (~25 KiB each):
// enough for a few wakes at once; a burst allocates the rest. 32 held 0.5 MiB of resident memory
// at 10,000 idle connections, a tenth of what they cost.
constexpr std::size_t kSpareWhenParking = 4;
// malloc_trim() after this many buffers were freed or Sessions parked, at most every kTrimEvery.
constexpr std::size_t kTrimAfterFreed = 32;
constexpr std::size_t kTrimAfterParked = 64;
constexpr std::chrono::seconds kTrimEvery{1};

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

PeerAddress peer_address(const sockaddr_storage& remote) {
    // accept4() on an AF_INET or AF_INET6 listener gives one of those two.
    return {domain::sockaddr_ip(reinterpret_cast<const sockaddr*>(&remote))
                .value_or(domain::IpBytes{})};
}

SessionBuffers::SessionBuffers(const config::HttpLimits& limits)
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
        domain::format_http_date(now, date);
        date_second = now;
    }
    return {date, sizeof date};
}

void ThreadContext::wake(const ParkedConnection& c) {
    listeners[c.listener]->stats.parked_connections.fetch_sub(1, std::memory_order_relaxed);
    new_session(c.fd, c.peer, c.listener)->resume(c.deadline, c.no_delay);
}

void ThreadContext::take_over(HandOff& c) {
    auto session = new_session(c.fd, c.peer, c.listener);
    c.fd = -1;  // the Session's now
    session->take_over(c);
}

std::shared_ptr<Session> ThreadContext::new_session(int fd, const PeerAddress& peer,
                                                    std::uint8_t listener) {
    return std::allocate_shared<Session>(SlabAllocator<Session>(slabs), fd, peer, *this, listener);
}

std::size_t BufferPool::shrink_to(std::size_t keep) {
    std::size_t freed = spare_.size() > keep ? spare_.size() - keep : 0;
    spare_.resize(spare_.size() - freed);
    return freed;
}

bool ThreadContext::shrink_pools(std::size_t parked) {
    if (parked > 0) {
        for (auto& pool : pools) freed_since_trim += pool.shrink_to(kSpareWhenParking);
    }
    parked_since_trim += parked;
    // Parks come in batches over several sweeps; the ones after a trim are trimmed by a later
    // sweep, once kTrimEvery has passed, even if nothing is parked then.
    if (freed_since_trim < kTrimAfterFreed && parked_since_trim < kTrimAfterParked) return false;
    auto now = coarse_steady_now();
    if (now - last_trim < kTrimEvery) return true;
    // Freed buffers and Sessions are holes in the heap that malloc keeps resident; malloc_trim
    // hands their pages back. It takes about a millisecond and every arena's lock in turn, so it
    // runs on the blocking pool, never on an I/O thread.
    if (blocking_pool != nullptr) asio::post(*blocking_pool, [] { runtime::trim_heap(); });
    last_trim = now;
    freed_since_trim = 0;
    parked_since_trim = 0;
    return false;
}

void ThreadContext::expire(const ParkedConnection& c) {
    auto& listener = *listeners[c.listener];
    listener.stats.parked_connections.fetch_sub(1, std::memory_order_relaxed);
    listener.closed(c.peer);
}

}  // namespace refgate::http
