#pragma once

// The sockets of an I/O thread's connections that wait, in an epoll set of the thread's own that
// Asio's reactor watches as one descriptor. A socket joins the set once, edge-triggered, the
// first time its connection waits, and stays until it closes (or is parked): starting a wait
// then costs no system call. Through Asio every wait cost one, a recv() that found nothing
// (its read tries first) or an epoll_ctl() (its wait re-arms the socket), on every keep-alive
// request; and one epoll_wait() here returns every ready connection of a batch. nginx keeps its
// connections the same way.

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstdint>
#include <memory>
#include <optional>

#include "batch_io.hpp"
#include "epoll_slots.hpp"

namespace refgate::http {

class Session;

class ConnectionPoller {
  public:
    static constexpr std::uint32_t kNone = UINT32_MAX;

    // `batch_io`: a batch's reads and sends through io_uring where the kernel allows (BatchIo).
    ConnectionPoller(boost::asio::io_context& ioc, bool batch_io);
    // Sessions still in the set forget it (they are destroyed after it, with the io_context).
    ~ConnectionPoller();
    ConnectionPoller(const ConnectionPoller&) = delete;
    ConnectionPoller& operator=(const ConnectionPoller&) = delete;

    // Makes the thread's io_uring, on the thread (BatchIo::start); batching() says whether it did.
    void start_batch_io() { io_.start(); }
    // Whether the batches go through it now (any thread may ask).
    bool batching() const { return io_.batching(); }

    // Adds the session's socket (readable events, and the peer's close); its slot, or kNone
    // when the set cannot take it (no memory, max_user_watches; errno says why).
    std::uint32_t add(int fd, Session& session);
    // Also reports the socket writable (edge-triggered: after a send found its buffer full).
    bool watch_writable(std::uint32_t slot, int fd);
    // The session no longer hears of the socket: it closed it (which took it out of the set),
    // or `fd` stays open and leaves the set now.
    void remove(std::uint32_t slot, int fd = -1);

  private:
    void watch();
    void dispatch();

    boost::asio::io_context& ioc_;
    std::optional<boost::asio::posix::stream_descriptor> set_;
    bool watching_ = false;
    std::size_t in_set_ = 0;  // sockets
    EpollSlots<Session*> slots_;
    // The sessions of a batch whose requests wait for the batch's later passes (dispatch()).
    std::array<std::shared_ptr<Session>, 64> ahead_;
    BatchIo io_;
};

}  // namespace refgate::http
