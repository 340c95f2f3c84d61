#include "refgate/http/server.hpp"

#include <time.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_set>

#include "refgate/domain/time.hpp"
#include "refgate/runtime/log.hpp"
#include "refgate/runtime/log_limiter.hpp"

namespace refgate::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using SteadyClock = std::chrono::steady_clock;

// The kernel's clocks as of its last tick (a few milliseconds old, read without the TSC): enough
// for connection deadlines of seconds and for the Date header, read several times a request.
// CLOCK_MONOTONIC_COARSE counts from the same origin as steady_clock (CLOCK_MONOTONIC).
SteadyClock::time_point coarse_steady_now() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return SteadyClock::time_point(std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

std::int64_t coarse_unix_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return ts.tv_sec;
}

// Bytes read but not yet parsed may exceed a full header by this much (pipelined requests).
constexpr std::size_t kReadSlack = 8 * 1024;
// Responses to pipelined requests are gathered up to this size before they are written.
constexpr std::size_t kMaxPendingOutput = 64 * 1024;
// After a response that closes the connection, unread input is drained this long, so that the
// kernel does not reset the connection before the client has read the response.
constexpr std::chrono::milliseconds kLingerTime{1000};
constexpr int kListenBacklog = 1024;
// Threads for handlers that block (database work of the admin API).
constexpr std::size_t kBlockingThreads = 4;

// Errors of our own that the parser callbacks raise; each maps to one status.
enum class RequestError { none, target_too_long, body_not_allowed, body_too_large };

Method to_method(bhttp::verb verb) {
    switch (verb) {
        case bhttp::verb::get:
            return Method::get;
        case bhttp::verb::head:
            return Method::head;
        case bhttp::verb::post:
            return Method::post;
        case bhttp::verb::put:
            return Method::put;
        case bhttp::verb::patch:
            return Method::patch;
        case bhttp::verb::delete_:
            return Method::del;
        case bhttp::verb::options:
            return Method::options;
        default:
            return Method::other;
    }
}

// What the parser callbacks store about one request. Owned by the connection and reused: the
// strings keep their capacity, and `arena` is reserved to the header limit once, so views into it
// stay valid while a request is parsed.
struct RequestStorage {
    bhttp::verb verb = bhttp::verb::unknown;
    std::string method;
    std::string target;
    int version = 11;
    std::string arena;
    std::vector<HeaderField> fields;
    std::string body;
    int host_fields = 0;
    bool transfer_encoding = false;
    RequestError error = RequestError::none;

    void reset() {
        verb = bhttp::verb::unknown;
        method.clear();
        target.clear();
        version = 11;
        arena.clear();
        fields.clear();
        body.clear();
        host_fields = 0;
        transfer_encoding = false;
        error = RequestError::none;
    }
};

// A request parser that stores nothing of its own: no allocation per request. Beast's
// request_parser would build a fields container (a node per header) every time.
class RequestParser final : public bhttp::basic_parser<true> {
  public:
    RequestParser(RequestStorage& storage, const HttpLimits& limits)
        : storage_(storage), limits_(limits) {
        storage_.reset();
        header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
        body_limit(boost::none);  // enforced in on_body_init_impl, per method
    }

  private:
    void on_request_impl(bhttp::verb method, beast::string_view method_str,
                         beast::string_view target, int version, error_code& ec) override {
        if (target.size() > limits_.max_target_bytes) {
            storage_.error = RequestError::target_too_long;
            ec = bhttp::error::bad_target;
            return;
        }
        storage_.verb = method;
        storage_.method.assign(method_str.data(), method_str.size());
        std::string_view text(target.data(), target.size());
        if (!text.starts_with('/')) {
            // Absolute-form (RFC 9112 section 3.2.2): handlers see its path and query.
            if (auto path = absolute_form_path(text)) {
                text = *path;
                if (!text.starts_with('/')) storage_.target.assign("/");
            }
        }
        storage_.target.append(text);
        storage_.version = version;
    }

