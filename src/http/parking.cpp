#include "parking.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "refgate/runtime/log.hpp"
#include "session.hpp"

namespace refgate::http {
IdleParking::IdleParking(boost::asio::io_context& ioc, Wake wake, Expire expire, Swept swept)
    : ioc_(ioc),
      wake_(std::move(wake)),
      expire_(std::move(expire)),
      swept_(std::move(swept)),
      sweep_timer_(ioc) {
    // Made with the thread: parking then needs no new descriptor, so a process that has run out
    // of them still parks its idle connections instead of closing them. park() tries again if
    // this failed.
    open_epoll_set(ioc_, epoll_);
}

IdleParking::~IdleParking() {
    slots_.for_each([](std::uint32_t, const ParkedConnection& c) { ::close(c.fd); });
    // Sessions still listed are destroyed after this (a forced stop): they find themselves
    // unlisted and do not call back.
    for (IdleHook* h = head_; h != nullptr; h = h->next) h->listed = false;
}

void IdleParking::waiting(IdleHook& h) {
    h.since = coarse_steady_now();
    h.prev = tail_;
    h.next = nullptr;
    (tail_ != nullptr ? tail_->next : head_) = &h;
    tail_ = &h;
    h.listed = true;
    schedule_sweep();
}

void IdleParking::not_waiting(IdleHook& h) {
    if (!h.listed) return;
    (h.prev != nullptr ? h.prev->next : head_) = h.next;
    (h.next != nullptr ? h.next->prev : tail_) = h.prev;
    h.prev = h.next = nullptr;
    h.listed = false;
}

void IdleParking::schedule_sweep() {
    if (sweep_armed_ || closed_) return;
    sweep_armed_ = true;
    sweep_timer_.expires_after(kSweepEvery);
    sweep_timer_.async_wait([this](boost::system::error_code ec) {
        sweep_armed_ = false;
        if (!ec && !closed_) sweep();
    });
}

// Parks the sessions that waited kParkAfter or longer, and closes the parked connections whose
// read timeout passed.
void IdleParking::sweep() {
    auto now = coarse_steady_now();
    std::size_t parked_now = 0;
    while (head_ != nullptr && head_->session->lean() && now - head_->since >= kParkAfter) {
        IdleHook& h = *head_;
        not_waiting(h);
        h.session->park();
        ++parked_now;
    }
    while (!by_deadline_.empty()) {
        std::uint32_t index = slots_.find(by_deadline_.front());
        if (index == slots_.kStale) {  // woken since
            by_deadline_.pop_front();
            continue;
        }
        if (slots_[index].deadline > now) break;
        by_deadline_.pop_front();
        ParkedConnection c = slots_[index];
        release(index);
        ::close(c.fd);  // leaves the epoll set with it
        expire_(c);
    }
    bool more = swept_(parked_now);
    if (head_ != nullptr || parked_ > 0 || more) schedule_sweep();
}

void IdleParking::park(const ParkedConnection& c) {
    if (closed_) {
        ::close(c.fd);
        expire_(c);
        return;
    }
    // Out of memory or descriptors (the set, or its entry): the connection is closed like one
    // that timed out, and the next park tries again.
    bool open = open_epoll_set(ioc_, epoll_);
    std::uint32_t index = slots_.acquire();
    slots_[index] = c;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = slots_.token(index);
    if (!open || ::epoll_ctl(epoll_->native_handle(), EPOLL_CTL_ADD, c.fd, &ev) != 0) {
        if (park_failures_.allow())
            runtime::log::warn("park_failed", {{"error", std::strerror(errno)}});
        slots_.release(index);
        ::close(c.fd);
        expire_(c);
        return;
    }
    ++parked_;
    by_deadline_.push_back(ev.data.u64);
    watch();
    schedule_sweep();
}

void IdleParking::watch() {
    if (watching_ || !epoll_ || closed_) return;
    watching_ = true;
    epoll_->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                       [this](boost::system::error_code ec) {
                           watching_ = false;
                           if (ec || closed_) return;
                           wake_ready();
                           if (parked_ > 0) watch();
                       });
}

// Every parked socket with something to read (a request, or the client's close) gets a Session.
void IdleParking::wake_ready() {
    std::array<epoll_event, 64> events;
    // One batch per wake (as ConnectionPoller::dispatch): the wait that watch() starts again
    // re-arms the set, which Asio then reports while any parked socket is still readable.
    int n =
        ::epoll_wait(epoll_->native_handle(), events.data(), static_cast<int>(events.size()), 0);
    wake_batch(events.data(), n);
}

void IdleParking::wake_batch(const epoll_event* events, int n) {
    int fd = epoll_->native_handle();
    for (int i = 0; i < n; ++i) {
        std::uint32_t index = slots_.find(events[static_cast<std::size_t>(i)].data.u64);
        if (index == slots_.kStale) continue;
        ParkedConnection c = slots_[index];
        ::epoll_ctl(fd, EPOLL_CTL_DEL, c.fd, nullptr);
        release(index);
        wake_(c);
    }
}

void IdleParking::release(std::uint32_t index) {
    slots_.release(index);
    --parked_;
}

void IdleParking::close_all() {
    closed_ = true;
    sweep_timer_.cancel();
    if (epoll_) epoll_->cancel();
    slots_.for_each([this](std::uint32_t index, const ParkedConnection& parked) {
        ParkedConnection c = parked;
        release(index);
        ::close(c.fd);
        expire_(c);
    });
    by_deadline_.clear();
}

}  // namespace refgate::http
