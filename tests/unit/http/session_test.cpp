// A connection's phases (src/http/session.hpp): the real Session over socket pairs, on its own
// I/O thread's context (no io_uring), with a handler that answers 200. Each case drives a
// connection the way a client does and checks the phase it rests in between events, and what the
// client receives; every move between phases is checked against Session::legal_transition as it
// happens (enter() asserts it in this Debug build).
#include "../../../src/http/session.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace session_test {

using refgate::http::Session;
using Phase = Session::Phase;
using namespace std::chrono_literals;

class TestHandler final : public refgate::http::Handler {
  public:
    std::atomic<int> calls{0};
    std::atomic<bool> block{false};  // blocking(): the request goes to the pool
    // may_block(), and blocking() for a target under /pb (answered at once, on the pool)
    std::atomic<bool> may{false};
    std::atomic<bool> echo{false};     // the body is the request's target
    std::atomic<bool> release{false};  // a blocking handle() waits for this
    std::string body = "ok";
    std::function<void()> on_handle;  // runs in handle(), on the I/O thread

    void handle(const refgate::http::Request& request, refgate::http::Response& response) override {
        if (block) {
            auto until = std::chrono::steady_clock::now() + 3s;
            while (!release && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(1ms);
        }
        if (on_handle) on_handle();
        ++calls;
        response.set_status(200);
        response.body() = echo ? std::string(request.target) : body;
    }
    bool blocking(const refgate::http::Request& request) const override {
        return block || (may && request.target.starts_with("/pb"));
    }
    bool may_block() const override { return block || may; }
};

struct Fixture {
    // Declared before the context: its Sessions count themselves out of the listener, and pool
    // threads post back to the context's io_context.
    refgate::http::ListenerState listener;
    boost::asio::thread_pool blocking_pool{1};
    // The server's blocking lane, run by this thread too: the context hands connections to it
    // only when the fixture is made `with_lane`.
    refgate::http::ThreadContext lane{false};
    refgate::http::ThreadContext context{false};
    TestHandler* handler = nullptr;
    TestHandler* lane_handler = nullptr;
    std::vector<int> clients;

    explicit Fixture(bool with_lane = false) {
        listener.options.name = "test";
        for (auto* ctx : {&context, &lane}) {
            auto owned = std::make_unique<TestHandler>();
            (ctx == &lane ? lane_handler : handler) = owned.get();
            ctx->listeners.push_back(&listener);
            ctx->handlers.push_back(std::move(owned));
            ctx->pools.emplace_back(listener.options.limits);
            ctx->blocking_pool = &blocking_pool;
        }
        if (with_lane) context.lane = &lane;
    }
    ~Fixture() {
        handler->release = true;
        lane_handler->release = true;
        for (int c : clients) ::close(c);
        run_until([&] { return context.sessions.empty() && lane.sessions.empty(); });
        blocking_pool.join();
    }
    Fixture(const Fixture&) = delete;
    Fixture& operator=(const Fixture&) = delete;

    // A new connection whose client has sent `first` already (as the deferred accept hands
    // connections over); the client's end is clients.back().
    std::shared_ptr<Session> connect(std::string_view first = {}, int send_buffer = 0) {
        int fds[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
        clients.push_back(fds[1]);
        if (send_buffer > 0) {
            REQUIRE(::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer) ==
                    0);
        }
        if (!first.empty()) send(fds[1], first);
        listener.stats.open_connections.fetch_add(1);
        auto session = context.new_session(fds[0], refgate::http::PeerAddress{}, 0);
        session->start();
        return session;
    }