    void on_response_impl(int, beast::string_view, int, error_code& ec) override {
        ec = bhttp::error::bad_version;
    }

    void on_field_impl(bhttp::field name, beast::string_view name_string, beast::string_view value,
                       error_code& ec) override {
        if (name == bhttp::field::host) ++storage_.host_fields;
        if (name == bhttp::field::transfer_encoding ||
            iequals({name_string.data(), name_string.size()}, "transfer-encoding")) {
            storage_.transfer_encoding = true;
        }
        auto& arena = storage_.arena;
        if (arena.size() + name_string.size() + value.size() > arena.capacity()) {
            ec = bhttp::error::header_limit;
            return;
        }
        std::size_t name_at = arena.size();
        arena.append(name_string.data(), name_string.size());
        std::size_t value_at = arena.size();
        arena.append(value.data(), value.size());
        storage_.fields.push_back({std::string_view(arena).substr(name_at, name_string.size()),
                                   std::string_view(arena).substr(value_at, value.size())});
    }

    void on_header_impl(error_code&) override {}

    void on_body_init_impl(boost::optional<std::uint64_t> const& content_length,
                           error_code& ec) override {
        if (storage_.verb == bhttp::verb::get || storage_.verb == bhttp::verb::head) {
            storage_.error = RequestError::body_not_allowed;
            ec = bhttp::error::unexpected_body;
        } else if (!content_length || *content_length > limits_.max_body_bytes) {
            storage_.error = RequestError::body_too_large;
            ec = bhttp::error::body_limit;
        } else {
            storage_.body.reserve(static_cast<std::size_t>(*content_length));
        }
    }

    std::size_t on_body_impl(beast::string_view body, error_code&) override {
        storage_.body.append(body.data(), body.size());
        return body.size();
    }

    void on_chunk_header_impl(std::uint64_t, beast::string_view, error_code& ec) override {
        ec = bhttp::error::bad_transfer_encoding;  // never reached: Transfer-Encoding is refused
    }

    std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view, error_code& ec) override {
        ec = bhttp::error::bad_transfer_encoding;
        return 0;
    }

    void on_finish_impl(error_code&) override {}

    RequestStorage& storage_;
    const HttpLimits& limits_;
};

// What a connection uses while it is open. Kept per thread and listener for the next connection,
// so that accepting one allocates nothing but its Session: with Connection: close, malloc and
// free of these took about 6% of the server's CPU.
struct SessionBuffers {
    explicit SessionBuffers(const HttpLimits& limits)
        : input(limits.max_header_bytes + kReadSlack) {
        storage.arena.reserve(limits.max_header_bytes);
    }
    beast::flat_buffer input;
    std::string output;
    RequestStorage storage;
    Response response;
};

class BufferPool {
  public:
    explicit BufferPool(const HttpLimits& limits) : limits_(limits) {}

    std::unique_ptr<SessionBuffers> take() {
        if (spare_.empty()) return std::make_unique<SessionBuffers>(limits_);
        auto buffers = std::move(spare_.back());
        spare_.pop_back();
        return buffers;
    }

    // Buffers that grew past kMaxKeptCapacity (a large admin answer) are freed, not kept.
    void give_back(std::unique_ptr<SessionBuffers> buffers) {
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

  private:
    static constexpr std::size_t kMaxSpare = 256;
    static constexpr std::size_t kMaxKeptCapacity = 64 * 1024;
    const HttpLimits& limits_;
    std::vector<std::unique_ptr<SessionBuffers>> spare_;
};

struct ListenerState;
class Session;

struct ThreadContext {
    // Declared before the io_context: sessions still queued in it deregister and give their
    // buffers back on destruction.
    std::unordered_set<Session*> sessions;
    std::deque<BufferPool> pools;  // one per listener
    asio::io_context ioc{1};
    asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
    std::vector<std::unique_ptr<Handler>> handlers;         // one per listener
    std::vector<std::unique_ptr<tcp::acceptor>> acceptors;  // one per listener
    std::vector<tcp::endpoint> peers;  // one per listener: the address accept() reports
    asio::thread_pool* blocking_pool = nullptr;
    bool stopping = false;
    std::int64_t date_second = -1;
    char date[29] = {};

