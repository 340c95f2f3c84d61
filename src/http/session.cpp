#include "session.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <utility>

#include "refgate/runtime/log.hpp"

namespace refgate::http {
namespace {

// Up to this many connections on a thread, each keeps its buffers while it waits (lean()).
constexpr std::size_t kKeepBuffersUpTo = 256;
// Responses to pipelined requests are gathered up to this size before they are written.
constexpr std::size_t kMaxPendingOutput = 64 * 1024;
// After a response that closes the connection, unread input is drained this long, so that the
// kernel does not reset the connection before the client has read the response.
constexpr std::chrono::milliseconds kLingerTime{1000};

}  // namespace

Session::Session(int fd, const PeerAddress& peer, ThreadContext& context, std::uint8_t listener)
    : fd_(fd),
      timer_(context.ioc),
      context_(context),
      listener_(*context.listeners[listener]),
      limits_(listener_.options.limits),
      handler_(*context.handlers[listener]),
      pool_(context.pools[listener]),
      peer_(peer),
      listener_index_(listener) {
    context_.sessions.insert(this);
}

Session::~Session() {
    parser_.reset();  // it refers to the storage
    if (buffers_) pool_.give_back(std::move(buffers_));
    // Still listed only if the parking outlived it; a forced stop's parking unlists it first.
    if (idle_.listed) context_.parking.not_waiting(idle_);
    if (poll_slot_ != ConnectionPoller::kNone) context_.poller.remove(poll_slot_);
    if (fd_ >= 0) ::close(fd_);
    context_.sessions.erase(this);
    // A parked or handed-off connection is still open: whoever has it now counts its close.
    if (phase_ != Phase::parked && phase_ != Phase::handed_off) listener_.closed(peer_);
}

// A new connection's request has usually arrived with it: it is read at once with recv(), and
// an answer that closes the connection goes out with send(), shutdown() and close() only (the
// socket came non-blocking from accept4). The deadline's timer starts only for a connection that
// stays: one started and cancelled within this call would often be the thread's only one, and each
// would reprogram its timerfd.
void Session::start() {
    deadline_ = coarse_steady_now() + limits_.read_timeout;
    do_read();
    if (!ended()) do_wait_timer();
}

// A parked connection's new Session: its socket is readable.
void Session::resume(SteadyClock::time_point deadline, bool no_delay) {
    no_delay_ = no_delay;
    deadline_ = deadline;
    do_wait_timer();
    do_read();
}

// A connection another thread handed to this one, the lane (hand_off): its bytes are parsed
// again from the blocking request's first one, its earlier answers go out with the next write,
// its deadline goes on. The socket may hold more (ready_): it is read once the answers are out.
void Session::take_over(HandOff& connection) {
    no_delay_ = connection.no_delay;
    deadline_ = connection.deadline;
    stopping_ = context_.stopping;
    buffers_ = pool_.take();
    // It fits: the sending thread's input buffer had the same limits.
    auto room = input().prepare(connection.input.size());
    std::memcpy(room.data(), connection.input.data(), connection.input.size());
    input().commit(connection.input.size());
    output().assign(connection.output);
    do_wait_timer();
    do_answer();
}

// With few connections on the thread, a waiting one keeps its buffers (the cheapest path per
// request). With many, it waits without them: then most are idle, and their buffers are what
// the memory would go to.
bool Session::lean() const {
    return context_.sessions.size() + context_.parking.parked() > kKeepBuffersUpTo;
}

void Session::stop() {
    stopping_ = true;
    // A draining connection closes at its linger deadline: closing now, with its input unread,
    // would reset the connection and could destroy the answer it lingers for.
    if (phase_ != Phase::writing && phase_ != Phase::on_pool && phase_ != Phase::draining &&
        !holds_request()) {
        close_now();
    }
}

// After its last answer the connection closes without draining (do_close): no refusal, no
// bytes read and left unparsed.
bool Session::closes_at_once() const { return ending_ != Ending::linger && input().size() == 0; }

// Bytes of a request (or of empty lines before one) are in hand.
bool Session::holds_request() const {
    return buffers_ && (input().size() > 0 || (parser_ && parser_->got_some()));
}

// Moving the deadline later is a store; moving it earlier re-arms the timer.
void Session::arm(std::chrono::milliseconds timeout) {
    deadline_ = coarse_steady_now() + timeout;
    if (deadline_ < timer_.expiry()) do_wait_timer();
}

// One timer per connection, re-armed only when it fires: moving the deadline is a store.
void Session::do_wait_timer() {
    timer_.expires_at(deadline_);
    timer_.async_wait(
        asio::bind_allocator(context_.allocator(), [self = shared_from_this()](error_code ec) {
            if (ec || self->ended()) return;
            if (SteadyClock::now() >= self->deadline_) {
                self->on_deadline();
            } else {
                self->do_wait_timer();
            }
        }));
}

// The deadline passed. A request still waiting for a pool thread is answered now; one that a
// pool thread is working on gets another read timeout before the connection is closed.
void Session::on_deadline() {
    if (phase_ == Phase::on_pool && ticket_) {
        bool started = ticket_->exchange(true);
        ticket_.reset();
        deadline_ = coarse_steady_now() + limits_.read_timeout;
        do_wait_timer();
        if (started) return;
        enter(Phase::answering);
        answer_unavailable("queue_wait");
        parser_.reset();
        do_answer();
        return;
    }
    close_now();
}

// Waits for the socket's next bytes: Phase::idle before a request (listed for parking),
// Phase::reading within one.
void Session::do_wait_read() {
    if (ended()) return;
    if (stopping_ && !holds_request()) {
        close_now();
        return;
    }
    // The read timeout covers the wait for a request and its whole header: a client that
    // trickles bytes does not push the deadline back.
    bool idle = !holds_request() && empty_line_bytes_ == 0;
    if (idle || header_ == HeaderCheck::continued) arm(limits_.read_timeout);
    if (header_ == HeaderCheck::continued) header_ = HeaderCheck::passed;
    if (idle && lean()) {
        // Among many connections one that waits holds no buffers: they go back to the thread's
        // pool, and come back from it (the most recently used, still in cache) with the next
        // request. So an idle keep-alive connection costs its Session and socket only.
        parser_.reset();
        if (buffers_) pool_.give_back(std::move(buffers_));
    }
    enter(idle ? Phase::idle : Phase::reading);
    if (ready_) {
        // Bytes may be there already (the last read filled the buffer, or some came while the
        // connection was busy): read once this handler is done, not within it, so that a client
        // that keeps the socket full cannot nest reads.
        asio::post(context_.ioc,
                   asio::bind_allocator(context_.allocator(), [self = shared_from_this()] {
                       if (self->ready_) self->on_readable();
                   }));
        return;
    }
    join_poller();
}

// The thread's ConnectionPoller reports the socket's events (edge-triggered: each new arrival
// once); what is not waited for now is remembered.
void Session::on_events(std::uint32_t events) {
    auto self = shared_from_this();
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0 && phase_ == Phase::writing) {
        on_writable();
    }
    if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) == 0 || ended()) return;
    ready_ = true;
    if ((events & (EPOLLRDHUP | EPOLLERR | EPOLLHUP)) != 0) peer_done_ = true;
    if (phase_ == Phase::draining) {
        do_drain();
    } else if (waiting()) {
        on_readable();
    }
}

