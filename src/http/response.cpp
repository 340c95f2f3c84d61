#include "refgate/http/response.hpp"

#include <cstring>

namespace refgate::http {

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
    switch (status) {
        case 200:
            return "OK";
        case 204:
            return "No Content";
        case 301:
            return "Moved Permanently";
        case 302:
            return "Found";
        case 304:
            return "Not Modified";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 403:
            return "Forbidden";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 406:
            return "Not Acceptable";
        case 408:
            return "Request Timeout";
        case 409:
            return "Conflict";
        case 410:
            return "Gone";
        case 412:
            return "Precondition Failed";
        case 413:
            return "Content Too Large";
        case 414:
            return "URI Too Long";
        case 415:
            return "Unsupported Media Type";
        case 422:
            return "Unprocessable Content";
        case 428:
            return "Precondition Required";
        case 429:
            return "Too Many Requests";
        case 431:
            return "Request Header Fields Too Large";
        case 500:
            return "Internal Server Error";
        case 501:
            return "Not Implemented";
        case 503:
            return "Service Unavailable";
        default:
            return "Unknown";
    }
}

}  // namespace refgate::http