    std::string_view http_date() {
        std::int64_t now = coarse_unix_seconds();
        if (now != date_second) {
            format_http_date(now, date);
            date_second = now;
        }
        return {date, sizeof date};
    }
};

struct ListenerState {
    ListenerOptions options;
    ServerStats stats;
    std::uint16_t port = 0;
    // Blocking requests posted to the pool and not yet taken by one of its threads.
    std::atomic<std::size_t> queued_blocking{0};
    LogLimiter unavailable_log{std::chrono::seconds{10}};
};

class Session final : public std::enable_shared_from_this<Session> {
  public:
    Session(tcp::socket socket, const tcp::endpoint& remote, ThreadContext& context,
            ListenerState& listener, Handler& handler, BufferPool& pool)
        : socket_(std::move(socket)),
          timer_(context.ioc),
          context_(context),
          listener_(listener),
          limits_(listener.options.limits),
          handler_(handler),
          pool_(pool),
          buffers_(pool.take()),
          input_(buffers_->input),
          output_(buffers_->output),
          storage_(buffers_->storage),
          response_(buffers_->response) {
        context_.sessions.insert(this);
        auto address = remote.address();
        peer_.bytes =
            address.is_v6()
                ? address.to_v6().to_bytes()
                : asio::ip::make_address_v6(asio::ip::v4_mapped, address.to_v4()).to_bytes();
    }

    ~Session() {
        parser_.reset();  // it refers to storage_
        pool_.give_back(std::move(buffers_));
        context_.sessions.erase(this);
        listener_.stats.open_connections.fetch_sub(1, std::memory_order_relaxed);
    }

    void start() {
        arm(limits_.read_timeout);
        wait_timer();
        read_more();
    }

    // The server is stopping: an idle connection closes now, a busy one after its response.
    void stop() {
        stopping_ = true;
        bool idle = !writing_ && !busy_ && input_.size() == 0 && !(parser_ && parser_->got_some());
        if (idle) close_now();
    }

  private:
    // Moving the deadline later is a store; moving it earlier re-arms the timer.
    void arm(std::chrono::milliseconds timeout) {
        deadline_ = coarse_steady_now() + timeout;
        if (deadline_ < timer_.expiry()) wait_timer();
    }

    // One timer per connection, re-armed only when it fires: moving the deadline is a store.
    void wait_timer() {
        timer_.expires_at(deadline_);
        timer_.async_wait([self = shared_from_this()](error_code ec) {
            if (ec || self->closed_) return;
            if (SteadyClock::now() >= self->deadline_) {
                self->on_deadline();
            } else {
                self->wait_timer();
            }
        });
    }

    void read_more() {
        if (closed_) return;
        if (stopping_ && input_.size() == 0 && !(parser_ && parser_->got_some())) {
            close_now();
            return;
        }
        // The read timeout covers the wait for a request and its whole header: a client that
        // trickles bytes does not push the deadline back.
        bool waiting =
            input_.size() == 0 && empty_line_bytes_ == 0 && !(parser_ && parser_->got_some());
        if (waiting || rearm_read_) arm(limits_.read_timeout);
        rearm_read_ = false;
        std::size_t space = input_.max_size() - input_.size();
        socket_.async_read_some(input_.prepare(space),
                                [self = shared_from_this()](error_code ec, std::size_t n) {
                                    self->input_.commit(n);
                                    // A read may complete after stop() closed the connection:
                                    // answering (and counting) it then would reach nobody.
                                    if (ec || self->closed_) {
                                        self->close_now();
                                        return;
                                    }
                                    self->process();
                                });
    }