void Session::on_readable() {
    if (end_wait()) do_read();
}

// The connection was waiting for input and is now to read it: false when it was not waiting.
bool Session::end_wait() {
    if (!waiting()) return false;
    enter(Phase::answering);
    return true;
}

// Reads what the socket holds now, without waiting, and answers what came: a new connection's
// request has usually arrived with it (the listener defers the accept until it has), and a woken
// one's has. Nothing there: the connection waits for more.
void Session::do_read() {
    auto room = input_room();
    if (on_read(receive_plain(fd_, room.data(), room.size()))) do_answer();
}

// Where the next read puts its bytes (the connection takes buffers if it has none).
boost::asio::mutable_buffer Session::input_room() {
    if (!buffers_) buffers_ = pool_.take();
    return input().prepare(input().max_size() - input().size());
}

// A read into input_room(): `n` bytes, or -errno. True when bytes came; otherwise the
// connection waits for more (or closed).
bool Session::on_read(ssize_t n) {
    if (n > 0) {
        // Less than there was room for: the socket is empty until its next event, unless the
        // peer's close came with the last one (a next read finds it; no event will say so).
        ready_ = static_cast<std::size_t>(n) == input().max_size() - input().size() || peer_done_;
        input().commit(static_cast<std::size_t>(n));
        return true;
    }
    if (n == -EAGAIN || n == -EWOULDBLOCK || n == -EINTR) {
        ready_ = n == -EINTR;
        do_wait_read();
    } else {
        close_now();  // the client closed, or the connection failed
    }
    return false;
}

