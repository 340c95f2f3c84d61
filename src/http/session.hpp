#pragma once

// One client connection (Session) and what an I/O thread keeps for its connections. Private to
// the server: session.cpp does the connection's I/O, server.cpp accepts and runs the threads.

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <cassert>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "batch_io.hpp"
#include "client_share.hpp"
#include "parking.hpp"
#include "poller.hpp"
#include "refgate/http/request_parser.hpp"
#include "refgate/http/server.hpp"
#include "refgate/runtime/log_limiter.hpp"
#include "session_slabs.hpp"

namespace refgate::http {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using SteadyClock = std::chrono::steady_clock;

// The kernel's monotonic clock as of its last tick (a few milliseconds old, read without the
// TSC): enough for connection deadlines of seconds. It counts from steady_clock's origin.
SteadyClock::time_point coarse_steady_now();

// What a connection uses while it is open. Kept per thread and listener for the next connection,
// so that accepting one allocates nothing but its Session.
struct SessionBuffers {
    explicit SessionBuffers(const config::HttpLimits& limits);
    boost::beast::flat_buffer input;
    std::string output;
    RequestStorage storage;
    Response response;
};

class BufferPool {
  public:
    explicit BufferPool(const config::HttpLimits& limits) : limits_(limits) {}
    std::unique_ptr<SessionBuffers> take();
    // Buffers that grew past kMaxKeptCapacity (a large admin answer) are freed, not kept.
    void give_back(std::unique_ptr<SessionBuffers> buffers);
    // Frees spare buffers beyond `keep`; how many were freed.
    std::size_t shrink_to(std::size_t keep);

  private:
    static constexpr std::size_t kMaxSpare = 256;
    static constexpr std::size_t kMaxKeptCapacity = 64 * 1024;
    const config::HttpLimits& limits_;
    std::vector<std::unique_ptr<SessionBuffers>> spare_;
};

class Session;

// Everything of one I/O thread: its io_context, and per listener its acceptor, handler and
// buffer pool.
struct ListenerState;
struct HandOff;

struct ThreadContext {
    // `batch_io`: see ConnectionPoller.
    explicit ThreadContext(bool batch_io = true) : poller{ioc, batch_io} {}

    // Declared before the io_context: sessions still queued in it deregister, give their
    // buffers back and free their memory on destruction.
    SessionHeap slabs;
    std::unordered_set<Session*> sessions;
    std::deque<BufferPool> pools;  // one per listener
    asio::io_context ioc{1};
    asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
    ConnectionPoller poller;
    runtime::LogLimiter poll_failure_log{std::chrono::seconds{10}};
    IdleParking parking{ioc, [this](const ParkedConnection& c) { wake(c); },
                        [this](const ParkedConnection& c) { expire(c); },
                        [this](std::size_t n) { return shrink_pools(n); }};
    SteadyClock::time_point last_trim{};
    std::size_t freed_since_trim = 0;                       // buffers
    std::size_t parked_since_trim = 0;                      // sessions
    std::vector<ListenerState*> listeners;                  // one per listener
    std::vector<std::unique_ptr<Handler>> handlers;         // one per listener
    std::vector<std::unique_ptr<tcp::acceptor>> acceptors;  // one per listener
    // One per listener: accept() is tried again after an error such as EMFILE (server.cpp).
    std::vector<std::unique_ptr<asio::steady_timer>> accept_retry;
    asio::thread_pool* blocking_pool = nullptr;
    // The server's blocking lane (server.cpp): the thread that takes up a connection once it has
    // a blocking request (Session::hand_off). Null on the lane itself, and where there is none.
    ThreadContext* lane = nullptr;
    bool stopping = false;
    std::int64_t date_second = -1;
    char date[29] = {};