    // Parses every complete request already buffered, answers each into the output buffer, then
    // writes (or reads more when nothing is ready).
    void process() {
        while (!closing_) {
            if (!parser_) {
                parser_.emplace(storage_, limits_);
                header_checked_ = false;
                empty_line_bytes_ = 0;
            }
            if (input_.size() == 0) break;
            if (starts_with_line_break() && !parser_->got_some()) {
                if (!skip_empty_lines()) break;
                if (input_.size() == 0) break;
            }
            error_code ec;
            std::size_t used = parser_->put(input_.data(), ec);
            input_.consume(used);
            if (ec == bhttp::error::need_more) break;
            if (ec) {
                reject(ec);
                break;
            }
            if (parser_->is_header_done() && !header_checked_) {
                header_checked_ = true;
                if (!check_header()) break;
            }
            if (parser_->is_done()) {
                if (handler_.blocking(make_request())) {
                    if (answer_on_pool()) return;  // resumes process() on this thread when done
                } else {
                    answer();
                }
                parser_.reset();
                if (output_.size() >= kMaxPendingOutput) break;
                continue;
            }
            if (used == 0) break;
        }
        if (!output_.empty()) {
            write_output();
        } else if (closing_) {
            linger_close();
        } else {
            read_more();
        }
    }

    bool starts_with_line_break() const {
        char first = *static_cast<const char*>(input_.data().data());
        return first == '\r' || first == '\n';
    }

    // Empty lines before a request line are ignored (RFC 9112 section 2.2). They count against
    // the header limit, and do not move the read deadline, so a stream of them cannot hold the
    // connection. False when the connection is refused.
    bool skip_empty_lines() {
        const char* bytes = static_cast<const char*>(input_.data().data());
        std::size_t n = 0;
        while (n < input_.size() && (bytes[n] == '\r' || bytes[n] == '\n')) ++n;
        input_.consume(n);
        empty_line_bytes_ += n;
        if (empty_line_bytes_ <= limits_.max_header_bytes) return true;
        answer_error(400, "Bad Request");
        return false;
    }

    // Checks of a complete header, before its body is read; false when the request is refused.
    bool check_header() {
        if (storage_.transfer_encoding) {
            // Beast 1.81 mis-frames some Transfer-Encoding shapes; refgate needs none.
            answer_error(400, "Bad Request");
            return false;
        }
        // An HTTP/1.1 request names exactly one Host, an HTTP/1.0 one at most (RFC 9112 3.2).
        if (storage_.host_fields > 1 || (storage_.version >= 11 && storage_.host_fields == 0)) {
            answer_error(400, "Bad Request");
            return false;
        }
        // Refuse a body by its announced length, without waiting for it to arrive.
        auto length = parser_->content_length().value_or(0);
        bool bodiless = storage_.verb == bhttp::verb::get || storage_.verb == bhttp::verb::head;
        if (bodiless && length > 0) {
            answer_error(400, "Bad Request");
            return false;
        }
        if (length > limits_.max_body_bytes) {
            answer_error(413, "Content Too Large");
            return false;
        }
        // A client that waits for "100 Continue" before sending its body gets it now (RFC 9110
        // 10.1.1); a refusal above was its final answer instead.
        if (length > input_.size() && storage_.version >= 11 && expects_continue()) {
            output_.append("HTTP/1.1 100 Continue\r\n\r\n");
            rearm_read_ = true;  // the body's wait starts now
        }
        return true;
    }

    bool expects_continue() const {
        for (const auto& f : storage_.fields) {
            if (iequals(f.name, "expect") && iequals(f.value, "100-continue")) return true;
        }
        return false;
    }

    void reject(error_code ec) {
        switch (storage_.error) {
            case RequestError::target_too_long:
                answer_error(414, "URI Too Long");
                return;
            case RequestError::body_not_allowed:
                answer_error(400, "Bad Request");
                return;
            case RequestError::body_too_large:
                answer_error(413, "Content Too Large");
                return;
            case RequestError::none:
                break;
        }
        if (ec == bhttp::error::header_limit) {
            answer_error(
                request_line_too_long() ? 414 : 431,
                request_line_too_long() ? "URI Too Long" : "Request Header Fields Too Large");
            return;
        }
        answer_error(400, "Bad Request");
    }