// Puts the socket in the thread's ConnectionPoller, once, before the connection's first wait.
// False (and the connection closed) when the set cannot take it (no memory, max_user_watches).
bool Session::join_poller() {
    if (poll_slot_ != ConnectionPoller::kNone) return true;
    poll_slot_ = context_.poller.add(fd_, *this);
    if (poll_slot_ != ConnectionPoller::kNone) return true;
    if (context_.poll_failure_log.allow()) {
        runtime::log::warn("poll_failed", {{"error", std::strerror(errno)}});
    }
    close_now();
    return false;
}

void Session::start_request() {
    parser_.emplace(storage(), limits_, &handler_);
    header_ = HeaderCheck::pending;
    asked_blocking_ = false;
    empty_line_bytes_ = 0;
    request_taken_ = 0;
}

// Parses every complete request already buffered, answers each into the output buffer, then
// writes (or leaves the write to the batch, or reads more when nothing is ready).
void Session::do_answer(Send send) {
    while (ending_ == Ending::keep_open) {
        if (!parser_) start_request();
        if (input().size() == 0) break;
        if (starts_with_line_break() && !parser_->got_some()) {
            if (!skip_empty_lines()) break;
            if (input().size() == 0) break;
        }
        auto step =
            parser_->put({static_cast<const char*>(input().data().data()), input().data().size()});
        if (parser_->header_done() && header_ == HeaderCheck::pending && !step.refusal &&
            moves_to_lane()) {
            hand_off();
            return;
        }
        input().consume(step.used);
        request_taken_ += step.used;
        if (step.need_more) break;
        if (step.refusal) {
            answer_error(step.refusal->status, step.refusal->title);
            break;
        }
        if (parser_->header_done() && header_ == HeaderCheck::pending) {
            header_ = HeaderCheck::passed;
            if (!check_header()) break;
        }
        if (parser_->done()) {
            if (!asked_blocking_ && handler_.blocking(make_request())) {
                if (do_pool_answer()) return;  // on_pool_answer() goes on
            } else {
                answer_here();
            }
            parser_.reset();
            if (output().size() >= kMaxPendingOutput) break;
            continue;
        }
        if (step.used == 0) break;
    }
    if (!output().empty()) {
        if (send == Send::batched) {
            enter(Phase::batched);
            return;
        }
        do_write();
    } else if (ending_ != Ending::keep_open) {
        do_close();
    } else {
        do_wait_read();
    }
}

bool Session::starts_with_line_break() const {
    char first = *static_cast<const char*>(input().data().data());
    return first == '\r' || first == '\n';
}

// Empty lines before a request line are ignored (RFC 9112 section 2.2). They count against the
// header limit, and do not move the read deadline, so a stream of them cannot hold the
// connection. False when the connection is refused.
bool Session::skip_empty_lines() {
    const char* bytes = static_cast<const char*>(input().data().data());
    std::size_t n = 0;
    while (n < input().size() && (bytes[n] == '\r' || bytes[n] == '\n')) ++n;
    input().consume(n);
    empty_line_bytes_ += n;
    if (empty_line_bytes_ <= limits_.max_header_bytes) return true;
    answer_error(400, "Bad Request");
    return false;
}

// Checks of a complete header, before its body is read; false when the request is refused.
bool Session::check_header() {
    if (auto refusal = parser_->check_header()) {
        answer_error(refusal->status, refusal->title);
        return false;
    }
    // A client that waits for "100 Continue" before sending its body gets it now (RFC 9110
    // 10.1.1); a refusal above was its final answer instead.
    if (parser_->content_length() > input().size() && storage().version >= 11 &&
        storage().expects_continue()) {
        output().append("HTTP/1.1 100 Continue\r\n\r\n");
        header_ = HeaderCheck::continued;  // the body's wait starts now
    }
    return true;
}

// Whether the request whose header was just parsed is blocking, and its connection is to go to
// the server's blocking lane: asked on a thread that has a lane (not on the lane), while the
// header's bytes are all still in the input (the parser takes a header whole), before its body
// is read (Request::body is empty). A request that is not blocking then is not asked again when
// it is complete; one that the handler finds blocking only then goes to the pool from here.
bool Session::moves_to_lane() {
    if (context_.lane == nullptr || stopping_ || request_taken_ != 0 || !handler_.may_block())
        return false;
    asked_blocking_ = true;
    return handler_.blocking(make_request());
}

