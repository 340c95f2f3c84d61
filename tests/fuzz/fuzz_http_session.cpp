// The real HTTP session (src/http/session.cpp) over a connected loopback TCP pair inside one
// io_context: the client writes the input, closes its sending side and reads until the session
// closes. Every input runs twice, on two connections: written at once before the Session starts
// (as the kernel's deferred accept hands a connection over), and in pieces of 1-64
// bytes (sizes from the input itself) so that requests are split and pipelined at every point.
// The handler answers 200 with the number of the request ("#1", "#2", ...). Invariants: every
// 200 is one handler call, in order; a refusal is 400, 413, 414 or 431, carries
// Connection: close and is the last response; the responses (without 100 Continue, which only a
// body still in flight gets) are the same however the bytes arrived, unless a connection was
// reset, where one is a prefix of the other, or the last is Beast's early 400 (check_same);
// every session ends, freeing its buffers (the sanitizers see leaks, the session set is empty)
// and closing its socket.
//
// Asio's timers and sockets are real: the read timeout of the listener (15 s) never fires within
// an input (the client always closes its side), and the run is bounded by 5 s of wall time.

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <regex>

#include "../../src/http/session.hpp"
#include "fuzz_check.hpp"

namespace {

namespace asio = boost::asio;
using refgate::http::tcp;

class CountingHandler final : public refgate::http::Handler {
  public:
    std::size_t calls = 0;
    void handle(const refgate::http::Request&, refgate::http::Response& response) override {
        response.set_status(200);
        response.body() = "#" + std::to_string(++calls);
    }
};

struct Exchange {
    std::string received;
    bool reset = false;  // the read ended with an error other than EOF
    std::size_t handler_calls = 0;
};

struct Client {
    tcp::socket socket;
    std::string_view input;
    const std::vector<std::size_t>& pieces;
    std::size_t piece = 0;
    std::array<char, 4096> buffer{};
    Exchange& out;
    bool done = false;

    void write_next() {
        if (input.empty()) {
            boost::system::error_code ec;
            socket.shutdown(tcp::socket::shutdown_send, ec);
            return;
        }
        std::size_t n = pieces.empty() ? input.size() : pieces[piece++ % pieces.size()];
        n = std::min(n, input.size());
        auto chunk = input.substr(0, n);
        input.remove_prefix(n);
        asio::async_write(socket, asio::buffer(chunk.data(), chunk.size()),
                          [this](boost::system::error_code ec, std::size_t) {
                              if (!ec) write_next();
                          });
    }

    void read_next() {
        socket.async_read_some(asio::buffer(buffer),
                               [this](boost::system::error_code ec, std::size_t n) {
                                   out.received.append(buffer.data(), n);
                                   if (!ec && out.received.size() < (1u << 20)) return read_next();
                                   out.reset = ec && ec != asio::error::eof;
                                   done = true;
                               });
    }
};

// libFuzzer's timeout alarm (SIGALRM, no SA_RESTART) fails a blocking connect() or accept() with
// EINTR, and Asio throws it: the harness's own blocking set-up runs with the alarm held back.
class AlarmHeld {
  public:
    AlarmHeld() {
        sigset_t alarm;
        sigemptyset(&alarm);
        sigaddset(&alarm, SIGALRM);
        pthread_sigmask(SIG_BLOCK, &alarm, &before_);
    }
    ~AlarmHeld() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }
    AlarmHeld(const AlarmHeld&) = delete;
    AlarmHeld& operator=(const AlarmHeld&) = delete;

  private:
    sigset_t before_;
};

Exchange converse(std::string_view input, const std::vector<std::size_t>& pieces) {
    refgate::http::ThreadContext context;
    refgate::http::ListenerState listener;
    listener.options.name = "fuzz";
    auto owned = std::make_unique<CountingHandler>();
    CountingHandler& handler = *owned;
    context.listeners.push_back(&listener);
    context.handlers.push_back(std::move(owned));
    context.pools.emplace_back(listener.options.limits);
    tcp::acceptor acceptor(context.ioc, {asio::ip::make_address("127.0.0.1"), 0});
    Exchange out;
    Client client{tcp::socket(context.ioc), input, pieces, 0, {}, out};
    std::optional<AlarmHeld> held(std::in_place);
    client.socket.connect(acceptor.local_endpoint());
    tcp::endpoint remote;
    tcp::socket server_side(context.ioc);
    acceptor.accept(server_side, remote);
    listener.stats.open_connections.fetch_add(1);
    sockaddr_storage peer{};
    std::memcpy(&peer, remote.data(), remote.size());
    server_side.non_blocking(true);  // as accept4() hands it over in production
    // Whole: the request is there when the Session starts, as the kernel's deferred accept hands
    // connections over, so its first answers go out before Asio has the socket.
    if (pieces.empty()) {
        asio::write(client.socket, asio::buffer(client.input.data(), client.input.size()));
        client.input = {};
    }
    held.reset();
    int fd = server_side.release();
    std::make_shared<refgate::http::Session>(fd, refgate::http::peer_address(peer), context, 0)
        ->start();
    client.write_next();
    client.read_next();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while ((!client.done || !context.sessions.empty()) &&
           std::chrono::steady_clock::now() < deadline)
        context.ioc.run_one_for(std::chrono::milliseconds(100));
    FUZZ_CHECK(client.done);
    FUZZ_CHECK(context.sessions.empty());
    FUZZ_CHECK(::fcntl(fd, F_GETFD) == -1 && errno == EBADF);  // the Session closed its socket
    out.handler_calls = handler.calls;
    return out;
}