    // When the header limit is hit before the request line was parsed, the target is what is long.
    bool request_line_too_long() const { return storage_.method.empty(); }

    void answer_error(int status, std::string_view title) {
        listener_.stats.rejected_requests.fetch_add(1, std::memory_order_relaxed);
        response_.reset();
        response_.simple_page(status, title);
        response_.set_close();
        serialize(false, false);
        closing_ = true;
        linger_ = true;  // the client may still be sending what was refused
    }

    Request make_request() const {
        Request request;
        request.method = to_method(storage_.verb);
        request.method_name = storage_.method;
        request.target = storage_.target;
        request.version = storage_.version;
        request.fields = &storage_.fields;
        request.body = storage_.body;
        request.peer = peer_;
        return request;
    }

    void answer() {
        response_.reset();
        handler_.handle(make_request(), response_);
        finish_answer();
    }

    void finish_answer() {
        bool client_keeps = parser_->keep_alive();
        bool keep_alive = client_keeps && !response_.close() && !stopping_;
        serialize(storage_.verb == bhttp::verb::head, keep_alive);
        if (!keep_alive) closing_ = true;
        // A client that meant to keep the connection may already be sending its next request.
        if (!keep_alive && client_keeps) linger_ = true;
    }

    // A handler that blocks (on PostgreSQL, say) runs on the server's blocking pool, never on an
    // I/O thread. The connection reads nothing more until the answer is back; the request's
    // storage stays untouched meanwhile. The wait for a pool thread is bounded twice: a request
    // finding the listener's queue full is refused at once, and one still queued at its deadline
    // is answered then (on_deadline); the pool thread that finds it later drops it.
    // False when the request was refused (answered) at once.
    bool answer_on_pool() {
        auto& queued = listener_.queued_blocking;
        if (queued.fetch_add(1, std::memory_order_relaxed) >=
            listener_.options.max_blocking_queue) {
            queued.fetch_sub(1, std::memory_order_relaxed);
            answer_unavailable("queue_full");
            return false;
        }
        response_.reset();
        busy_ = true;
        ticket_ = std::make_shared<std::atomic<bool>>(false);
        arm(listener_.options.blocking_wait);
        asio::post(*context_.blocking_pool,
                   [self = shared_from_this(), ticket = ticket_]() mutable {
                       self->listener_.queued_blocking.fetch_sub(1, std::memory_order_relaxed);
                       // Whoever claims the ticket first answers: this thread, or the deadline.
                       bool expired = ticket->exchange(true);
                       if (!expired) self->handler_.handle(self->make_request(), self->response_);
                       // The session moves on to its I/O thread, so that it is destroyed there,
                       // never on the pool's thread (its destructor touches the thread's session
                       // set and pool).
                       auto& ioc = self->context_.ioc;
                       asio::post(ioc, [self = std::move(self), expired] {
                           if (expired) return;
                           self->busy_ = false;
                           self->ticket_.reset();
                           if (self->closed_) return;
                           self->finish_answer();
                           self->parser_.reset();
                           self->process();
                       });
                   });
        return true;
    }

    // The deadline passed. A request still waiting for a pool thread is answered now; one that a
    // pool thread is working on gets another read timeout before the connection is closed.
    void on_deadline() {
        if (busy_ && ticket_) {
            bool started = ticket_->exchange(true);
            ticket_.reset();
            deadline_ = coarse_steady_now() + limits_.read_timeout;
            wait_timer();
            if (started) return;
            busy_ = false;
            answer_unavailable("queue_wait");
            parser_.reset();
            process();
            return;
        }
        close_now();
    }