    static void send(int client, std::string_view bytes) {
        REQUIRE(::write(client, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    }

    void run_until(const std::function<bool()>& done) {
        auto deadline = std::chrono::steady_clock::now() + 3s;
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            lane.ioc.poll();
            context.ioc.run_one_for(context.lane != nullptr ? 1ms : 10ms);
        }
    }

    void run_for(std::chrono::milliseconds time) {
        auto end = std::chrono::steady_clock::now() + time;
        run_until([&] { return std::chrono::steady_clock::now() >= end; });
    }

    // Everything the client has received so far, the session's thread running meanwhile.
    std::string received(int client, std::size_t at_least = 1) {
        std::string out;
        char buffer[65536];
        run_until([&] {
            ssize_t n;
            while ((n = ::recv(client, buffer, sizeof buffer, MSG_DONTWAIT)) > 0)
                out.append(buffer, static_cast<std::size_t>(n));
            return out.size() >= at_least;
        });
        return out;
    }
};

constexpr std::string_view kGet = "GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n";

std::size_t count(std::string_view text, std::string_view what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST_CASE(
    "session: phases end in closed, parked or handed_off; only an idle connection is parked, "
    "only one answering is handed off",
    "[http][session]") {
    constexpr Phase all[] = {Phase::answering,  Phase::idle,    Phase::reading,  Phase::on_pool,
                             Phase::batched,    Phase::writing, Phase::draining, Phase::parked,
                             Phase::handed_off, Phase::closed};
    for (Phase to : all) {
        CHECK_FALSE(Session::legal_transition(Phase::closed, to));
        CHECK_FALSE(Session::legal_transition(Phase::parked, to));
        CHECK_FALSE(Session::legal_transition(Phase::handed_off, to));
        CHECK(Session::legal_transition(to, Phase::parked) == (to == Phase::idle));
        // A blocking request is found while answering: the connection leaves from there only.
        CHECK(Session::legal_transition(to, Phase::handed_off) == (to == Phase::answering));
        CHECK(Session::legal_transition(Phase::draining, to) == (to == Phase::closed));
        if (to != Phase::closed && to != Phase::parked && to != Phase::handed_off)
            CHECK(Session::legal_transition(to, Phase::closed));
    }
    // Every wait is left through answering: a session never goes from one wait to another.
    CHECK_FALSE(Session::legal_transition(Phase::idle, Phase::reading));
    CHECK_FALSE(Session::legal_transition(Phase::writing, Phase::idle));
    CHECK_FALSE(Session::legal_transition(Phase::on_pool, Phase::writing));
}

TEST_CASE("session: a keep-alive request is answered, then the connection waits idle",
          "[http][session]") {
    Fixture f;
    auto s = f.connect(kGet);
    CHECK(s->phase() == Phase::idle);  // answered within start(): recv, send, then the wait
    CHECK(count(f.received(f.clients[0]), "HTTP/1.1 200") == 1);

    // Part of a request: it waits for the rest, then answers and waits idle again.
    f.send(f.clients[0], kGet.substr(0, 20));
    f.run_until([&] { return s->phase() == Phase::reading; });
    CHECK(s->phase() == Phase::reading);
    CHECK(f.handler->calls == 1);
    f.send(f.clients[0], kGet.substr(20));
    f.run_until([&] { return f.handler->calls == 2 && s->phase() == Phase::idle; });
    CHECK(s->phase() == Phase::idle);
    CHECK(count(f.received(f.clients[0]), "HTTP/1.1 200") == 1);

    // The client's close ends it.
    ::close(f.clients[0]);
    f.clients.clear();
    f.run_until([&] { return s->phase() == Phase::closed; });
    CHECK(s->phase() == Phase::closed);
}

TEST_CASE("session: a Connection: close answer closes the connection at once", "[http][session]") {
    Fixture f;
    auto s = f.connect("GET /a HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
    CHECK(s->phase() == Phase::closed);
    std::string answer = f.received(f.clients[0]);
    CHECK(answer.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(answer.find("Connection: close\r\n") != std::string::npos);
}

TEST_CASE("session: a refused request drains the input until the client closes",
          "[http][session]") {
    Fixture f;
    auto s = f.connect("GET /a HTTP/1.1\r\nHost: example.com\r\nContent-Length: x\r\n\r\n");
    CHECK(s->phase() == Phase::draining);
    std::string answer = f.received(f.clients[0]);
    CHECK(answer.rfind("HTTP/1.1 400", 0) == 0);
    f.send(f.clients[0], "more bytes the client was sending");
    f.run_for(100ms);                      // well within the linger time (1 s)
    CHECK(s->phase() == Phase::draining);  // dropped; still waits for the client's close
    ::close(f.clients[0]);
    f.clients.clear();
    f.run_until([&] { return s->phase() == Phase::closed; });
    CHECK(s->phase() == Phase::closed);
    CHECK(f.handler->calls == 0);
}

TEST_CASE("session: a blocking request is on the pool until its answer comes back",
          "[http][session]") {
    Fixture f;
    f.handler->block = true;
    auto s = f.connect(kGet);
    CHECK(s->phase() == Phase::on_pool);
    s->stop();  // a busy connection closes after its answer, not now
    CHECK(s->phase() == Phase::on_pool);
    f.handler->release = true;
    std::string answer = f.received(f.clients[0]);
    CHECK(answer.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(answer.find("Connection: close\r\n") != std::string::npos);
    f.run_until([&] { return s->phase() == Phase::draining || s->phase() == Phase::closed; });
    CHECK((s->phase() == Phase::draining || s->phase() == Phase::closed));
}

TEST_CASE(
    "session: a blocking request hands its connection to the lane, with the bytes after it and "
    "the answers before it",
    "[http][session]") {
    Fixture f(true);
    f.handler->may = true;
    f.handler->echo = true;
    f.lane_handler->may = true;
    f.lane_handler->echo = true;
    auto on = [](std::string_view target) {
        return "GET " + std::string(target) + " HTTP/1.1\r\nHost: example.com\r\n\r\n";
    };
    // A request that does not block, answered by the thread that accepted the connection.
    auto s = f.connect(on("/a"));
    CHECK(s->phase() == Phase::idle);
    CHECK(f.received(f.clients[0]).ends_with("/a"));

    // One write: a request, a blocking one, another: the first is answered here, then the
    // connection moves, its answer and the bytes after the blocking request with it.
    f.send(f.clients[0], on("/b") + on("/pb/1") + on("/c"));
    f.run_until([&] { return s->phase() == Phase::handed_off; });
    CHECK(s->phase() == Phase::handed_off);
    CHECK(f.listener.stats.handed_off.load() == 1);
    std::string answers;
    f.run_until([&] {
        answers += f.received(f.clients[0], 0);
        return count(answers, "HTTP/1.1 200") == 3;
    });
    auto b = answers.find("/b");
    auto pb = answers.find("/pb/1");
    auto c = answers.find("/c");
    CHECK(b < pb);
    CHECK(pb < c);
    CHECK(c != std::string::npos);
    CHECK(f.handler->calls == 2);       // /a and /b
    CHECK(f.lane_handler->calls == 2);  // /pb/1 (on the pool) and /c
    // The connection is the lane's now, still counted once; the old Session is gone.
    s.reset();
    f.run_until([&] { return f.context.sessions.empty(); });
    CHECK(f.context.sessions.empty());
    CHECK(f.lane.sessions.size() == 1);
    CHECK(f.listener.stats.open_connections.load() == 1);

    // Its next blocking request stays on the lane: nothing moves twice.
    f.send(f.clients[0], on("/pb/2"));
    f.run_until([&] { return f.lane_handler->calls == 3; });
    CHECK(f.received(f.clients[0]).ends_with("/pb/2"));
    CHECK(f.listener.stats.handed_off.load() == 1);

    ::close(f.clients[0]);
    f.run_until([&] { return f.lane.sessions.empty(); });
    CHECK(f.listener.stats.open_connections.load() == 0);
    f.clients.clear();
}

TEST_CASE("session: a hand-off the lane never took up closes its connection, counted once",
          "[http][session]") {
    Fixture f;
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    f.listener.stats.open_connections.fetch_add(1);
    {
        refgate::http::HandOff first;
        first.fd = fds[0];
        first.listener_state = &f.listener;
        refgate::http::HandOff moved(std::move(first));  // as into the post's handler
    }
    CHECK(f.listener.stats.open_connections.load() == 0);
    char byte = 0;
    CHECK(::recv(fds[1], &byte, 1, 0) == 0);  // the server's end is closed
    ::close(fds[1]);
}

TEST_CASE("session: an answer larger than the socket takes waits writing until the client reads",
          "[http][session]") {
    Fixture f;
    f.handler->body.assign(1 << 20, 'x');
    auto s = f.connect(kGet, 4096);
    CHECK(s->phase() == Phase::writing);
    std::string answer = f.received(f.clients[0], 1 << 20);
    CHECK(answer.size() > (1u << 20));
    f.run_until([&] { return s->phase() == Phase::idle; });
    CHECK(s->phase() == Phase::idle);
}

TEST_CASE("session: the server's stop closes an idle connection, not one inside a request",
          "[http][session]") {
    Fixture f;
    auto idle = f.connect(kGet);
    auto reading = f.connect(kGet.substr(0, 20));
    CHECK(idle->phase() == Phase::idle);
    CHECK(reading->phase() == Phase::reading);
    idle->stop();
    reading->stop();
    CHECK(idle->phase() == Phase::closed);
    CHECK(reading->phase() == Phase::reading);
    f.send(f.clients[1], kGet.substr(20));
    std::string answer = f.received(f.clients[1]);
    CHECK(answer.find("Connection: close\r\n") != std::string::npos);  // answered, then closed
}

TEST_CASE("session: a batch's answers wait for the batch's send", "[http][session]") {
    Fixture f;
    auto a = f.connect(kGet);
    auto b = f.connect(kGet);
    REQUIRE(a->phase() == Phase::idle);
    REQUIRE(b->phase() == Phase::idle);
    f.received(f.clients[0]);
    f.received(f.clients[1]);
    // Both sockets ready in one wake: the poller reads both, then answers both, then sends both.
    std::vector<std::pair<Phase, Phase>> seen;
    f.handler->on_handle = [&] { seen.emplace_back(a->phase(), b->phase()); };
    f.send(f.clients[0], kGet);
    f.send(f.clients[1], kGet);
    f.run_until([&] { return seen.size() == 2; });
    REQUIRE(seen.size() == 2);
    // The first answered waits batched while the second is answered.
    bool a_first = seen[1].first == Phase::batched;
    CHECK((a_first ? seen[1].second : seen[1].first) == Phase::answering);
    CHECK((a_first || seen[1].second == Phase::batched));
    f.run_until([&] { return a->phase() == Phase::idle && b->phase() == Phase::idle; });
    CHECK(count(f.received(f.clients[0]), "HTTP/1.1 200") == 1);
    CHECK(count(f.received(f.clients[1]), "HTTP/1.1 200") == 1);
}

TEST_CASE("session: among many connections an idle one is parked, and its next request answered",
          "[http][session]") {
    Fixture f;
    // Past kKeepBuffersUpTo (256) connections on the thread, a waiting one is lean.
    constexpr std::size_t kConnections = 257;
    std::shared_ptr<Session> first = f.connect();
    for (std::size_t i = 1; i < kConnections; ++i) f.connect();
    CHECK(first->phase() == Phase::idle);
    // After kParkAfter (1 s) idle, the sweep parks them all; their Sessions end.
    f.run_until([&] { return f.context.parking.parked() == kConnections; });
    CHECK(f.context.parking.parked() == kConnections);
    CHECK(first->phase() == Phase::parked);
    CHECK(f.listener.stats.open_connections.load() ==
          std::int64_t{kConnections});  // parked, not closed
    // A request on a parked connection: a new Session takes it up and answers.
    f.send(f.clients[0], kGet);
    CHECK(count(f.received(f.clients[0]), "HTTP/1.1 200") == 1);
    CHECK(f.context.parking.parked() == kConnections - 1);
}

}  // namespace session_test
