#pragma once

// Idle keep-alive connections, parked. With many connections on a thread (Session::lean()), one
// that has waited for its next request kParkAfter (1 s) or longer gives up its Session, its timer
// and its ConnectionPoller slot: the thread keeps only its socket in an epoll set of its own and
// a slot of a few dozen bytes. When the socket becomes readable (a request, or the client's
// close), a new Session takes it up where the old one stopped. The read timeout still holds: a
// parked connection is closed within one sweep (kSweepEvery) after its deadline.
//
// Busy connections never get here (they wait far less than kParkAfter), so parking costs them
// nothing; an idle one costs the thread ~40 bytes instead of its Session and its timer.

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "epoll_slots.hpp"
#include "refgate/http/request.hpp"
#include "refgate/runtime/log_limiter.hpp"

namespace refgate::http {

class Session;

// What a parked connection keeps.
struct ParkedConnection {
    int fd = -1;
    bool no_delay = false;  // TCP_NODELAY is set
    std::uint8_t listener = 0;
    PeerAddress peer;
    std::chrono::steady_clock::time_point deadline;  // its read timeout
};

// A Session's place in the list of connections waiting for a next request: kept in the Session
// (no allocation), linked and unlinked by IdleParking only.
struct IdleHook {
    explicit IdleHook(Session& owner) : session(&owner) {}
    Session* session;
    IdleHook* prev = nullptr;
    IdleHook* next = nullptr;
    std::chrono::steady_clock::time_point since;  // when it started waiting
    bool listed = false;
};

class IdleParking {
  public:
    // `wake` takes a parked connection back (a new Session); `expire` closes one whose read
    // timeout passed or that cannot be watched (its listener's open-connection count);
    // `swept` runs after every sweep with the number it parked (maybe 0), and returns true while
    // it wants more sweeps (memory to give back later) even with nothing waiting or parked.
    using Wake = std::function<void(const ParkedConnection&)>;
    using Expire = std::function<void(const ParkedConnection&)>;
    using Swept = std::function<bool(std::size_t)>;
    // A busy client's next request comes well within a second; one that waits longer is idle.
    static constexpr std::chrono::milliseconds kParkAfter{1000};
    static constexpr std::chrono::milliseconds kSweepEvery{100};

    IdleParking(boost::asio::io_context& ioc, Wake wake, Expire expire, Swept swept);
    ~IdleParking();
    IdleParking(const IdleParking&) = delete;
    IdleParking& operator=(const IdleParking&) = delete;

    // A session starts or stops waiting for its next request (intrusive list, in order). The
    // sweep parks the lean ones that waited kParkAfter (Session::lean, Session::park).
    void waiting(IdleHook& hook);
    void not_waiting(IdleHook& hook);
    // Takes the socket of a connection whose Session lets it go.
    void park(const ParkedConnection& connection);
    std::size_t parked() const { return parked_; }
    // The server stops: every parked connection is expired, nothing more is parked or woken.
    void close_all();

  private:
    void schedule_sweep();
    void sweep();
    void watch();
    void wake_ready();
    void wake_batch(const struct epoll_event* events, int n);
    void release(std::uint32_t index);

    boost::asio::io_context& ioc_;
    Wake wake_;
    Expire expire_;
    Swept swept_;
    IdleHook* head_ = nullptr;  // waiting the longest
    IdleHook* tail_ = nullptr;
    boost::asio::steady_timer sweep_timer_;
    bool sweep_armed_ = false;
    std::optional<boost::asio::posix::stream_descriptor> epoll_;  // the parked sockets' set
    bool watching_ = false;
    bool closed_ = false;
    EpollSlots<ParkedConnection> slots_;
    std::deque<std::uint64_t> by_deadline_;  // tokens in park order (deadlines nearly in order)
    std::size_t parked_ = 0;
    runtime::LogLimiter park_failures_{std::chrono::seconds{10}};
};

}  // namespace refgate::http