    // Refuses a blocking request that the pool cannot take in time.
    void answer_unavailable(std::string_view reason) {
        auto count = listener_.stats.unavailable_requests.fetch_add(1, std::memory_order_relaxed);
        if (listener_.unavailable_log.allow()) {
            log::warn("blocking_pool_busy", {{"listener", listener_.options.name},
                                             {"reason", reason},
                                             {"unavailable_total", count + 1}});
        }
        response_.reset();
        handler_.unavailable(make_request(), response_);
        finish_answer();
    }

    void serialize(bool head, bool keep_alive) {
        char digits[24];
        auto status = response_.status();
        output_.append("HTTP/1.1 ");
        output_.append(digits, std::to_chars(digits, digits + sizeof digits, status).ptr);
        output_.push_back(' ');
        output_.append(reason_phrase(status));
        output_.append("\r\n");
        output_.append(response_.headers());
        // A 304 has no body, and a Content-Length there would have to be the full body's length.
        if (status != 304) {
            output_.append("Content-Length: ");
            output_.append(
                digits, std::to_chars(digits, digits + sizeof digits, response_.body().size()).ptr);
            output_.append("\r\n");
        }
        output_.append("Date: ");
        output_.append(context_.http_date());
        if (!keep_alive) {
            output_.append("\r\nConnection: close");
        } else if (storage_.version == 10) {
            output_.append("\r\nConnection: keep-alive");
        }
        output_.append("\r\n\r\n");
        if (!head && status != 304) output_.append(response_.body());
    }

    void write_output() {
        // Nagle's algorithm could hold back a response while an earlier one is unacknowledged;
        // only a connection that stays open can have one. Switched off then, as nginx does, so
        // that a Connection: close exchange spends no system call on it.
        if (!closing_ && !no_delay_) {
            no_delay_ = true;
            error_code ec;
            socket_.set_option(tcp::no_delay(true), ec);
        }
        writing_ = true;
        arm(limits_.write_timeout);
        asio::async_write(socket_, asio::buffer(output_),
                          [self = shared_from_this()](error_code ec, std::size_t) {
                              self->writing_ = false;
                              self->output_.clear();
                              if (ec) {
                                  self->close_now();
                                  return;
                              }
                              if (self->closing_) {
                                  self->linger_close();
                              } else {
                                  self->process();
                              }
                          });
    }

    // A close with input unread makes the kernel reset the connection, and a reset can destroy
    // the response before the client read it. So after a refusal (the client may still be
    // sending), or when the client meant to keep the connection (the server is stopping), or
    // with bytes already read and not parsed, the input is drained for up to kLingerTime first.
    // After an answer to a client that asked for Connection: close, it has sent all it meant to,
    // and the socket is closed at once, as nginx does: the client gets the response, then FIN.
    void linger_close() {
        if (closed_) return;
        if (!linger_ && input_.size() == 0) {
            close_now();
            return;
        }
        error_code ec;
        socket_.shutdown(tcp::socket::shutdown_send, ec);
        if (ec) {
            close_now();
            return;
        }
        arm(kLingerTime);
        drain();
    }

    void drain() {
        input_.clear();
        socket_.async_read_some(input_.prepare(input_.max_size()),
                                [self = shared_from_this()](error_code ec, std::size_t) {
                                    if (ec) {
                                        self->close_now();
                                    } else {
                                        self->drain();
                                    }
                                });
    }

    void close_now() {
        if (closed_) return;
        closed_ = true;
        error_code ec;
        socket_.close(ec);
        timer_.cancel();
    }