    // The Date header's value, formatted once a second.
    std::string_view http_date();
    // The allocator of the thread's slabs, for its Sessions' pending operations.
    SlabAllocator<void> allocator() noexcept { return SlabAllocator<void>(slabs); }
    // A new connection's Session, in the thread's slabs.
    std::shared_ptr<Session> new_session(int fd, const PeerAddress& peer, std::uint8_t listener);
    // A parked connection has something to read: a new Session takes it up.
    void wake(const ParkedConnection& connection);
    // On the lane: a connection another thread handed over; a new Session takes it up.
    void take_over(HandOff& connection);
    // A parked connection was closed (its read timeout, or the server stops, or it could not be
    // watched or woken).
    void expire(const ParkedConnection& connection);
    // A parking sweep parked `parked` connections (maybe none): while connections are parked
    // the pools keep a few spare buffers, not one per connection that had them, and the memory
    // freed Sessions and buffers held goes back to the system, at most once a second and at the
    // latest a second after the last park. True while such a trim is still to come.
    bool shrink_pools(std::size_t parked);
};

struct ListenerState {
    ListenerOptions options;
    ServerStats stats;
    // Set when the listener gives each client a share of its cap (max_connections_per_client).
    std::unique_ptr<ClientShares> shares;
    std::uint16_t port = 0;
    // Blocking requests posted to the pool and not yet taken by one of its threads.
    std::atomic<std::size_t> queued_blocking{0};
    runtime::LogLimiter unavailable_log{std::chrono::seconds{10}};
    runtime::LogLimiter handler_error_log{std::chrono::seconds{10}};
    runtime::LogLimiter accept_error_log{std::chrono::seconds{10}};
    runtime::LogLimiter client_share_log{std::chrono::seconds{10}};

    // An open connection from `peer` closed (its Session ended, or it was closed parked).
    void closed(const PeerAddress& peer) {
        stats.open_connections.fetch_sub(1, std::memory_order_relaxed);
        if (shares) shares->give_back(peer.bytes);
    }
};

// A connection an I/O thread hands to the blocking lane (Session::hand_off), on its way there:
// what the lane's new Session needs to go on where the old one stopped. Until the lane takes it
// up it owns the socket and the connection's place in the listener: a hand-off the lane never
// ran (the server stopped first) closes the connection when it is destroyed.
struct HandOff {
    HandOff() = default;
    HandOff(HandOff&& other) noexcept
        : fd(std::exchange(other.fd, -1)),
          listener_state(other.listener_state),
          peer(other.peer),
          listener(other.listener),
          no_delay(other.no_delay),
          deadline(other.deadline),
          input(std::move(other.input)),
          output(std::move(other.output)) {}
    HandOff(const HandOff&) = delete;
    HandOff& operator=(const HandOff&) = delete;
    HandOff& operator=(HandOff&&) = delete;
    ~HandOff() {
        if (fd < 0) return;
        ::close(fd);
        if (listener_state != nullptr) listener_state->closed(peer);
    }

    int fd = -1;
    ListenerState* listener_state = nullptr;
    PeerAddress peer;
    std::uint8_t listener = 0;
    bool no_delay = false;
    SteadyClock::time_point deadline;
    std::string input;   // read and not consumed: the blocking request's header, what follows
    std::string output;  // answers to the requests before it, not sent yet
};

// The peer's address as refgate stores it (IPv4 as IPv4-mapped IPv6), from what accept4()
// reported.
PeerAddress peer_address(const sockaddr_storage& remote);

// A connection: read -> parse -> handle -> write, pipelined requests answered in order in one
// write, one deadline timer, no strand (it lives on one thread).
//
// Its state is one Phase; every change of phase goes through enter(), which checks it against
// legal_transition() in debug builds and keeps the thread's idle list in step with Phase::idle.
// The steps are named as in Beast's examples: do_x starts a step (a read, a write, a wait),
// on_x takes its result.
class Session final : public std::enable_shared_from_this<Session> {
  public:
    enum class Phase : std::uint8_t {
        answering,   // in the thread's hands: reading what the socket holds, parsing, answering
        idle,        // waits for a next request, listed in the thread's IdleParking
        reading,     // waits for the rest of a request
        on_pool,     // a blocking handler has its request on the blocking pool
        batched,     // its answers wait for the send of the poller's batch (do_batch_write)
        writing,     // waits for the socket to take the rest of the output
        draining,    // answered and shut down for writing: reads only to drop, then closes
        parked,      // the socket went to IdleParking: this Session is over, not the connection
        handed_off,  // the connection went to the blocking lane: this Session is over, not it
        closed,      // the socket is closed
    };
    // Whether a Session may go from `from` to `to` (enter() checks it in debug builds).
    static constexpr bool legal_transition(Phase from, Phase to);

