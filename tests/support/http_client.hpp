#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace refgate::test {

using namespace std::chrono_literals;

struct HttpResponse {
    int status = 0;
    std::string reason;  // the status line's reason phrase
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;

    // The first header of that name (case-insensitive), or "" when absent.
    std::string header(std::string_view name) const;
    bool has_header(std::string_view name) const;
};

// A blocking client over a plain socket to 127.0.0.1, for sending exactly the bytes a test needs
// (smuggling shapes, pipelined bursts, a slow client) and reading what comes back.
class RawConnection {
  public:
    // `receive_buffer` (bytes, when not 0) bounds the socket's receive buffer, so that a client
    // that does not read soon fills the server's socket.
    explicit RawConnection(int port, int receive_buffer = 0);
    ~RawConnection();
    RawConnection(const RawConnection&) = delete;
    RawConnection& operator=(const RawConnection&) = delete;

    // False when the peer has closed or reset the connection.
    bool send(std::string_view bytes);
    // Reads one response; the body by Content-Length (none for HEAD). nullopt on close or timeout.
    std::optional<HttpResponse> read_response(std::chrono::milliseconds timeout = 5s,
                                              bool head = false);
    // True when the server closes the connection within the timeout; any bytes that arrive before
    // the close are appended to `extra` (when given).
    bool wait_closed(std::chrono::milliseconds timeout = 5s, std::string* extra = nullptr);
    // Bytes received but not yet consumed by read_response().
    const std::string& pending() const { return buffer_; }

  private:
    // Reads more into buffer_; false on close, error or timeout.
    bool fill(std::chrono::steady_clock::time_point deadline);

    int fd_ = -1;
    std::string buffer_;
};

// One request on a fresh connection.
HttpResponse http_request(int port, std::string_view method, std::string_view target,
                          const std::vector<std::pair<std::string, std::string>>& headers = {},
                          std::string_view body = {});
inline HttpResponse http_get(int port, std::string_view target,
                             const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    return http_request(port, "GET", target, headers);
}

}  // namespace refgate::test
