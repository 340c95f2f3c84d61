#include "refgate/http/response.hpp"

#include <array>
#include <cstring>
#include <ostream>
// Beast 1.81's status.ipp streams a status without including <ostream>, so it comes after it.
#include <boost/beast/http/status.hpp>

#include "refgate/http/status.hpp"

namespace refgate::http {
namespace {

// kHttpStatuses indexed by code, so that the status line costs one load per response.
constexpr int kFirstStatus = 100;
constexpr auto kPhrases = [] {
    std::array<std::string_view, 500> phrases{};
    for (const auto& s : kHttpStatuses)
        phrases[static_cast<std::size_t>(s.code - kFirstStatus)] = s.reason;
    return phrases;
}();

}  // namespace

void Response::add_header(std::string_view name, std::string_view value) {
    // memchr runs a word or more at a time; header values are checked on every response.
    for (char bad : {'\r', '\n', '\0'}) {
        if (std::memchr(value.data(), bad, value.size()) != nullptr) {
            simple_page(500, "Internal Server Error");
            return;
        }
    }
    headers_.append(name).append(": ").append(value).append("\r\n");
}

void Response::simple_page(int status, std::string_view title) {
    status_ = status;
    headers_.clear();
    headers_.append("Content-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\n");
    body_.assign("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>");
    body_.append(title)
        .append("</title></head><body><h1>")
        .append(title)
        .append("</h1></body></html>\n");
}

void Response::json(int status, std::string_view body) {
    status_ = status;
    headers_.append("Content-Type: application/json\r\n");
    body_.assign(body);
}

std::string_view reason_phrase(int status) {
    if (status >= kFirstStatus && status < kFirstStatus + static_cast<int>(kPhrases.size())) {
        auto phrase = kPhrases[static_cast<std::size_t>(status - kFirstStatus)];
        if (!phrase.empty()) return phrase;
    }
    // A status outside refgate's own table: Beast's phrase, else none (RFC 9112 allows an empty
    // reason phrase; a made-up one such as "Unknown" would be wrong).
    if (status < 100 || status > 999) return {};
    auto beast_phrase =
        boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(status));
    if (beast_phrase == "<unknown-status>") return {};
    return {beast_phrase.data(), beast_phrase.size()};
}

}  // namespace refgate::http
