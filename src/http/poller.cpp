#include "poller.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <array>

#include "session.hpp"

namespace refgate::http {
namespace {

constexpr std::uint32_t kReadEvents = EPOLLIN | EPOLLRDHUP | EPOLLET;

}  // namespace

// The set is made with the thread, while descriptors are surely there; add() tries again if that
// failed.
ConnectionPoller::ConnectionPoller(boost::asio::io_context& ioc, bool batch_io)
    : ioc_(ioc), io_(batch_io) {
    open_epoll_set(ioc_, set_);
}

ConnectionPoller::~ConnectionPoller() {
    slots_.for_each([](std::uint32_t, Session* session) { session->forget_poll_slot(); });
}

std::uint32_t ConnectionPoller::add(int fd, Session& session) {
    if (!open_epoll_set(ioc_, set_)) return kNone;
    std::uint32_t index = slots_.acquire();
    slots_[index] = &session;
    epoll_event ev{};
    ev.events = kReadEvents;
    ev.data.u64 = slots_.token(index);
    if (::epoll_ctl(set_->native_handle(), EPOLL_CTL_ADD, fd, &ev) != 0) {
        slots_.release(index);
        return kNone;
    }
    ++in_set_;
    watch();
    return index;
}

bool ConnectionPoller::watch_writable(std::uint32_t index, int fd) {
    epoll_event ev{};
    ev.events = kReadEvents | EPOLLOUT;
    ev.data.u64 = slots_.token(index);
    return ::epoll_ctl(set_->native_handle(), EPOLL_CTL_MOD, fd, &ev) == 0;
}

void ConnectionPoller::remove(std::uint32_t index, int fd) {
    if (fd >= 0) ::epoll_ctl(set_->native_handle(), EPOLL_CTL_DEL, fd, nullptr);
    slots_.release(index);
    // An empty set is not watched: a pending wait would keep the thread's io_context running
    // when the server stops.
    if (--in_set_ == 0 && watching_) {
        boost::system::error_code ignored;
        set_->cancel(ignored);
    }
}

void ConnectionPoller::watch() {
    if (watching_) return;
    watching_ = true;
    set_->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                     [this](boost::system::error_code ec) {
                         watching_ = false;
                         // Cancelled when the set emptied; a socket may have joined since. Any
                         // other error is not expected of an epoll descriptor: the sockets in
                         // the set then end at their deadlines, and the next add() tries again.
                         if (ec && ec != boost::asio::error::operation_aborted) return;
                         if (!ec) dispatch();
                         if (in_set_ > 0) watch();
                     });
}

// Up to one batch of events per wake, then back to Asio: its timers, accepts and posted work run
// in between, and a loop until the set is empty would never end while clients keep up. Within
// that bound the set is asked again as long as it had something: sockets that became ready while
// the first ones were answered are answered in the same wake, without Asio's epoll_wait and the
// epoll_ctl that re-arms the set's wait (at 64 busy keep-alive connections a wake found about four
// sockets ready; these two calls were a third of the system calls per request). Sockets past the
// bound are not lost: the wait that watch() starts re-arms the set, which reports it again while
// anything in it is ready. After a lone socket the set is not asked again: with one connection
// busy (or a slow client) the next is seldom ready this soon, and that epoll_wait() found nothing
// on every request, one of six system calls at one connection. A batch's events for a slot freed or
// reused since (its session closed) are skipped by their generation.
//
// A batch of several sockets goes in four passes: every socket is read, and its handler told the
// path of the request that came (Session::do_batch_read, on_batch_read); told again
// (do_batch_prepare); every request is parsed and answered (do_batch_answer); then every answer
// is sent (do_batch_write, on_batch_write). So the link a request needs loads while the other
// sockets are read, and each load that depends on another starts a pass later, instead of one after
// the other while the request waits; and the answering code runs for the whole batch between two
// runs of the kernel's. The batch's reads are one system call, and so are its sends (BatchIo).
void ConnectionPoller::dispatch() {
    std::array<epoll_event, 64> events;
    static_assert(std::tuple_size_v<decltype(ahead_)> >= events.size());
    static_assert(BatchIo::kMaxQueued >= events.size());
    int room = static_cast<int>(events.size());
    while (room > 0) {
        int n = ::epoll_wait(set_->native_handle(), events.data(), room, 0);
        if (n <= 0) return;
        room -= n;
        std::size_t ahead = 0;
        for (int i = 0; i < n; ++i) {
            const epoll_event& ev = events[static_cast<std::size_t>(i)];
            std::uint32_t index = slots_.find(ev.data.u64);
            if (index == slots_.kStale) continue;
            Session& session = *slots_[index];
            if (n == 1) {
                session.on_events(ev.events);
            } else {
                auto held = session.shared_from_this();
                if (session.do_batch_read(ev.events, io_)) ahead_[ahead++] = std::move(held);
            }
        }
        io_.submit();
        std::size_t kept = 0;
        for (std::size_t i = 0; i < ahead; ++i) {
            if (!ahead_[i]->on_batch_read(io_.result(i))) {
                ahead_[i].reset();
            } else if (kept++ != i) {
                ahead_[kept - 1] = std::move(ahead_[i]);
            }
        }
        for (std::size_t i = 0; i < kept; ++i) ahead_[i]->do_batch_prepare();
        for (std::size_t i = 0; i < kept; ++i) ahead_[i]->do_batch_answer();
        // The sessions that queued a send move to the front, in the order of their sends.
        std::size_t sends = 0;
        for (std::size_t i = 0; i < kept; ++i) {
            if (ahead_[i]->do_batch_write(io_)) ahead_[sends++].swap(ahead_[i]);
        }
        io_.submit();
        for (std::size_t i = 0; i < sends; ++i) ahead_[i]->on_batch_write(io_.result(i));
        for (std::size_t i = 0; i < kept; ++i) ahead_[i].reset();
        if (n == 1) return;  // see above: a lone socket's batch is the wake's last
    }
}

}  // namespace refgate::http