struct Answer {
    int status;
    std::string body;
    bool close;
};

// The responses, 100 Continue left out. Bodies are "#n" or a short error page, neither of which
// holds a status line, so a response starts at each "HTTP/1.1 nnn ".
std::vector<Answer> answers(const std::string& received) {
    static const std::regex status(R"(HTTP/1\.[01] (\d{3}) [^\r]*\r\n)");
    std::vector<Answer> out;
    auto begin = std::sregex_iterator(received.begin(), received.end(), status);
    std::vector<std::smatch> matches(begin, std::sregex_iterator());
    for (std::size_t i = 0; i < matches.size(); ++i) {
        int code = std::stoi(matches[i][1].str());
        if (code == 100) continue;
        std::size_t start = matches[i].position(0);
        std::size_t end = i + 1 < matches.size() ? matches[i + 1].position(0) : received.size();
        std::string text = received.substr(start, end - start);
        auto blank = text.find("\r\n\r\n");
        FUZZ_CHECK(blank != std::string::npos);
        out.push_back({code, text.substr(blank + 4),
                       text.find("\r\nConnection: close\r\n") != std::string::npos});
    }
    return out;
}

void check_one(const Exchange& e, const std::vector<Answer>& list) {
    std::size_t ok = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& a = list[i];
        if (a.status == 200) {
            FUZZ_CHECK(a.body.empty() || a.body == "#" + std::to_string(++ok));
            if (a.body.empty()) ++ok;  // HEAD
            continue;
        }
        FUZZ_CHECK(a.status == 400 || a.status == 413 || a.status == 414 || a.status == 431);
        FUZZ_CHECK(a.close);
        FUZZ_CHECK(i + 1 == list.size());
    }
    FUZZ_CHECK(ok == e.handler_calls || e.reset);
}

bool same(const Answer& a, const Answer& b) {
    return a.status == b.status && a.body == b.body && a.close == b.close;
}

// The refusal that ends a connection's answers, if one does (check_one: only the last can be).
const Answer* refusal(const std::vector<Answer>& list) {
    return !list.empty() && list.back().status != 200 ? &list.back() : nullptr;
}

// Beast 1.81 reads a request line and fields as they come only in the first read of a header;
// once it had to wait for more, it reads them at the header's end. So a malformed line or field
// is refused 400 at once when its bytes came in the first read, and otherwise at the header's end
// or limit (431, 414) or, when the client stops inside the header, never. The same holds for a
// request line over the target limit: 414 at once when the whole line came in the first read.
// The answers before a refusal agree; the refusals agree unless one of them is such an early 400
// or 414 (the TLS ClientHello that gets 400 at once is the case worth keeping).
void check_same(const Exchange& whole, const std::vector<Answer>& a, const Exchange& split,
                const std::vector<Answer>& b) {
    const Answer *ra = refusal(a), *rb = refusal(b);
    std::size_t oka = a.size() - (ra ? 1 : 0), okb = b.size() - (rb ? 1 : 0);
    if (!whole.reset && !split.reset) FUZZ_CHECK(oka == okb);
    for (std::size_t i = 0; i < std::min(oka, okb); ++i) FUZZ_CHECK(same(a[i], b[i]));
    if (whole.reset || split.reset || oka != okb) return;
    auto early_status = [](const Answer* r) { return r && (r->status == 400 || r->status == 414); };
    bool early = early_status(ra) || early_status(rb);
    if (!early) {
        FUZZ_CHECK((ra == nullptr) == (rb == nullptr));
        if (ra) FUZZ_CHECK(same(*ra, *rb));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 16 * 1024) return 0;
    auto input = refgate::fuzz::as_text(data, size);
    std::vector<std::size_t> pieces;
    for (std::size_t i = 0; i < size && pieces.size() < 64; i += 7)
        pieces.push_back(1 + data[i] % 64);
    if (pieces.empty()) pieces.push_back(1);
    auto whole = converse(input, {});
    auto split = converse(input, pieces);
    auto a = answers(whole.received), b = answers(split.received);
    check_one(whole, a);
    check_one(split, b);
    check_same(whole, a, split, b);
    return 0;
}
