// The thread's parking of idle connections (src/http/parking.hpp), over socket pairs: every
// parked socket that becomes readable is woken, however many at once, and one whose read
// deadline passes is closed and counted out.
#include "../../../src/http/parking.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <vector>

namespace parking_test {

using refgate::http::IdleParking;
using refgate::http::ParkedConnection;
using namespace std::chrono_literals;

struct Pair {
    int parked = -1;
    int client = -1;
};

Pair socket_pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    return {fds[0], fds[1]};
}

struct Fixture {
    boost::asio::io_context ioc{1};
    std::vector<int> woken;
    std::vector<int> expired;
    int sweeps = 0;
    int more_sweeps_until = 0;  // sweeps the swept callback asks for (memory still to trim)
    IdleParking parking{ioc,
                        [this](const ParkedConnection& c) {
                            woken.push_back(c.fd);
                            ::close(c.fd);
                        },
                        [this](const ParkedConnection& c) { expired.push_back(c.fd); },
                        [this](std::size_t) { return ++sweeps < more_sweeps_until; }};

    void run_until(const std::function<bool()>& done) {
        auto deadline = std::chrono::steady_clock::now() + 3s;
        while (!done() && std::chrono::steady_clock::now() < deadline) ioc.run_one_for(50ms);
    }
};

TEST_CASE("parking: every parked socket that becomes readable is woken, past one epoll batch",
          "[http][parking]") {
    Fixture f;
    constexpr std::size_t kSockets = 200;  // more than the 64 one epoll_wait takes
    std::vector<int> clients;
    for (std::size_t i = 0; i < kSockets; ++i) {
        Pair p = socket_pair();
        f.parking.park({.fd = p.parked, .deadline = std::chrono::steady_clock::now() + 60s});
        clients.push_back(p.client);
    }
    REQUIRE(f.parking.parked() == kSockets);
    for (int c : clients) REQUIRE(::write(c, "G", 1) == 1);  // all readable at once
    f.run_until([&] { return f.woken.size() == kSockets; });
    CHECK(f.woken.size() == kSockets);
    CHECK(f.parking.parked() == 0);
    CHECK(f.expired.empty());
    for (int c : clients) ::close(c);
}

TEST_CASE("parking: a parked socket past its read deadline is closed and counted out",
          "[http][parking]") {
    Fixture f;
    Pair late = socket_pair();
    Pair waiting = socket_pair();
    f.parking.park({.fd = late.parked, .deadline = std::chrono::steady_clock::now()});
    f.parking.park({.fd = waiting.parked, .deadline = std::chrono::steady_clock::now() + 60s});
    f.run_until([&] { return !f.expired.empty(); });
    REQUIRE(f.expired.size() == 1);
    CHECK(f.expired[0] == late.parked);
    CHECK(f.parking.parked() == 1);
    char byte;
    CHECK(::read(late.client, &byte, 1) == 0);  // the server side is closed
    f.parking.close_all();                      // the server stops: the other one goes too
    CHECK(f.expired.size() == 2);
    CHECK(::read(waiting.client, &byte, 1) == 0);
    ::close(late.client);
    ::close(waiting.client);
}

TEST_CASE("parking: sweeps go on while a trim is still due, after the last parked connection left",
          "[http][parking]") {
    // The thread trims its heap at most once a second: connections parked after a trim are
    // trimmed by a later sweep, which must come even when nothing is parked any more.
    Fixture f;
    f.more_sweeps_until = 4;
    Pair late = socket_pair();
    f.parking.park({.fd = late.parked, .deadline = std::chrono::steady_clock::now()});
    f.run_until([&] { return f.sweeps >= 4; });
    CHECK(f.expired.size() == 1);
    CHECK(f.parking.parked() == 0);
    CHECK(f.sweeps == 4);
    // Then the sweeps stop: nothing is waiting, parked or due.
    auto until = std::chrono::steady_clock::now() + 3 * IdleParking::kSweepEvery;
    while (std::chrono::steady_clock::now() < until) f.ioc.run_one_for(50ms);
    CHECK(f.sweeps == 4);
    ::close(late.client);
}

}  // namespace parking_test
