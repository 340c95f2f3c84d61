#pragma once

// A response a handler fills in. Its buffers keep their capacity between requests, so the
// steady-state path allocates nothing.

#include <string>
#include <string_view>

namespace refgate::http {

class Response {
  public:
    void reset() {
        status_ = 200;
        headers_.clear();
        body_.clear();
        close_ = false;
    }

    void set_status(int status) { status_ = status; }
    int status() const { return status_; }

    // Adds a header field. A value with CR, LF or NUL is refused (the response becomes a 500),
    // so that no stored or computed text can inject a header.
    void add_header(std::string_view name, std::string_view value);
    // Adds header lines ("Name: value\r\n" each) made once and checked then, as add_header
    // would: a handler's fixed headers cost one append per response.
    void add_checked_headers(std::string_view lines) { headers_.append(lines); }
    const std::string& headers() const { return headers_; }

    std::string& body() { return body_; }
    const std::string& body() const { return body_; }

    // Close the connection after this response.
    void set_close() { close_ = true; }
    bool close() const { return close_; }

    // Fills a complete small answer: status, Content-Type text/html, and a one-line page.
    void simple_page(int status, std::string_view title);
    void json(int status, std::string_view body);

  private:
    int status_ = 200;
    std::string headers_;  // "Name: value\r\n" lines
    std::string body_;
    bool close_ = false;
};

std::string_view reason_phrase(int status);

}  // namespace refgate::http
