#include "support/http_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "refgate/http/request.hpp"

namespace refgate::test {
namespace {}  // namespace

std::string HttpResponse::header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
        if (http::iequals(k, name)) return v;
    }
    return "";
}

bool HttpResponse::has_header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
        if (http::iequals(k, name)) return true;
    }
    return false;
}

RawConnection::RawConnection(int port, int receive_buffer) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // Before connect(): the window it announces follows from it.
    if (receive_buffer > 0) {
        REQUIRE(::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer) ==
                0);
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
}

RawConnection::~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
}

bool RawConnection::send(std::string_view bytes) {
    while (!bytes.empty()) {
        ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

bool RawConnection::fill(std::chrono::steady_clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char chunk[16384];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
}

std::optional<HttpResponse> RawConnection::read_response(std::chrono::milliseconds timeout,
                                                         bool head) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::size_t header_end;
    while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
        if (!fill(deadline)) return std::nullopt;
    }
    HttpResponse response;
    std::string_view head_text(buffer_.data(), header_end);
    auto line_end = head_text.find("\r\n");
    std::string_view status_line = head_text.substr(0, line_end);
    if (status_line.size() < 12 || !status_line.starts_with("HTTP/1.")) return std::nullopt;
    response.status = std::stoi(std::string(status_line.substr(9, 3)));
    if (status_line.size() > 13) response.reason = std::string(status_line.substr(13));
    std::size_t pos = line_end == std::string_view::npos ? head_text.size() : line_end + 2;
    while (pos < head_text.size()) {
        auto end = head_text.find("\r\n", pos);
        if (end == std::string_view::npos) end = head_text.size();
        std::string_view line = head_text.substr(pos, end - pos);
        auto colon = line.find(':');
        if (colon != std::string_view::npos) {
            std::string_view value = line.substr(colon + 1);
            while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
            response.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
        }
        pos = end + 2;
    }
    std::size_t length = 0;
    if (!head && response.has_header("Content-Length"))
        length = std::stoul(response.header("Content-Length"));
    std::size_t body_start = header_end + 4;
    while (buffer_.size() < body_start + length) {
        if (!fill(deadline)) return std::nullopt;
    }
    response.body = buffer_.substr(body_start, length);
    buffer_.erase(0, body_start + length);
    return response;
}

bool RawConnection::wait_closed(std::chrono::milliseconds timeout, std::string* extra) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
        char chunk[16384];
        ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
        if (n <= 0) return true;  // EOF or reset
        if (extra != nullptr) extra->append(chunk, static_cast<std::size_t>(n));
    }
}

HttpResponse http_request(int port, std::string_view method, std::string_view target,
                          const std::vector<std::pair<std::string, std::string>>& headers,
                          std::string_view body) {
    RawConnection conn(port);
    std::string request;
    request.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (const auto& [k, v] : headers) request.append(k).append(": ").append(v).append("\r\n");
    if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
        request.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
    }
    request.append("Connection: close\r\n\r\n").append(body);
    REQUIRE(conn.send(request));
    auto response = conn.read_response(10s, method == "HEAD");
    REQUIRE(response.has_value());
    return *response;
}

}  // namespace refgate::test
