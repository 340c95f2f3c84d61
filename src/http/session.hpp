#pragma once

// One client connection (Session) and what an I/O thread keeps for its connections. Private to
// the server: session.cpp does the connection's I/O, server.cpp accepts and runs the threads.

#include <sys/socket.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
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
    explicit SessionBuffers(const HttpLimits& limits);
    boost::beast::flat_buffer input;
    std::string output;
    RequestStorage storage;
    Response response;
};

class BufferPool {
  public:
    explicit BufferPool(const HttpLimits& limits) : limits_(limits) {}
    std::unique_ptr<SessionBuffers> take();
    // Buffers that grew past kMaxKeptCapacity (a large admin answer) are freed, not kept.
    void give_back(std::unique_ptr<SessionBuffers> buffers);
    // Frees spare buffers beyond `keep`; how many were freed.
    std::size_t shrink_to(std::size_t keep);

  private:
    static constexpr std::size_t kMaxSpare = 256;
    static constexpr std::size_t kMaxKeptCapacity = 64 * 1024;
    const HttpLimits& limits_;
    std::vector<std::unique_ptr<SessionBuffers>> spare_;
};

class Session;

// Everything of one I/O thread: its io_context, and per listener its acceptor, handler and
// buffer pool.
struct ListenerState;

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
    LogLimiter poll_failure_log{std::chrono::seconds{10}};
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
    LogLimiter unavailable_log{std::chrono::seconds{10}};
    LogLimiter handler_error_log{std::chrono::seconds{10}};
    LogLimiter accept_error_log{std::chrono::seconds{10}};
    LogLimiter client_share_log{std::chrono::seconds{10}};

    // An open connection from `peer` closed (its Session ended, or it was closed parked).
    void closed(const PeerAddress& peer) {
        stats.open_connections.fetch_sub(1, std::memory_order_relaxed);
        if (shares) shares->give_back(peer.bytes);
    }
};

// The peer's address as refgate stores it (IPv4 as IPv4-mapped IPv6), from what accept4()
// reported.
PeerAddress peer_address(const sockaddr_storage& remote);

// A connection: read -> parse -> handle -> write, pipelined requests answered in order in one
// write, one deadline timer, no strand (it lives on one thread).
class Session final : public std::enable_shared_from_this<Session> {
  public:
    // Takes the connected, non-blocking socket `fd`.
    Session(int fd, const PeerAddress& peer, ThreadContext& context, std::uint8_t listener);
    ~Session();

    void start();
    // Takes up a parked connection (its socket is readable) until `deadline`.
    void resume(SteadyClock::time_point deadline, bool no_delay);
    // The server is stopping: an idle connection closes now, a busy one after its response.
    void stop();

  private:
    friend class IdleParking;
    friend class ConnectionPoller;
    void park();
    void arm(std::chrono::milliseconds timeout);
    void wait_timer();
    void read_more();
    void on_events(std::uint32_t events);
    void readable();
    bool stop_waiting();
    void receive();
    bool take_input();
    boost::asio::mutable_buffer input_room();
    bool took_input(ssize_t n);
    void start_parser();
    // A batch of ready connections in four passes (ConnectionPoller::dispatch), so that the
    // loads a request needs overlap the other connections' reads: read_ahead() queues the
    // socket's read in the batch's BatchIo (true), or handles its events like on_events() when
    // they are not a plain arrival; receive_ahead() takes the read's result and, when the bytes
    // start a request, tells the handler its path (Handler::Parsed::arrived) and leaves it for
    // later (true); prepare_ahead() tells it again (a load that needs the first one's);
    // process_ahead() answers like process() but leaves the answers' send() to write_ahead(),
    // which queues it in the BatchIo (true), and wrote_ahead() takes its result.
    bool read_ahead(std::uint32_t events, BatchIo& io);
    bool receive_ahead(ssize_t received);
    void prepare_ahead();
    void process_ahead();
    bool write_ahead(BatchIo& io);
    void wrote_ahead(ssize_t sent);
    std::string_view arriving_path() const;
    bool poll();
    bool holds_request() const;
    bool closes_at_once() const;
    bool lean() const;
    boost::beast::flat_buffer& input() const { return buffers_->input; }
    std::string& output() const { return buffers_->output; }
    RequestStorage& storage() const { return buffers_->storage; }
    Response& response() const { return buffers_->response; }
    void process();
    bool starts_with_line_break() const;
    bool skip_empty_lines();
    bool check_header();
    void answer_error(int status, std::string_view title);
    Request make_request() const;
    void answer();
    void call_handler();
    void handler_failed(const char* error);
    void finish_answer();
    bool answer_on_pool();
    void on_deadline();
    void answer_unavailable(std::string_view reason);
    void serialize(bool head, bool keep_alive);
    void write_output();
    int write_flags();
    void wrote(ssize_t n);
    void continue_write();
    void written();
    void linger_close();
    void drain();
    void close_now();

    // The connection's socket, non-blocking from accept4(). It joins the thread's
    // ConnectionPoller only when the connection first waits (poll()), so that an exchange
    // answered at once (Connection: close) is accept4, recv, send, shutdown and close, and no
    // epoll_ctl.
    int fd_;
    std::uint32_t poll_slot_ = ConnectionPoller::kNone;
    asio::steady_timer timer_;
    SteadyClock::time_point deadline_;
    ThreadContext& context_;
    ListenerState& listener_;
    const HttpLimits& limits_;
    Handler& handler_;
    BufferPool& pool_;
    // Held while the connection has a request or a response in hand; an idle keep-alive
    // connection among many gives them back to the thread's pool (read_more).
    std::unique_ptr<SessionBuffers> buffers_;
    std::optional<RequestParser> parser_;
    PeerAddress peer_;
    // Waiting for a next request among many connections: listed in the thread's IdleParking.
    Session* idle_prev_ = nullptr;
    Session* idle_next_ = nullptr;
    SteadyClock::time_point idle_since_;
    std::uint8_t listener_index_;
    bool idle_listed_ = false;
    bool parked_ = false;  // the socket went to the parking: the connection is still open
    // The socket may hold bytes: no read since its last event found it empty.
    bool ready_ = true;
    bool peer_done_ = false;       // an event reported the peer's close (or an error)
    bool awaiting_input_ = false;  // waits for the socket's next bytes (read_more)
    bool draining_ = false;        // reads only to drop, then closes (linger_close)
    bool header_checked_ = false;
    bool rearm_read_ = false;  // a 100 Continue went out: the body gets a full read timeout
    std::size_t empty_line_bytes_ = 0;  // CR and LF bytes skipped before this request
    bool closing_ = false;
    bool linger_ = false;    // drain the input before closing, whatever is buffered now
    bool no_delay_ = false;  // TCP_NODELAY is set
    bool writing_ = false;   // waits for the socket to take the rest of output(), from sent_
    std::size_t sent_ = 0;
    bool busy_ = false;  // a blocking handler is working on this connection's request
    // While busy_: claimed by the pool thread that starts the request or by its deadline.
    std::shared_ptr<std::atomic<bool>> ticket_;
    bool stopping_ = false;
    bool closed_ = false;
    bool defer_write_ = false;  // process() leaves the answers it wrote to write_ahead()
    bool write_deferred_ = false;
};

}  // namespace refgate::http
