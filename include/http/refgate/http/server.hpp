#pragma once

// An HTTP/1.1 server for small, fast answers: keep-alive and pipelining, one connection per
// thread without strands, parsers and buffers reused per connection, one deadline timer per
// connection, limits on everything a client controls. It knows no handler; it calls one.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "refgate/config/config.hpp"
#include "refgate/domain/ip_network.hpp"
#include "refgate/http/request.hpp"
#include "refgate/http/response.hpp"

namespace refgate::http {

class Handler {
  public:
    virtual ~Handler() = default;
    virtual void handle(const Request& request, Response& response) = 0;
    // True when answering this request may block (database work): the server then calls handle()
    // on a small pool of its own, never on an I/O thread, possibly from several threads at once.
    // Decided per request, so that a listener's quick routes never queue behind its slow ones.
    // Asked once the header is parsed (Request::body still empty): a blocking request moves its
    // connection to the server's blocking lane (Server); asked again when the request is complete
    // only if it was not asked then (on the lane, and for a request in pieces).
    virtual bool blocking(const Request&) const { return may_block(); }
    // True when some request may block; false lets a router skip the per-request question.
    virtual bool may_block() const { return false; }
    // The answer to a blocking request that the pool could not start within the listener's
    // bound: 503 with Retry-After unless overridden. Called on an I/O thread; must not block.
    virtual void unavailable(const Request& request, Response& response);
    // Told a request's path before handle(), on the I/O thread: when its request line is parsed
    // (again when the parser's fast path leaves a header to Beast, which reads it from the start)
    // and once when its whole header is. A handler may start loading what handle() will read
    // (a prefetch), so that the loads overlap the parsing; a load that depends on another can
    // start at a later call, once the first has arrived. What it works out for handle() goes in
    // `notes` (handle() finds them in Request::notes). Must change nothing else that a request
    // can see. `arrived`: the bytes of a request line with this path came in and wait to be
    // parsed (told up to twice, before the request line); the parser keeps what was noted only
    // if its request line has the same path (RequestStorage::confirm).
    enum class Parsed { arrived, request_line, header };
    virtual void prepare(std::string_view /*path*/, Parsed /*stage*/, RequestNotes& /*notes*/) {}
};

// Called once per I/O thread, so handlers may keep per-thread state without locks.
using HandlerFactory = std::function<std::unique_ptr<Handler>()>;

struct ListenerOptions {
    std::string name;  // "public", "admin": for logs
    config::Endpoint endpoint;
    config::HttpLimits limits;
    // Off: bind() fails when any other socket holds the port. On: another process that sets
    // SO_REUSEPORT too may share it (and its connections), e.g. during a restart.
    bool share_port = false;
    HandlerFactory handler_factory;
    // A blocking request that no pool thread has started within this time is answered
    // unavailable(); so is one that arrives while `max_blocking_queue` requests wait already.
    std::chrono::milliseconds blocking_wait{2'000};
    std::size_t max_blocking_queue = 64;
    // Addresses that carry many clients (trusted proxies): not held to
    // limits.max_connections_per_client, only to the listener's cap.
    std::vector<domain::IpNetwork> proxies;
};

struct ServerStats {
    std::atomic<std::int64_t> open_connections{0};
    // Of those, idle ones parked (src/http/parking.hpp): a socket and a slot each, no Session.
    std::atomic<std::int64_t> parked_connections{0};
    std::atomic<std::uint64_t> rejected_connections{0};
    // Of those, the ones whose client held its share (HttpLimits::max_connections_per_client).
    std::atomic<std::uint64_t> rejected_client_share{0};
    std::atomic<std::uint64_t> rejected_requests{0};  // answered by the server itself (400, 431...)
    // Blocking requests answered unavailable() because the pool was busy past the bound.
    std::atomic<std::uint64_t> unavailable_requests{0};
    // Requests whose handler threw: answered 500, logged at a bounded rate.
    std::atomic<std::uint64_t> handler_errors{0};
    // Connections an I/O thread handed to the blocking lane with their first blocking request
    // (Server): each once, as the lane keeps them.
    std::atomic<std::uint64_t> handed_off{0};
};

// Runs `threads` I/O threads, each with its own io_context; every listener has an acceptor per
// thread (SO_REUSEPORT), so a connection lives on the thread that accepted it, until it has a
// blocking request. Then it moves, whole, to one more I/O thread, the blocking lane ("rg-lane",
// at the blocking pool's background priority, no acceptors), which serves it from then on: the
// I/O threads' time goes to the requests that do not block (redirects), not to waking the pool
// and sending its answers. ServerStats::handed_off counts the moves.
class Server {
  public:
    // `io_uring`: each thread reads (and sends) a batch of ready connections in one system call
    // where the kernel allows it; false: a call per connection.
    Server(unsigned threads, std::vector<ListenerOptions> listeners, bool io_uring = true);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // How many handlers start() makes per listener (one per I/O thread, one for the lane): a
    // factory that hands out per-thread state has that many to hand out.
    static unsigned handler_threads(unsigned threads);

    // Binds every listener; throws std::runtime_error naming the listener when it cannot.
    void bind();
    // The bound port of listener `index` (useful with port 0).
    std::uint16_t port(std::size_t index) const;
    // Starts the threads; returns once each has made its io_uring (or found it refused).
    void start();
    // Stops accepting, lets in-flight requests finish (idle connections are closed at once) and
    // waits for every connection to end, at most `timeout`; then stops the threads.
    void shutdown(std::chrono::milliseconds timeout);

    const ServerStats& stats(std::size_t listener) const;
    // The I/O threads whose batches go through io_uring now (from start() on): none when it was
    // not wanted or the kernel refused it, fewer than all when a thread could not make its ring
    // or dropped it after the kernel failed a batch (logged io_uring_failed).
    unsigned io_uring_threads() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace refgate::http
