#include "refgate/http/server.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <latch>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "refgate/runtime/background_thread.hpp"
#include "refgate/runtime/log.hpp"
#include "session.hpp"

namespace refgate::http {
namespace {

constexpr int kListenBacklog = 1024;
// Threads for handlers that block (database work of the admin API and the postbacks).
constexpr std::size_t kBlockingThreads = 4;

// The blocking pool's threads run at background priority (SCHED_BATCH at nice 10, as the click
// sender does): a postback's or an API call's SHA-256, libpqxx and JSON work then never preempts
// an I/O thread answering redirects, and gets a tenth of its share while both want a CPU. Under
// CPU contention the pool's requests slow down; redirects do not. Each of the pool's threads
// takes one of these tasks: every task waits until all have started, so no thread takes two.
void lower_pool_priority(asio::thread_pool& pool) {
    // Shared: a task may still be returning from its wait when this function returns.
    auto started = std::make_shared<std::latch>(static_cast<std::ptrdiff_t>(kBlockingThreads));
    for (std::size_t i = 0; i < kBlockingThreads; ++i) {
        asio::post(pool, [started] {
            runtime::become_background_thread("rg-blocking", runtime::BackgroundPriority::low);
            started->arrive_and_wait();
        });
    }
    started->wait();
}

asio::ip::address resolve_host(const std::string& host) {
    if (host == "localhost") return asio::ip::make_address("127.0.0.1");
    error_code ec;
    auto address = asio::ip::make_address(host, ec);
    if (ec) throw std::runtime_error("'" + host + "' is not an IP address");
    return address;
}

// New connections are taken with accept4() as non-blocking sockets (a Session's recv and send
// never block), all that are waiting each time the listening socket is readable: Asio
// watches it edge-triggered, so what is left in the backlog would wait for the next connection to
// be noticed. Batches of kAcceptBatch let the thread's connections run in between.
constexpr int kAcceptBatch = 64;
// After an error that leaves connections in the backlog (out of descriptors or memory), the
// next try comes this much later, not in a busy loop.
constexpr std::chrono::milliseconds kAcceptRetry{100};

void accept_pending(ThreadContext& context, std::uint8_t index);

// An error of one connection that failed before it was taken (accept(2) asks to treat the
// network's errors like EAGAIN): the next one may be fine. Anything else (EMFILE, ENFILE,
// ENOBUFS, ENOMEM) is the process's or the system's, and is tried again kAcceptRetry later.
bool failed_connection(int error) {
    switch (error) {
        case EINTR:
        case ECONNABORTED:
        case EPROTO:
        case EPERM:  // a firewall rule
        case ENETDOWN:
        case ENOPROTOOPT:
        case EHOSTDOWN:
        case ENONET:
        case EHOSTUNREACH:
        case EOPNOTSUPP:
        case ENETUNREACH:
            return true;
        default:
            return false;
    }
}

void wait_for_connections(ThreadContext& context, std::uint8_t index) {
    context.acceptors[index]->async_wait(
        tcp::acceptor::wait_read, [&context, index](error_code ec) {
            if (ec == asio::error::operation_aborted || context.stopping) return;
            accept_pending(context, index);
        });
}

// A connection closed at accept because its client holds its share of the listener already.
void refuse_over_share(ListenerState& listener, int fd) {
    listener.stats.open_connections.fetch_sub(1, std::memory_order_relaxed);
    listener.stats.rejected_connections.fetch_add(1, std::memory_order_relaxed);
    auto count = listener.stats.rejected_client_share.fetch_add(1, std::memory_order_relaxed);
    // Never the client's address: nothing about a client is logged.
    if (listener.client_share_log.allow()) {
        runtime::log::warn(
            "client_share_full",
            {{"listener", listener.options.name},
             {"max_connections_per_client", listener.options.limits.max_connections_per_client},
             {"client_share_rejected_connections_total", count + 1}});
    }
    ::close(fd);
}

// One connection the kernel handed over: a Session, or a close when the listener is full or the
// connection's client holds its share of it.
void admit(ThreadContext& context, std::uint8_t index, int fd, const sockaddr_storage& peer) {
    ListenerState& listener = *context.listeners[index];
    if (static_cast<std::size_t>(listener.stats.open_connections.fetch_add(
            1, std::memory_order_relaxed)) >= listener.options.limits.max_connections) {
        // The slot is reserved before the check, so threads together never exceed the cap.
        listener.stats.open_connections.fetch_sub(1, std::memory_order_relaxed);
        listener.stats.rejected_connections.fetch_add(1, std::memory_order_relaxed);
        ::close(fd);
        return;
    }
    PeerAddress address = peer_address(peer);
    if (listener.shares && !listener.shares->take(address.bytes)) {
        refuse_over_share(listener, fd);
        return;
    }
    context.new_session(fd, address, index)->start();
}

void accept_pending(ThreadContext& context, std::uint8_t index) {
    int listening = context.acceptors[index]->native_handle();
    for (int taken = 0; taken < kAcceptBatch; ++taken) {
        sockaddr_storage peer{};
        socklen_t length = sizeof peer;
        // The peer's address comes with accept4(): no getpeername() per connection.
        int fd = ::accept4(listening, reinterpret_cast<sockaddr*>(&peer), &length,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
        int error = errno;
        if (fd >= 0) {
            admit(context, index, fd, peer);
            continue;
        }
        if (error == EAGAIN || error == EWOULDBLOCK) {
            wait_for_connections(context, index);
            return;
        }
        if (failed_connection(error)) continue;
        ListenerState& listener = *context.listeners[index];
        if (listener.accept_error_log.allow()) {
            runtime::log::warn("accept_failed", {{"listener", listener.options.name},
                                                 {"error", std::strerror(error)}});
        }
        auto& retry = *context.accept_retry[index];
        retry.expires_after(kAcceptRetry);
        retry.async_wait([&context, index](error_code ec) {
            if (!ec && !context.stopping) accept_pending(context, index);
        });
        return;
    }
    asio::post(context.ioc, [&context, index] {
        if (!context.stopping) accept_pending(context, index);
    });
}

}  // namespace

void Handler::unavailable(const Request&, Response& response) {
    response.simple_page(503, "Service Unavailable");
    response.add_header("Retry-After", "1");
}

struct Server::Impl {
    Impl() { lower_pool_priority(blocking_pool); }

