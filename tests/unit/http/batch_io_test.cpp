// A batch of reads and sends (src/http/batch_io.hpp), over socket pairs: each result is what the
// plain call would have returned (bytes, EOF, -EAGAIN, -EPIPE), through io_uring and without it,
// and every byte lands where its call said.
#include "../../../src/http/batch_io.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cerrno>
#include <string>
#include <vector>

#include "../../support/io_uring_probe.hpp"

namespace batch_io_test {

using refgate::http::BatchIo;
using refgate::test::kernel_allows_io_uring;

struct Pair {
    int server = -1;
    int client = -1;
    Pair() {
        int fds[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
        server = fds[0];
        client = fds[1];
    }
    ~Pair() {
        if (server >= 0) ::close(server);
        if (client >= 0) ::close(client);
    }
    Pair(const Pair&) = delete;
    Pair& operator=(const Pair&) = delete;
};

std::string read_all(int fd) {
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0)
        out.append(buffer, static_cast<std::size_t>(n));
    return out;
}

TEST_CASE("a batch of reads and sends gives what each call would have given", "[http][batch_io]") {
    const bool wanted = GENERATE(true, false);
    INFO((wanted ? "io_uring wanted" : "plain calls"));
    BatchIo io(wanted);
    // Made before the first batch, on the thread that submits (as each I/O thread does at start).
    CHECK(io.start() == (wanted && kernel_allows_io_uring()));
    constexpr std::size_t kPairs = 6;
    std::vector<std::unique_ptr<Pair>> pairs;
    for (std::size_t i = 0; i < kPairs; ++i) pairs.push_back(std::make_unique<Pair>());

    // Pairs 0-3 have a request waiting, 4 nothing, and 5's client has closed.
    for (std::size_t i = 0; i < 4; ++i) {
        std::string request = "GET /go/l" + std::to_string(i) + " HTTP/1.1\r\n\r\n";
        REQUIRE(::write(pairs[i]->client, request.data(), request.size()) ==
                static_cast<ssize_t>(request.size()));
    }
    ::close(pairs[5]->client);
    pairs[5]->client = -1;

    std::array<std::array<char, 64>, kPairs> buffers{};
    for (std::size_t i = 0; i < kPairs; ++i)
        io.recv(pairs[i]->server, buffers[i].data(), buffers[i].size());
    REQUIRE(io.queued() == kPairs);
    io.submit();
    CHECK(io.queued() == 0);
    CHECK(io.batching() == (wanted && kernel_allows_io_uring()));
    for (std::size_t i = 0; i < 4; ++i) {
        std::string request = "GET /go/l" + std::to_string(i) + " HTTP/1.1\r\n\r\n";
        REQUIRE(io.result(i) == static_cast<ssize_t>(request.size()));
        CHECK(std::string(buffers[i].data(), request.size()) == request);
    }
    CHECK(io.result(4) == -EAGAIN);
    CHECK(io.result(5) == 0);  // the peer's close

    // Answers: each lands on its own connection; the closed peer's is refused (no SIGPIPE).
    std::vector<std::string> answers;
    for (std::size_t i = 0; i < kPairs; ++i) {
        answers.push_back("HTTP/1.1 302 Found\r\nLocation: /p/" + std::to_string(i) + "\r\n\r\n");
    }
    for (std::size_t i = 0; i < kPairs; ++i)
        io.send(pairs[i]->server, answers[i].data(), answers[i].size(), 0);
    io.submit();
    for (std::size_t i = 0; i < 5; ++i) {
        INFO("connection " << i);
        CHECK(io.result(i) == static_cast<ssize_t>(answers[i].size()));
        CHECK(read_all(pairs[i]->client) == answers[i]);
    }
    CHECK(io.result(5) == -EPIPE);

    // A batch of one, and a batch after it, go on as before.
    REQUIRE(::write(pairs[0]->client, "x", 1) == 1);
    io.recv(pairs[0]->server, buffers[0].data(), buffers[0].size());
    io.submit();
    CHECK(io.result(0) == 1);
    io.recv(pairs[0]->server, buffers[0].data(), buffers[0].size());
    io.recv(pairs[1]->server, buffers[1].data(), buffers[1].size());
    io.submit();
    CHECK(io.result(0) == -EAGAIN);
    CHECK(io.result(1) == -EAGAIN);
}

}  // namespace batch_io_test