// A blocking request (a postback, an admin call): the whole connection goes to the server's
// blocking lane, whose thread parses the request again from its first byte and goes on as this
// Session would have (the pool, its answer, the requests after it), and this Session ends. So
// what a blocking request costs an I/O thread beyond its parse (waking a pool thread, taking its
// answer back, sending it, and the connection's later requests) runs at the lane's background
// priority, not between this thread's redirects. Nothing is lost: the bytes read and not
// consumed (this request's header, and whatever came after it) and the answers not yet sent
// travel with the socket; the connection's place in the listener and its client's share go with
// it too. Only this path allocates (the bytes' copies, the post).
void Session::hand_off() {
    HandOff connection;
    const auto bytes = input().data();
    connection.input.assign(static_cast<const char*>(bytes.data()), bytes.size());
    connection.output.assign(output());
    connection.listener_state = &listener_;
    connection.peer = peer_;
    connection.listener = listener_index_;
    connection.no_delay = no_delay_;
    connection.deadline = deadline_;
    enter(Phase::handed_off);
    parser_.reset();
    pool_.give_back(std::move(buffers_));
    if (poll_slot_ != ConnectionPoller::kNone) {
        context_.poller.remove(std::exchange(poll_slot_, ConnectionPoller::kNone), fd_);
    }
    connection.fd = std::exchange(fd_, -1);
    timer_.cancel();
    listener_.stats.handed_off.fetch_add(1, std::memory_order_relaxed);
    ThreadContext* lane = context_.lane;
    asio::post(lane->ioc, [lane, connection = std::move(connection)]() mutable {
        lane->take_over(connection);
    });
}

// A handler that blocks (on PostgreSQL, say) runs on the server's blocking pool, never on an I/O
// thread. The connection reads nothing more until the answer is back; the request's storage
// stays untouched meanwhile. The wait for a pool thread is bounded twice: a request finding the
// listener's queue full is refused at once, and one still queued at its deadline is answered
// then (on_deadline); the pool thread that finds it later drops it.
// False when the request was refused (answered) at once.
bool Session::do_pool_answer() {
    auto& queued = listener_.queued_blocking;
    if (queued.fetch_add(1, std::memory_order_relaxed) >= listener_.options.max_blocking_queue) {
        queued.fetch_sub(1, std::memory_order_relaxed);
        answer_unavailable("queue_full");
        return false;
    }
    response().reset();
    enter(Phase::on_pool);
    ticket_ = std::make_shared<std::atomic<bool>>(false);
    arm(listener_.options.blocking_wait);
    asio::post(*context_.blocking_pool, [self = shared_from_this(), ticket = ticket_]() mutable {
        self->listener_.queued_blocking.fetch_sub(1, std::memory_order_relaxed);
        // Whoever claims the ticket first answers: this thread, or the deadline.
        bool expired = ticket->exchange(true);
        if (!expired) self->call_handler();
        // The session moves on to its I/O thread, so that it is destroyed there, never on the
        // pool's thread (its destructor touches the thread's session set and pool).
        auto& ioc = self->context_.ioc;
        asio::post(ioc, [self = std::move(self), expired] {
            if (!expired) self->on_pool_answer();
        });
    });
    return true;
}

// Back on the I/O thread with the handler's answer (the deadline did not claim the request).
void Session::on_pool_answer() {
    ticket_.reset();
    if (ended()) return;
    enter(Phase::answering);
    finish_answer();
    parser_.reset();
    do_answer();
}

void Session::do_write() {
    on_write(send_plain(fd_, output().data(), output().size(), write_flags()));
}

// Readies the socket for the output's send() and says its flags.
int Session::write_flags() {
    const bool closing = ending_ != Ending::keep_open;
    // Nagle's algorithm could hold back a response while an earlier one is unacknowledged; only
    // a connection that stays open can have one. Switched off then, as nginx does, so that a
    // Connection: close exchange spends no system call on it.
    if (!closing && !no_delay_) {
        no_delay_ = true;
        int on = 1;
        ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    }
    // An answer nearly always fits the socket's send buffer: one send() writes it. The rest of
    // a large one goes as the socket takes it (on_writable). An answer after which the
    // connection closes at once is held back (MSG_MORE) until the close's shutdown(), so that
    // the FIN leaves in the answer's segment: one packet fewer per Connection: close exchange.
    return closing && closes_at_once() ? MSG_MORE : 0;
}