    // Takes the connected, non-blocking socket `fd`.
    Session(int fd, const PeerAddress& peer, ThreadContext& context, std::uint8_t listener);
    ~Session();

    void start();
    // Takes up a parked connection (its socket is readable) until `deadline`.
    void resume(SteadyClock::time_point deadline, bool no_delay);
    // On the lane: takes up a connection another thread's Session handed off, with its bytes.
    void take_over(HandOff& connection);
    // The server is stopping: an idle connection closes now, a busy one after its response.
    void stop();
    Phase phase() const { return phase_; }

    // For the thread's ConnectionPoller (poller.cpp). The socket's events, one connection alone:
    void on_events(std::uint32_t events);
    // A batch of ready connections in passes (ConnectionPoller::dispatch), so that the loads a
    // request needs overlap the other connections' reads: do_batch_read() queues the socket's
    // read in the batch's BatchIo (true), or handles its events like on_events() when they are
    // not a plain arrival; on_batch_read() takes the read's result and, when the bytes start a
    // request, tells the handler its path (Handler::Parsed::arrived) and leaves it for later
    // (true); do_batch_prepare() tells it again (a load that needs the first one's);
    // do_batch_answer() answers like do_answer() but leaves the answers' send to
    // do_batch_write(), which queues it in the BatchIo (true), and on_batch_write() takes its
    // result.
    bool do_batch_read(std::uint32_t events, BatchIo& io);
    bool on_batch_read(ssize_t received);
    void do_batch_prepare();
    void do_batch_answer();
    bool do_batch_write(BatchIo& io);
    void on_batch_write(ssize_t sent);
    // The poller is destroyed before this Session (a forced stop): its slot is gone.
    void forget_poll_slot() { poll_slot_ = ConnectionPoller::kNone; }

    // For the thread's IdleParking (parking.cpp): whether a waiting connection gives up its
    // buffers (many connections on the thread), and the end of an idle one's Session.
    bool lean() const;
    void park();

  private:
    // How a batch of answers leaves do_answer(): sent at once, or by the poller's batch.
    enum class Send : std::uint8_t { now, batched };
    // What follows the answers in hand (ordered: a later value includes the earlier).
    enum class Ending : std::uint8_t {
        keep_open,
        close,   // closes after the output, at once unless input is left unread
        linger,  // drains the input before closing, whatever is buffered now
    };
    // The current request's header checks (check_header).
    enum class HeaderCheck : std::uint8_t {
        pending,
        passed,
        continued,  // passed, and a 100 Continue went out: the body's wait gets a full read timeout
    };

    void enter(Phase next);
    bool waiting() const { return phase_ == Phase::idle || phase_ == Phase::reading; }
    bool ended() const {
        return phase_ == Phase::closed || phase_ == Phase::parked || phase_ == Phase::handed_off;
    }
    void end_after(Ending ending) {
        if (ending > ending_) ending_ = ending;
    }

    // The deadline and its timer.
    void arm(std::chrono::milliseconds timeout);
    void do_wait_timer();
    void on_deadline();
    // Reading.
    void do_wait_read();
    void on_readable();
    bool end_wait();
    void do_read();
    boost::asio::mutable_buffer input_room();
    bool on_read(ssize_t n);
    bool join_poller();
    // Parsing and answering (session_answer.cpp has the answers themselves).
    void start_request();
    void do_answer(Send send = Send::now);
    bool holds_request() const;
    bool starts_with_line_break() const;
    bool skip_empty_lines();
    bool check_header();
    Request make_request() const;
    void answer_here();
    void answer_error(int status, std::string_view title);
    void call_handler();
    void handler_failed(const char* error);
    void finish_answer();
    bool moves_to_lane();
    void hand_off();
    bool do_pool_answer();
    void on_pool_answer();
    void answer_unavailable(std::string_view reason);
    void serialize(bool head, bool keep_alive);
    std::string_view arriving_path() const;
    // Writing.
    void do_write();
    int write_flags();
    void on_write(ssize_t n);
    void on_writable();
    void on_sent();
    // Closing.
    bool closes_at_once() const;
    void do_close();
    void do_drain();
    void close_now();

