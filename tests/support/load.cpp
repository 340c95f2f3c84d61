#include "support/load.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "refgate/http/request.hpp"

namespace refgate::test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kRetryDelay{20};
constexpr int kMaxPollMillis = 10;

struct InFlight {
    std::size_t request = 0;  // index into `requests`
    bool head = false;
};

struct Connection {
    int fd = -1;
    bool connecting = false;
    bool closing = false;  // the server announced `Connection: close`
    std::string out;
    std::size_t out_pos = 0;
    std::string in;
    std::deque<InFlight> in_flight;
    Clock::time_point retry_at{};
};

bool icontains(std::string_view text, std::string_view word) {
    if (word.size() > text.size()) return false;
    for (std::size_t i = 0; i + word.size() <= text.size(); ++i) {
        if (http::iequals(text.substr(i, word.size()), word)) return true;
    }
    return false;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

enum class Parse { done, more, bad };

struct Parsed {
    int status = 0;
    bool close = false;
    std::size_t consumed = 0;
};

// One response at the start of `buffer`; its body by Content-Length (none for HEAD, 1xx, 204
// and 304).
Parse parse_response(std::string_view buffer, bool head, Parsed& out) {
    std::size_t header_end = buffer.find("\r\n\r\n");
    if (header_end == std::string_view::npos) {
        return buffer.size() > 64 * 1024 ? Parse::bad : Parse::more;
    }
    std::string_view head_text = buffer.substr(0, header_end);
    std::size_t line_end = head_text.find("\r\n");
    std::string_view status_line = head_text.substr(0, line_end);
    if (status_line.size() < 12 || !status_line.starts_with("HTTP/1.")) return Parse::bad;
    int status = 0;
    auto digits = status_line.substr(9, 3);
    if (std::from_chars(digits.data(), digits.data() + digits.size(), status).ec != std::errc{}) {
        return Parse::bad;
    }
    bool has_length = false;
    std::size_t length = 0;
    bool close = false;
    std::size_t pos = line_end == std::string_view::npos ? head_text.size() : line_end + 2;
    while (pos < head_text.size()) {
        std::size_t end = head_text.find("\r\n", pos);
        if (end == std::string_view::npos) end = head_text.size();
        std::string_view line = head_text.substr(pos, end - pos);
        pos = end + 2;
        std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        std::string_view name = trim(line.substr(0, colon));
        std::string_view value = trim(line.substr(colon + 1));
        if (http::iequals(name, "Content-Length")) {
            if (std::from_chars(value.data(), value.data() + value.size(), length).ec !=
                std::errc{}) {
                return Parse::bad;
            }
            has_length = true;
        } else if (http::iequals(name, "Connection") && icontains(value, "close")) {
            close = true;
        }
    }
    bool no_body = head || status / 100 == 1 || status == 204 || status == 304;
    if (no_body) {
        length = 0;
    } else if (!has_length) {
        return Parse::bad;  // refgate always sends Content-Length
    }
    std::size_t total = header_end + 4 + length;
    if (buffer.size() < total) return Parse::more;
    out = Parsed{status, close, total};
    return Parse::done;
}

// A non-blocking socket connecting to 127.0.0.1:port; -1 when the attempt failed at once.
int open_connection(int port, bool& connecting) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        connecting = false;
        return fd;
    }
    if (errno == EINPROGRESS) {
        connecting = true;
        return fd;
    }
    ::close(fd);
    return -1;
}

}  // namespace

std::size_t LoadResult::answered_between(Clock::time_point from, Clock::time_point to) const {
    auto first = std::lower_bound(answered_at.begin(), answered_at.end(), from);
    auto last = std::upper_bound(answered_at.begin(), answered_at.end(), to);
    return last > first ? static_cast<std::size_t>(last - first) : 0;
}

std::string LoadResult::summary() const {
    std::ostringstream out;
    out << sent << " sent, " << answered() << " answered (";
    bool first = true;
    for (const auto& [status, n] : statuses) {
        out << (first ? "" : ", ") << status << ": " << n;
        first = false;
    }
    out << "), " << failed << " failed, " << bad_responses << " bad, " << connect_failures
        << " connect failures in " << elapsed.count() << " ms";
    return out.str();
}

std::string raw_request(const std::string& method, const std::string& target,
                        const std::vector<std::pair<std::string, std::string>>& headers) {
    std::string out = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (const auto& [name, value] : headers) out += name + ": " + value + "\r\n";
    out += "\r\n";
    return out;
}