    tcp::socket socket_;
    asio::steady_timer timer_;
    SteadyClock::time_point deadline_;
    ThreadContext& context_;
    ListenerState& listener_;
    const HttpLimits& limits_;
    Handler& handler_;
    BufferPool& pool_;
    std::unique_ptr<SessionBuffers> buffers_;
    beast::flat_buffer& input_;
    std::string& output_;
    RequestStorage& storage_;
    Response& response_;
    std::optional<RequestParser> parser_;
    PeerAddress peer_;
    bool header_checked_ = false;
    bool rearm_read_ = false;  // a 100 Continue went out: the body gets a full read timeout
    std::size_t empty_line_bytes_ = 0;  // CR and LF bytes skipped before this request
    bool closing_ = false;
    bool linger_ = false;    // drain the input before closing, whatever is buffered now
    bool no_delay_ = false;  // TCP_NODELAY is set
    bool writing_ = false;
    bool busy_ = false;  // a blocking handler is working on this connection's request
    // While busy_: claimed by the pool thread that starts the request or by its deadline.
    std::shared_ptr<std::atomic<bool>> ticket_;
    bool stopping_ = false;
    bool closed_ = false;
};

asio::ip::address resolve_host(const std::string& host) {
    if (host == "localhost") return asio::ip::make_address("127.0.0.1");
    error_code ec;
    auto address = asio::ip::make_address(host, ec);
    if (ec) throw std::runtime_error("'" + host + "' is not an IP address");
    return address;
}

void accept_loop(ThreadContext& context, ListenerState& listener, tcp::acceptor& acceptor,
                 tcp::endpoint& peer, Handler& handler, BufferPool& pool) {
    // The peer's address comes with accept(): no getpeername() per connection.
    acceptor.async_accept(peer, [&context, &listener, &acceptor, &peer, &handler, &pool](
                                    error_code ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted || context.stopping) return;
        if (ec) {
            log::warn("accept_failed",
                      {{"listener", listener.options.name}, {"error", ec.message()}});
        } else if (static_cast<std::size_t>(listener.stats.open_connections.fetch_add(
                       1, std::memory_order_relaxed)) >= listener.options.limits.max_connections) {
            // The slot is reserved before the check, so threads together never exceed the cap.
            listener.stats.open_connections.fetch_sub(1, std::memory_order_relaxed);
            listener.stats.rejected_connections.fetch_add(1, std::memory_order_relaxed);
            error_code ignored;
            socket.close(ignored);
        } else {
            std::make_shared<Session>(std::move(socket), peer, context, listener, handler, pool)
                ->start();
        }
        accept_loop(context, listener, acceptor, peer, handler, pool);
    });
}

}  // namespace

void Handler::unavailable(const Request&, Response& response) {
    response.simple_page(503, "Service Unavailable");
    response.add_header("Retry-After", "1");
}

struct Server::Impl {
    asio::thread_pool blocking_pool{kBlockingThreads};
    std::vector<std::unique_ptr<ListenerState>> listeners;
    std::vector<std::unique_ptr<ThreadContext>> contexts;
    std::vector<std::thread> threads;
    std::mutex mutex;
    std::condition_variable finished_cv;
    std::size_t finished = 0;
    bool started = false;
    bool joined = false;

    void join_all() {
        for (auto& t : threads) {
            if (t.joinable()) t.join();
        }
        joined = true;
    }
};

Server::Server(unsigned threads, std::vector<ListenerOptions> listeners)
    : impl_(std::make_unique<Impl>()) {
    if (threads == 0) threads = 1;
    for (unsigned i = 0; i < threads; ++i) {
        impl_->contexts.push_back(std::make_unique<ThreadContext>());
        impl_->contexts.back()->blocking_pool = &impl_->blocking_pool;
    }
    for (auto& options : listeners) {
        auto state = std::make_unique<ListenerState>();
        state->options = std::move(options);
        impl_->listeners.push_back(std::move(state));
    }
}

Server::~Server() {
    if (impl_->started && !impl_->joined) shutdown(std::chrono::milliseconds{0});
}

