#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace refgate::test {

// How hard and how long run_load() pushes.
struct LoadOptions {
    std::size_t total = 0;        // requests to send in all
    std::size_t connections = 1;  // keep-alive connections, all to 127.0.0.1
    std::chrono::milliseconds max_time{10'000};
    std::size_t pipeline = 4;  // requests in flight per connection
    double rate = 0;           // requests per second over all connections; 0: as fast as answered
    // When set and true, no new request is sent; run_load() returns once the requests in flight
    // are answered or their connections closed.
    const std::atomic<bool>* stop = nullptr;
};

struct LoadResult {
    std::map<int, std::size_t> statuses;  // responses by status code
    // The same per entry of `requests` (the request with index i is requests[i % size]).
    std::vector<std::map<int, std::size_t>> by_request;
    std::size_t sent = 0;  // requests written to a connection
    // Sent but never answered: the connection closed or broke first, or the time ran out.
    std::size_t failed = 0;
    std::size_t bad_responses = 0;     // not HTTP/1.x, or no usable Content-Length
    std::size_t connect_failures = 0;  // connection attempts refused or broken before use
    std::chrono::milliseconds elapsed{};
    // When each response arrived, in order of arrival (one entry per response).
    std::vector<std::chrono::steady_clock::time_point> answered_at;

    std::size_t answered() const { return answered_at.size(); }
    std::size_t count(int status) const {
        auto it = statuses.find(status);
        return it == statuses.end() ? 0 : it->second;
    }
    std::size_t count(std::size_t request, int status) const {
        if (request >= by_request.size()) return 0;
        auto it = by_request[request].find(status);
        return it == by_request[request].end() ? 0 : it->second;
    }
    // Responses that arrived in [from, to].
    std::size_t answered_between(std::chrono::steady_clock::time_point from,
                                 std::chrono::steady_clock::time_point to) const;
    // One line for test output: "20000 sent, 20000 answered (302: 20000), 0 failed in 1234 ms".
    std::string summary() const;
};

// A load generator for the public listener on 127.0.0.1:`port`: one thread polling `connections`
// keep-alive connections, each with up to `pipeline` requests in flight. `requests` are complete
// raw HTTP/1.1 requests (without `Connection: close`), sent in turn until `total` were sent or
// `max_time` ran out; a request starting with "HEAD " gets a response without a body. A
// connection the server closes is opened again; requests it left unanswered count as failed,
// never sent twice (a click must not be counted twice because the client retried). Safe to run
// on a thread of its own: it never uses Catch2 assertions.
LoadResult run_load(int port, const std::vector<std::string>& requests, const LoadOptions& options);

inline LoadResult run_load(int port, const std::vector<std::string>& requests, std::size_t total,
                           std::size_t connections, std::chrono::seconds max_time) {
    return run_load(port, requests,
                    LoadOptions{.total = total, .connections = connections, .max_time = max_time});
}

// A raw request for `requests`: `method target HTTP/1.1`, Host, then the given header lines.
std::string raw_request(const std::string& method, const std::string& target,
                        const std::vector<std::pair<std::string, std::string>>& headers = {});

}  // namespace refgate::test