// do_write()'s send(): `n` bytes sent, or -errno.
void Session::on_write(ssize_t n) {
    if (n < 0 && n != -EAGAIN && n != -EWOULDBLOCK && n != -EINTR) {
        close_now();
        return;
    }
    auto sent = static_cast<std::size_t>(std::max<ssize_t>(n, 0));
    if (sent == output().size()) {
        on_sent();
        return;
    }
    // The rest goes when the socket is writable again.
    sent_ = sent;
    enter(Phase::writing);
    arm(limits_.write_timeout);
    if (!join_poller()) return;
    if (!context_.poller.watch_writable(poll_slot_, fd_)) close_now();
}

// The socket reported room while Phase::writing: the rest of the output goes.
void Session::on_writable() {
    while (sent_ < output().size()) {
        ssize_t n = send_plain(fd_, output().data() + sent_, output().size() - sent_);
        if (n < 0) {
            if (n == -EINTR) continue;
            if (n != -EAGAIN && n != -EWOULDBLOCK) close_now();
            return;  // the next writable event goes on
        }
        sent_ += static_cast<std::size_t>(n);
    }
    sent_ = 0;
    enter(Phase::answering);
    on_sent();
}

// The whole output went: the next requests, or the end.
void Session::on_sent() {
    output().clear();
    if (ending_ != Ending::keep_open) {
        do_close();
    } else {
        do_answer();
    }
}

// A close with input unread makes the kernel reset the connection, and a reset can destroy the
// response before the client read it. So after a refusal (the client may still be sending), or
// when the client meant to keep the connection (the server is stopping), or with bytes already
// read and not parsed, the input is drained for up to kLingerTime first. After an answer to a
// client that asked for Connection: close, it has sent all it meant to, and the socket is closed
// at once, as nginx does, the response and the FIN in one segment (do_write).
void Session::do_close() {
    if (ended()) return;
    if (closes_at_once()) {
        // Pushes the held answer out with the FIN before close(): had the client sent more
        // meanwhile, close() would reset the connection and drop an answer still held.
        ::shutdown(fd_, SHUT_WR);
        close_now();
        return;
    }
    if (::shutdown(fd_, SHUT_WR) != 0) {
        close_now();
        return;
    }
    arm(kLingerTime);
    enter(Phase::draining);
    do_drain();
}

// Reads and drops what the client sends until it closes, or kLingerTime passes.
void Session::do_drain() {
    // A bound per event: a client sending as fast as this reads cannot hold the thread. What it
    // sends next is a next event; the deadline ends it all.
    for (int reads = 0; reads < 16; ++reads) {
        input().clear();
        auto space = input().prepare(input().max_size());
        ssize_t n = receive_plain(fd_, space.data(), space.size());
        if (n > 0 || n == -EINTR) continue;
        if (n == -EAGAIN || n == -EWOULDBLOCK) {
            ready_ = false;
            join_poller();
            return;
        }
        close_now();  // the client closed, or the connection failed
        return;
    }
    // Bytes may be left with no event to come for them (the client has sent its last): go on
    // after the thread's other work.
    asio::post(context_.ioc,
               asio::bind_allocator(context_.allocator(), [self = shared_from_this()] {
                   if (self->phase_ == Phase::draining) self->do_drain();
               }));
}

void Session::close_now() {
    if (ended()) return;
    enter(Phase::closed);
    if (poll_slot_ != ConnectionPoller::kNone) {
        context_.poller.remove(std::exchange(poll_slot_, ConnectionPoller::kNone));
    }
    ::close(fd_);  // it leaves the poller's set with it
    fd_ = -1;
    timer_.cancel();
}

// Waited kParkAfter for a next request among many connections (IdleParking::sweep): the buffers
// go back to the pool, the socket to the parking, and this Session ends (its timer is
// cancelled). Nothing was read since the wait began: a read takes the session off the list.
void Session::park() {
    enter(Phase::parked);
    parser_.reset();
    if (buffers_) pool_.give_back(std::move(buffers_));
    int fd = fd_;
    if (poll_slot_ != ConnectionPoller::kNone) {
        context_.poller.remove(std::exchange(poll_slot_, ConnectionPoller::kNone), fd);
    }
    fd_ = -1;
    timer_.cancel();
    listener_.stats.parked_connections.fetch_add(1, std::memory_order_relaxed);
    context_.parking.park({.fd = fd,
                           .no_delay = no_delay_,
                           .listener = listener_index_,
                           .peer = peer_,
                           .deadline = deadline_});
}

}  // namespace refgate::http