LoadResult run_load(int port, const std::vector<std::string>& requests,
                    const LoadOptions& options) {
    LoadResult result;
    result.by_request.resize(requests.size());
    if (requests.empty() || options.total == 0) return result;
    result.answered_at.reserve(std::min<std::size_t>(options.total, 1'000'000));

    std::vector<bool> head(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) head[i] = requests[i].starts_with("HEAD ");
    const std::size_t pipeline = std::max<std::size_t>(options.pipeline, 1);
    std::vector<Connection> connections(std::max<std::size_t>(options.connections, 1));

    const auto start = Clock::now();
    const auto deadline = start + options.max_time;
    auto now = start;
    std::size_t next = 0;  // the next request to send

    auto close_connection = [&](Connection& c, bool retry_later) {
        if (c.fd >= 0) ::close(c.fd);
        c.fd = -1;
        result.failed += c.in_flight.size();
        c.in_flight.clear();
        c.out.clear();
        c.out_pos = 0;
        c.in.clear();
        c.connecting = false;
        c.closing = false;
        c.retry_at = retry_later ? now + kRetryDelay : now;
    };

    std::vector<pollfd> polled;
    std::vector<Connection*> polled_connections;
    while (true) {
        now = Clock::now();
        if (now >= deadline) break;
        // Once stopped, nothing more is sent, but what was sent is still read.
        bool stopped = options.stop != nullptr && options.stop->load();
        bool busy = std::any_of(connections.begin(), connections.end(),
                                [](const Connection& c) { return !c.in_flight.empty(); });
        if ((stopped || next >= options.total) && !busy) break;

        // How many requests may have been sent by now.
        std::size_t allowed = stopped ? next : options.total;
        if (options.rate > 0 && !stopped) {
            double seconds = std::chrono::duration<double>(now - start).count();
            allowed = std::min(options.total, static_cast<std::size_t>(options.rate * seconds) + 1);
        }
        for (auto& c : connections) {
            if (c.fd < 0) {
                if (next >= allowed || now < c.retry_at) continue;
                c.fd = open_connection(port, c.connecting);
                if (c.fd < 0) {
                    ++result.connect_failures;
                    c.retry_at = now + kRetryDelay;
                    continue;
                }
            }
            if (c.connecting || c.closing) continue;
            while (c.in_flight.size() < pipeline && next < allowed) {
                std::size_t r = next % requests.size();
                c.out += requests[r];
                c.in_flight.push_back({r, head[r]});
                ++next;
                ++result.sent;
            }
        }

        polled.clear();
        polled_connections.clear();
        for (auto& c : connections) {
            if (c.fd < 0) continue;
            short events = POLLIN;
            if (c.connecting || c.out_pos < c.out.size()) events |= POLLOUT;
            polled.push_back(pollfd{c.fd, events, 0});
            polled_connections.push_back(&c);
        }
        int timeout = kMaxPollMillis;
        if (options.rate > 0 && next < options.total && next >= allowed) {
            auto due = start +
                       std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(static_cast<double>(next) / options.rate));
            auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(due - now).count();
            timeout = static_cast<int>(std::clamp<long long>(wait, 1, kMaxPollMillis));
        }
        if (polled.empty()) {
            ::poll(nullptr, 0, std::min(timeout, static_cast<int>(kRetryDelay.count())));
            continue;
        }
        if (::poll(polled.data(), polled.size(), timeout) < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
        }
        now = Clock::now();

        for (std::size_t i = 0; i < polled.size(); ++i) {
            Connection& c = *polled_connections[i];
            short revents = polled[i].revents;
            if (revents == 0 || c.fd < 0) continue;

            if (c.connecting) {
                int error = 0;
                socklen_t size = sizeof error;
                ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &error, &size);
                if (error != 0 || (revents & (POLLERR | POLLHUP)) != 0) {
                    ++result.connect_failures;
                    close_connection(c, true);
                    continue;
                }
                if ((revents & POLLOUT) == 0) continue;
                c.connecting = false;
                continue;  // requests are queued on the next round
            }

            // A failed send still lets the responses already received be read below.
            bool broken = false;
            if ((revents & POLLOUT) != 0 && c.out_pos < c.out.size()) {
                while (c.out_pos < c.out.size()) {
                    ssize_t n = ::send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos,
                                       MSG_NOSIGNAL);
                    if (n > 0) {
                        c.out_pos += static_cast<std::size_t>(n);
                    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                        break;
                    } else {
                        broken = true;
                        break;
                    }
                }
                if (c.out_pos == c.out.size()) {
                    c.out.clear();
                    c.out_pos = 0;
                }
            }

            if (!broken && (revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
            bool eof = broken;
            char chunk[16384];
            while (true) {
                ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
                if (n > 0) {
                    c.in.append(chunk, static_cast<std::size_t>(n));
                    continue;
                }
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                if (n < 0 && errno == EINTR) continue;
                eof = true;
                break;
            }
            bool closed = false;
            while (!c.in_flight.empty()) {
                Parsed parsed;
                Parse state = parse_response(c.in, c.in_flight.front().head, parsed);
                if (state == Parse::more) break;
                if (state == Parse::bad) {
                    ++result.bad_responses;
                    close_connection(c, true);
                    closed = true;
                    break;
                }
                ++result.statuses[parsed.status];
                ++result.by_request[c.in_flight.front().request][parsed.status];
                result.answered_at.push_back(now);
                c.in_flight.pop_front();
                c.in.erase(0, parsed.consumed);
                if (parsed.close) {
                    // The server answers nothing more on this connection.
                    close_connection(c, false);
                    closed = true;
                    break;
                }
            }
            if (!closed && eof) close_connection(c, true);
        }
    }

    for (auto& c : connections) close_connection(c, false);
    result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    return result;
}

}  // namespace refgate::test