    boost::beast::flat_buffer& input() const { return buffers_->input; }
    std::string& output() const { return buffers_->output; }
    RequestStorage& storage() const { return buffers_->storage; }
    Response& response() const { return buffers_->response; }

    // The connection's socket, non-blocking from accept4(). It joins the thread's
    // ConnectionPoller only when the connection first waits (join_poller()), so that an exchange
    // answered at once (Connection: close) is accept4, recv, send, shutdown and close, and no
    // epoll_ctl.
    int fd_;
    std::uint32_t poll_slot_ = ConnectionPoller::kNone;
    asio::steady_timer timer_;
    SteadyClock::time_point deadline_;
    ThreadContext& context_;
    ListenerState& listener_;
    const config::HttpLimits& limits_;
    Handler& handler_;
    BufferPool& pool_;
    // Held while the connection has a request or a response in hand; an idle keep-alive
    // connection among many gives them back to the thread's pool (do_wait_read).
    std::unique_ptr<SessionBuffers> buffers_;
    std::optional<RequestParser> parser_;
    PeerAddress peer_;
    IdleHook idle_{*this};  // its place in the thread's IdleParking while Phase::idle
    std::uint8_t listener_index_;
    Phase phase_ = Phase::answering;
    Ending ending_ = Ending::keep_open;
    HeaderCheck header_ = HeaderCheck::pending;
    // The socket may hold bytes: no read since its last event found it empty.
    bool ready_ = true;
    bool peer_done_ = false;  // an event reported the peer's close (or an error)
    bool no_delay_ = false;   // TCP_NODELAY is set
    bool stopping_ = false;   // the server stops: no keep-alive, no next wait
    // Asked the handler, as the header was parsed, whether this request blocks (moves_to_lane):
    // it did not.
    bool asked_blocking_ = false;
    std::size_t empty_line_bytes_ = 0;  // CR and LF bytes skipped before this request
    std::size_t request_taken_ = 0;     // bytes of this request the parser has taken
    std::size_t sent_ = 0;              // of output() while Phase::writing
    // While Phase::on_pool: claimed by the pool thread that starts the request or by its
    // deadline.
    std::shared_ptr<std::atomic<bool>> ticket_;
};

// The phases and their transitions:
//
//   answering -> idle | reading     the answers are out; wait for the socket (do_wait_read)
//   idle | reading -> answering     bytes came (end_wait)
//   idle -> parked                  waited kParkAfter among many connections (park)
//   answering -> handed_off         a blocking request: the connection goes to the lane (hand_off)
//   answering -> on_pool -> answering   a blocking request and its answer (do_pool_answer)
//   answering -> batched -> answering   the answers go in the batch's send (do_answer)
//   answering -> writing -> answering   the socket took only part of them (on_write)
//   answering -> draining           answered, closing, input to drop first (do_close)
//   any but parked, handed_off -> closed   an error, the deadline, the end (close_now)
constexpr bool Session::legal_transition(Phase from, Phase to) {
    switch (from) {
        case Phase::answering:
            return to != Phase::answering && to != Phase::parked;
        case Phase::idle:
            return to == Phase::answering || to == Phase::parked || to == Phase::closed;
        case Phase::reading:
        case Phase::on_pool:
        case Phase::batched:
        case Phase::writing:
            return to == Phase::answering || to == Phase::closed;
        case Phase::draining:
            return to == Phase::closed;
        case Phase::parked:
        case Phase::handed_off:
        case Phase::closed:
            return false;
    }
    return false;
}

inline void Session::enter(Phase next) {
    assert(legal_transition(phase_, next));
    if (phase_ == Phase::idle) context_.parking.not_waiting(idle_);
    phase_ = next;
    if (next == Phase::idle) context_.parking.waiting(idle_);
}

}  // namespace refgate::http