    asio::thread_pool blocking_pool{kBlockingThreads};
    std::vector<std::unique_ptr<ListenerState>> listeners;
    std::vector<std::unique_ptr<ThreadContext>> contexts;
    // The blocking lane: an I/O thread without acceptors, at the pool's background priority, that
    // takes up every connection once it has a blocking request (Session::hand_off). Its
    // io_context's handlers may hold such connections: destroyed before the listeners.
    std::unique_ptr<ThreadContext> lane;
    std::vector<std::thread> threads;
    std::mutex mutex;
    std::condition_variable finished_cv;
    std::size_t finished = 0;
    // Counted down by each I/O thread once it has made its io_uring (or found it refused).
    std::unique_ptr<std::latch> rings;
    bool started = false;
    bool joined = false;

    void join_all() {
        for (auto& t : threads) {
            if (t.joinable()) t.join();
        }
        joined = true;
    }
};

Server::Server(unsigned threads, std::vector<ListenerOptions> listeners, bool io_uring)
    : impl_(std::make_unique<Impl>()) {
    if (threads == 0) threads = 1;
    // The lane's connections are few and busy on the pool: a call per connection, no io_uring.
    impl_->lane = std::make_unique<ThreadContext>(false);
    impl_->lane->blocking_pool = &impl_->blocking_pool;
    for (unsigned i = 0; i < threads; ++i) {
        impl_->contexts.push_back(std::make_unique<ThreadContext>(io_uring));
        impl_->contexts.back()->blocking_pool = &impl_->blocking_pool;
        impl_->contexts.back()->lane = impl_->lane.get();
    }
    for (auto& options : listeners) {
        auto state = std::make_unique<ListenerState>();
        state->options = std::move(options);
        if (std::size_t share = state->options.limits.max_connections_per_client; share > 0)
            state->shares = std::make_unique<ClientShares>(share, state->options.proxies);
        impl_->listeners.push_back(std::move(state));
    }
}

Server::~Server() {
    if (impl_->started && !impl_->joined) shutdown(std::chrono::milliseconds{0});
}

namespace {

// The kernel hands a connection to accept() once its first bytes have arrived (TCP_DEFER_ACCEPT,
// nginx's `deferred`): the request is then read at once, and a Connection: close exchange never
// waits on epoll or registers with it (CPU per such request -37 % on loopback, measured). A
// client that sends nothing is handed over after this long anyway (the kernel resends its
// SYN-ACK once), and the read timeout runs from then; until then it costs the process nothing.
constexpr int kDeferAcceptSeconds = 1;

void defer_accept(tcp::acceptor& acceptor) {
    int seconds = kDeferAcceptSeconds;
    // Without it (another kernel), connections are accepted as before.
    ::setsockopt(acceptor.native_handle(), IPPROTO_TCP, TCP_DEFER_ACCEPT, &seconds, sizeof seconds);
}

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
                acceptor->non_blocking(true);  // accept_pending() takes until EAGAIN
                defer_accept(*acceptor);
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

unsigned Server::io_uring_threads() const {
    unsigned batching = 0;
    for (const auto& context : impl_->contexts) batching += context->poller.batching() ? 1 : 0;
    return batching;
}

unsigned Server::handler_threads(unsigned threads) { return std::max(threads, 1U) + 1; }

void Server::start() {
    impl_->started = true;
    // The lane has a handler and a buffer pool per listener like the other threads; no acceptors.
    for (std::size_t i = 0; i < impl_->listeners.size(); ++i) {
        impl_->lane->handlers.push_back(impl_->listeners[i]->options.handler_factory());
        impl_->lane->listeners.push_back(impl_->listeners[i].get());
        impl_->lane->pools.emplace_back(impl_->listeners[i]->options.limits);
    }
    for (auto& context : impl_->contexts) {
        for (std::size_t i = 0; i < impl_->listeners.size(); ++i) {
            context->handlers.push_back(impl_->listeners[i]->options.handler_factory());
            context->listeners.push_back(impl_->listeners[i].get());
        }
        for (const auto& listener : impl_->listeners) {
            context->pools.emplace_back(listener->options.limits);
            context->accept_retry.push_back(std::make_unique<asio::steady_timer>(context->ioc));
        }
        for (std::size_t i = 0; i < impl_->listeners.size(); ++i) {
            asio::post(context->ioc, [ctx = context.get(), i] {
                if (!ctx->stopping) accept_pending(*ctx, static_cast<std::uint8_t>(i));
            });
        }
    }
    // Each thread makes its io_uring itself (the kernel ties a ring to the thread that submits),
    // before start() returns. The latch is the Server's: a thread that started counts it down
    // even when starting a later one failed.
    impl_->rings =
        std::make_unique<std::latch>(static_cast<std::ptrdiff_t>(impl_->contexts.size()));
    for (auto& context : impl_->contexts) {
        impl_->threads.emplace_back([this, ctx = context.get()] {
            ctx->poller.start_batch_io();
            impl_->rings->count_down();
            ctx->ioc.run();
            std::lock_guard lock(impl_->mutex);
            ++impl_->finished;
            impl_->finished_cv.notify_all();
        });
    }
    impl_->rings->wait();
    // The lane's work is the blocking requests' I/O and the requests after them on their
    // connections: at the pool's priority, so that it never preempts an I/O thread either.
    impl_->threads.emplace_back([this, lane = impl_->lane.get()] {
        runtime::become_background_thread("rg-lane", runtime::BackgroundPriority::low);
        lane->ioc.run();
        std::lock_guard lock(impl_->mutex);
        ++impl_->finished;
        impl_->finished_cv.notify_all();
    });
}

void Server::shutdown(std::chrono::milliseconds timeout) {
    if (!impl_->started || impl_->joined) return;
    std::vector<ThreadContext*> all;
    for (auto& context : impl_->contexts) all.push_back(context.get());
    all.push_back(impl_->lane.get());
    // The lane stops like the others: its idle connections close now, its busy ones after their
    // answers. A Session that stops hands nothing off; a connection handed to the lane before its
    // thread saw the stop is answered and closed, one handed to it after its thread ended is
    // closed with the Server (HandOff).
    for (ThreadContext* context : all) {
        asio::post(context->ioc, [ctx = context] {
            ctx->stopping = true;
            for (auto& acceptor : ctx->acceptors) {
                error_code ignored;
                acceptor->close(ignored);
            }
            for (auto& retry : ctx->accept_retry) retry->cancel();
            // stop() may close a session, which removes it from the set: iterate over a copy.
            std::vector<Session*> sessions(ctx->sessions.begin(), ctx->sessions.end());
            for (Session* s : sessions) s->stop();
            ctx->parking.close_all();
            ctx->work.reset();
        });
    }
    std::unique_lock lock(impl_->mutex);
    bool drained = impl_->finished_cv.wait_for(
        lock, timeout, [this, &all] { return impl_->finished == all.size(); });
    lock.unlock();
    if (!drained) {
        runtime::log::warn("shutdown_timeout", {{"timeout_ms", timeout.count()}});
        for (ThreadContext* context : all) context->ioc.stop();
    }
    impl_->join_all();
    impl_->blocking_pool.join();
}

}  // namespace refgate::http