namespace {

// Binds and closes a socket without SO_REUSEPORT: it fails with EADDRINUSE when anyone holds the
// port, even another process that set SO_REUSEPORT (our own acceptors would silently share it).
void check_port_free(const tcp::endpoint& endpoint) {
    asio::io_context ioc{1};
    tcp::acceptor probe(ioc);
    probe.open(endpoint.protocol());
    // SO_REUSEADDR only lets the probe past a previous instance's connections in TIME_WAIT.
    probe.set_option(asio::socket_base::reuse_address(true));
    error_code ec;
    probe.bind(endpoint, ec);
    if (ec == asio::error::address_in_use) {
        throw std::runtime_error(
            "the port is in use by another process (set REFGATE_REUSE_PORT=true to share it)");
    }
    if (ec) throw boost::system::system_error(ec);
}

}  // namespace

void Server::bind() {
    using reuse_port = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
    for (auto& listener : impl_->listeners) {
        const auto& ep = listener->options.endpoint;
        try {
            auto address = resolve_host(ep.host);
            if (ep.port != 0 && !listener->options.share_port)
                check_port_free(tcp::endpoint(address, ep.port));
            // With port 0 the first acceptor gets a fresh port from the kernel; the others join it.
            for (auto& context : impl_->contexts) {
                auto acceptor = std::make_unique<tcp::acceptor>(context->ioc);
                tcp::endpoint endpoint(address, listener->port != 0 ? listener->port : ep.port);
                acceptor->open(endpoint.protocol());
                acceptor->set_option(asio::socket_base::reuse_address(true));
                acceptor->set_option(reuse_port(true));
                acceptor->bind(endpoint);
                acceptor->listen(kListenBacklog);
                listener->port = acceptor->local_endpoint().port();
                context->acceptors.push_back(std::move(acceptor));
            }
        } catch (const std::exception& e) {
            throw std::runtime_error("cannot listen on " + ep.to_string() + " (" +
                                     listener->options.name + " listener): " + e.what());
        }
    }
}

std::uint16_t Server::port(std::size_t index) const { return impl_->listeners.at(index)->port; }

const ServerStats& Server::stats(std::size_t listener) const {
    return impl_->listeners.at(listener)->stats;
}

void Server::start() {
    impl_->started = true;
    for (auto& context : impl_->contexts) {
        for (std::size_t i = 0; i < impl_->listeners.size(); ++i) {
            context->handlers.push_back(impl_->listeners[i]->options.handler_factory());
        }
        context->peers.resize(impl_->listeners.size());
        for (const auto& listener : impl_->listeners)
            context->pools.emplace_back(listener->options.limits);
        for (std::size_t i = 0; i < impl_->listeners.size(); ++i) {
            accept_loop(*context, *impl_->listeners[i], *context->acceptors[i], context->peers[i],
                        *context->handlers[i], context->pools[i]);
        }
    }
    for (auto& context : impl_->contexts) {
        impl_->threads.emplace_back([this, ctx = context.get()] {
            ctx->ioc.run();
            std::lock_guard lock(impl_->mutex);
            ++impl_->finished;
            impl_->finished_cv.notify_all();
        });
    }
}

void Server::shutdown(std::chrono::milliseconds timeout) {
    if (!impl_->started || impl_->joined) return;
    for (auto& context : impl_->contexts) {
        asio::post(context->ioc, [ctx = context.get()] {
            ctx->stopping = true;
            for (auto& acceptor : ctx->acceptors) {
                error_code ignored;
                acceptor->close(ignored);
            }
            // stop() may close a session, which removes it from the set: iterate over a copy.
            std::vector<Session*> sessions(ctx->sessions.begin(), ctx->sessions.end());
            for (Session* s : sessions) s->stop();
            ctx->work.reset();
        });
    }
    std::unique_lock lock(impl_->mutex);
    bool drained = impl_->finished_cv.wait_for(
        lock, timeout, [this] { return impl_->finished == impl_->contexts.size(); });
    lock.unlock();
    if (!drained) {
        log::warn("shutdown_timeout", {{"timeout_ms", timeout.count()}});
        for (auto& context : impl_->contexts) context->ioc.stop();
    }
    impl_->join_all();
    impl_->blocking_pool.join();
}

}  // namespace refgate::http
