// The public listener's HTTP/1.1 behaviour as a client sees it, against the real `refgate serve`:
// request smuggling shapes, pipelining, keep-alive, limits, slow clients, the connection cap,
// graceful stop, and what a click leaves behind (no cookie, no user agent or address in the log).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/http_client.hpp"
#include "support/io_uring_probe.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"
#include "support/test_env.hpp"

namespace refgate::test {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kDocument = R"({
  "partners": [{"slug": "acme", "name": "Acme", "ref_param": "ref", "ref_code": "picks42",
                "allowed_domains": ["acme.example"], "extra_params": {}}],
  "links": [{"slug": "demo", "partner": "acme", "destination": "https://acme.example/p",
             "status": "active", "expires_at": null, "fallback": null, "utm_passthrough": false}]
})";
constexpr std::string_view kLocation = "https://acme.example/p?ref=picks42";
constexpr std::string_view kUserAgent = "refgate-test-agent-7c1f";
// A complete request that a smuggling shape tries to slip past the server.
constexpr std::string_view kSmuggled = "GET /go/demo HTTP/1.1\r\nHost: x\r\n\r\n";

// Imports `document` into the database; returns the database URL.
std::string import_document(const TestDatabase& database, std::string_view document) {
    TempDir dir;
    std::string file = dir.file("import.json");
    std::ofstream(file) << document;
    auto result = run_refgate({"import", file}, {{"REFGATE_DATABASE_URL", database.url()}});
    INFO("refgate import:\n" << result.out << result.err);
    REQUIRE(result.exit_code == 0);
    return database.url();
}

// Imports partner "acme" and link "demo" into the database; returns the database URL.
std::string import_demo(const TestDatabase& database) {
    return import_document(database, kDocument);
}

ServiceOptions demo_options(const TestDatabase& database, EnvPairs env) {
    ServiceOptions options;
    options.database_url = import_demo(database);
    options.env = std::move(env);
    return options;
}

// A migrated database of its own holding the "demo" link, and `refgate serve` answering from it.
class DemoService {
  public:
    explicit DemoService(EnvPairs env = {}) : service_(demo_options(database_, std::move(env))) {}

    ServiceProcess& process() { return service_; }
    int port() const { return service_.port(); }

  private:
    TestDatabase database_;
    ServiceProcess service_;
};

// A request with a Host field, the given extra field lines ("Name: value\r\n" each) and no body.
std::string request(std::string_view method, std::string_view target, std::string_view fields = "",
                    std::string_view version = "HTTP/1.1") {
    std::string text;
    text.append(method).append(" ").append(target).append(" ").append(version).append("\r\n");
    text.append("Host: x\r\n").append(fields).append("\r\n");
    return text;
}

milliseconds since(SteadyClock::time_point start) {
    return std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start);
}

// Sends `bytes` on a fresh connection and checks what a client must see for a refused request:
// one answer with `status` and `Connection: close`, then the server closing the connection with
// no second answer (so nothing that followed the bad request was ever processed).
void expect_one_answer_then_close(int port, const std::string& bytes, int status) {
    RawConnection conn(port);
    CHECK(conn.send(bytes));
    auto response = conn.read_response(5s);
    if (!response) {
        FAIL_CHECK("no response; received: " << conn.pending());
        return;
    }
    CHECK(response->status == status);
    CHECK(response->header("Connection") == "close");
    std::string extra = conn.pending();
    CHECK(conn.wait_closed(3s, &extra));
    CHECK(extra.find("HTTP/1.") == std::string::npos);
}

// True when connecting to the port is refused (nothing listens there any more).
bool connection_refused(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    int error = errno;
    ::close(fd);
    return rc != 0 && error == ECONNREFUSED;
}

struct Shape {
    std::string name;
    std::string bytes;
};

}  // namespace

TEST_CASE(
    "http protocol: every request smuggling shape is answered 400, the connection is closed and "
    "the request hidden behind it is never answered",
    "[http]") {
    DemoService demo;
    const std::string te_chunked = "Transfer-Encoding: chunked\r\n";
    const std::string chunked_body = "0\r\n\r\n";
    const std::string length_of_chunked_body = "Content-Length: 5\r\n";
    std::vector<Shape> shapes = {
        {"POST, Transfer-Encoding: chunked without Content-Length",
         request("POST", "/go/demo", te_chunked) + chunked_body},
        {"GET, Transfer-Encoding: chunked without Content-Length",
         request("GET", "/go/demo", te_chunked) + chunked_body},
        {"POST, Transfer-Encoding before Content-Length",
         request("POST", "/go/demo", te_chunked + length_of_chunked_body) + chunked_body},
        {"GET, Transfer-Encoding before Content-Length",
         request("GET", "/go/demo", te_chunked + length_of_chunked_body) + chunked_body},
        {"POST, Content-Length before Transfer-Encoding",
         request("POST", "/go/demo", length_of_chunked_body + te_chunked) + chunked_body},
        {"GET, Content-Length before Transfer-Encoding",
         request("GET", "/go/demo", length_of_chunked_body + te_chunked) + chunked_body},
        {"POST, lower-case transfer-encoding: chunked",
         request("POST", "/go/demo", "transfer-encoding: chunked\r\n") + chunked_body},
        {"GET, lower-case transfer-encoding: chunked",
         request("GET", "/go/demo", "transfer-encoding: chunked\r\n") + chunked_body},
        {"POST, Transfer-Encoding: ChUnKeD",
         request("POST", "/go/demo", "Transfer-Encoding: ChUnKeD\r\n") + chunked_body},
        {"GET, Transfer-Encoding: ChUnKeD",
         request("GET", "/go/demo", "Transfer-Encoding: ChUnKeD\r\n") + chunked_body},
        {"POST, Transfer-Encoding: gzip, chunked",
         request("POST", "/go/demo", "Transfer-Encoding: gzip, chunked\r\n") + chunked_body},
        {"GET, Transfer-Encoding: gzip, chunked",
         request("GET", "/go/demo", "Transfer-Encoding: gzip, chunked\r\n") + chunked_body},
        // Beast 1.81 takes a Transfer-Encoding that does not end in chunked for "no body", and
        // then accepts a Content-Length after it.
        {"POST, Transfer-Encoding: gzip then Content-Length",
         request("POST", "/go/demo", "Transfer-Encoding: gzip\r\n" + length_of_chunked_body) +
             chunked_body},
        {"POST, Transfer-Encoding: identity",
         request("POST", "/go/demo", "Transfer-Encoding: identity\r\n") + chunked_body},
        {"GET, Transfer-Encoding: identity",
         request("GET", "/go/demo", "Transfer-Encoding: identity\r\n") + chunked_body},
        {"POST, Transfer-Encoding: chunked on HTTP/1.0",
         request("POST", "/go/demo", te_chunked, "HTTP/1.0") + chunked_body},
        {"GET, Transfer-Encoding: chunked on HTTP/1.0",
         request("GET", "/go/demo", te_chunked, "HTTP/1.0") + chunked_body},
        {"POST, Transfer-Encoding folded onto a continuation line",
         request("POST", "/go/demo", "Transfer-Encoding:\r\n chunked\r\n") + chunked_body},
        {"POST, whitespace between Transfer-Encoding and the colon",
         request("POST", "/go/demo", "Transfer-Encoding : chunked\r\n") + chunked_body},
        {"POST, two differing Content-Length fields",
         request("POST", "/go/demo", "Content-Length: 5\r\nContent-Length: 6\r\n") + chunked_body},
        {"POST, one Content-Length listing two differing values",
         request("POST", "/go/demo", "Content-Length: 5, 6\r\n") + chunked_body},
        {"GET with a Content-Length and a body",
         request("GET", "/go/demo", "Content-Length: 5\r\n")},
        {"HEAD with a Content-Length and a body",
         request("HEAD", "/go/demo", "Content-Length: 5\r\n")},
    };
    for (const auto& shape : shapes) {
        INFO("shape: " << shape.name);
        // For the GET and HEAD shapes, the first 5 bytes of the smuggled request are the body.
        expect_one_answer_then_close(demo.port(), shape.bytes + std::string(kSmuggled), 400);
    }

    // The refusals changed nothing: the link is still served.
    auto after = http_get(demo.port(), "/go/demo");
    CHECK(after.status == 302);
    CHECK(demo.process().running());
}

TEST_CASE(
    "http protocol: a header line folded onto the next (obs-fold) is answered 400 and the "
    "connection closed, on both listeners",
    "[http]") {
    DemoService demo;
    // RFC 9112 section 5.2. Beast 1.81 joined the lines into one value and answered.
    for (int port : {demo.port(), demo.process().admin_port()}) {
        INFO("port " << port << (port == demo.port() ? " (public)" : " (admin)"));
        expect_one_answer_then_close(
            port, request("GET", "/healthz", "X-Foo: a\r\n b\r\n") + std::string(kSmuggled), 400);
        expect_one_answer_then_close(
            port, request("GET", "/go/demo", "X-Foo: a\r\n\tb\r\n") + std::string(kSmuggled), 400);
        // Read by Beast, not the fast path (a body).
        expect_one_answer_then_close(
            port,
            request("POST", "/api/v1/partners", "Content-Length: 2\r\nX-Foo:\r\n b\r\n") + "{}" +
                std::string(kSmuggled),
            400);
    }
    CHECK(http_get(demo.port(), "/go/demo").status == 302);
    CHECK(http_get(demo.process().admin_port(), "/healthz").status == 200);
}

TEST_CASE(
    "http protocol: a burst of 50 pipelined requests is answered in order on one connection, "
    "HEAD answers without a body",
    "[http]") {
    DemoService demo;
    struct Expected {
        int status;
        bool head;
        std::string_view location;
    };
    std::string burst;
    std::vector<Expected> expected;
    for (int i = 0; i < 50; ++i) {
        switch ((i * 7 + i / 5) % 4) {
            case 0:
                burst += request("GET", "/go/demo");
                expected.push_back({302, false, kLocation});
                break;
            case 1:
                burst += request("GET", "/go/unknown");
                expected.push_back({404, false, ""});
                break;
            case 2:
                burst += request("HEAD", "/go/demo");
                expected.push_back({302, true, kLocation});
                break;
            default:
                burst += request("GET", "/healthz");
                expected.push_back({200, false, ""});
                break;
        }
    }
    RawConnection conn(demo.port());
    REQUIRE(conn.send(burst));
    for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO("response " << i);
        auto response = conn.read_response(5s, expected[i].head);
        REQUIRE(response.has_value());
        CHECK(response->status == expected[i].status);
        CHECK(response->header("Location") == expected[i].location);
        CHECK(response->header("Connection") != "close");
        if (expected[i].head) {
            CHECK(response->body.empty());
            // No body follows the HEAD answer's header: the next answer starts right after it.
            CHECK((conn.pending().empty() || conn.pending().starts_with("HTTP/1.1 ")));
        } else if (expected[i].status == 200) {
            CHECK(response->body == "{\"status\":\"ok\"}\n");
        } else {
            CHECK_FALSE(response->body.empty());
        }
    }
    // Nothing more than the 50 answers came, and the connection still serves.
    CHECK(conn.pending().empty());
    REQUIRE(conn.send(request("GET", "/go/demo")));
    auto last = conn.read_response(5s);
    REQUIRE(last.has_value());
    CHECK(last->status == 302);
}

TEST_CASE(
    "http protocol: answers more than the socket takes at once reach a client that reads them "
    "late, whole and in order, and one that never reads is closed after the write timeout",
    "[http]") {
    // The write timeout bounds the writing of one batch of answers, not each send (README): the
    // late reader has it, less its 300 ms of sleep, to take each batch, which a busy machine's
    // sanitizer build took more than 400 ms for.
    DemoService demo(EnvPairs{{"REFGATE_WRITE_TIMEOUT_MS", "2000"}});
    // About 5 MiB of answers: more than the server's socket and the client's hold together (the
    // kernel's send buffer grows to 4 MiB at most), so the server must wait to write the rest.
    constexpr int kRequests = 8000;
    std::string burst;
    for (int i = 0; i < kRequests; ++i) burst += request("GET", "/go/demo");

    RawConnection late(demo.port(), 4096);
    REQUIRE(late.send(burst));
    std::this_thread::sleep_for(300ms);
    int answered = 0;
    for (; answered < kRequests; ++answered) {
        auto response = late.read_response(5s);
        if (!response || response->status != 302 || response->header("Location") != kLocation)
            break;
    }
    CHECK(answered == kRequests);
    CHECK(late.pending().empty());
    // The connection still serves.
    REQUIRE(late.send(request("GET", "/go/demo")));
    auto next = late.read_response(5s);
    REQUIRE(next.has_value());
    CHECK(next->status == 302);

    RawConnection stuck(demo.port(), 4096);
    REQUIRE(stuck.send(burst));
    // The write timeout passes while nothing is read (armed when a send first falls short,
    // which a busy machine may reach a while after the burst was sent).
    std::this_thread::sleep_for(4s);
    int received = 0;
    while (stuck.read_response(3s)) ++received;
    INFO(received << " answers before the close");
    CHECK(received < kRequests);
    CHECK(stuck.wait_closed(1s));
}

TEST_CASE("http protocol: a keep-alive connection answers several requests in a row", "[http]") {
    DemoService demo;
    RawConnection conn(demo.port());
    for (int i = 0; i < 5; ++i) {
        INFO("request " << i);
        REQUIRE(conn.send(request(i % 2 == 0 ? "GET" : "HEAD", "/go/demo")));
        auto response = conn.read_response(5s, i % 2 != 0);
        REQUIRE(response.has_value());
        CHECK(response->status == 302);
        CHECK(response->header("Location") == kLocation);
        CHECK(response->header("Connection") != "close");
    }
    CHECK(conn.pending().empty());
    // Still open: the server did not close it between requests.
    CHECK_FALSE(conn.wait_closed(200ms));
}

TEST_CASE(
    "http protocol: requests that arrive together on many connections are each answered for "
    "their own path",
    "[http]") {
    // Sockets that are ready together are all read before any is answered, each request's link
    // starts loading meanwhile, and the answers are all written before any is sent
    // (ConnectionPoller::dispatch): no answer may take another connection's link, route or
    // method, pipelined requests are answered in order, and a connection that asked to be closed
    // gets its answer before the close. The batch's reads and sends go through io_uring where the
    // kernel allows it, and as a call each with REFGATE_IO_URING=false.
    const bool io_uring = GENERATE(true, false);
    INFO("REFGATE_IO_URING=" << (io_uring ? "true" : "false"));
    constexpr int kLinks = 16;
    nlohmann::json document = nlohmann::json::parse(kDocument);
    for (int i = 0; i < kLinks; ++i) {
        document["links"].push_back({{"slug", "l" + std::to_string(i)},
                                     {"partner", "acme"},
                                     {"destination", "https://acme.example/p/" + std::to_string(i)},
                                     {"status", "active"},
                                     {"expires_at", nullptr},
                                     {"fallback", nullptr},
                                     {"utm_passthrough", false}});
    }
    TestDatabase database;
    ServiceOptions options;
    options.database_url = import_document(database, document.dump());
    constexpr int kThreads = 2;
    options.env.emplace_back("REFGATE_THREADS", std::to_string(kThreads));
    if (!io_uring) options.env.emplace_back("REFGATE_IO_URING", "false");
    ServiceProcess service(options);
    // Each I/O thread makes its ring when it starts, not at its first batch: before any
    // redirect, every thread batches through io_uring where the kernel allows it, and none does
    // with REFGATE_IO_URING=false. Operators see which path the batches take.
    const int rings = io_uring && kernel_allows_io_uring() ? kThreads : 0;
    INFO("the kernel " << (kernel_allows_io_uring() ? "allows" : "refuses") << " io_uring");
    const std::string batching_threads =
        "\nrefgate_http_io_uring_threads " + std::to_string(rings) + "\n";
    CHECK(http_get(service.admin_port(), "/metrics").body.find(batching_threads) !=
          std::string::npos);

    constexpr std::size_t kConnections = 24;
    std::vector<std::unique_ptr<RawConnection>> connections;
    for (std::size_t c = 0; c < kConnections; ++c)
        connections.push_back(std::make_unique<RawConnection>(service.port()));
    struct Expected {
        int status;
        bool head;
        std::string location;
    };
    for (int round = 0; round < 30; ++round) {
        // Per connection: what it sends at once (one request, or two pipelined), what comes back,
        // and whether it asked the server to close it after its answer.
        std::vector<std::vector<Expected>> expected(kConnections);
        std::vector<std::string> requests(kConnections);
        std::vector<bool> closes(kConnections, false);
        for (std::size_t c = 0; c < kConnections; ++c) {
            const int pick = (static_cast<int>(c) * 5 + round * 3) % (kLinks + 6);
            const std::string link = std::to_string(pick % kLinks);
            const std::string location = "https://acme.example/p/" + link + "?ref=picks42";
            if (pick < kLinks) {
                requests[c] = request("GET", "/go/l" + link);
                expected[c].push_back({302, false, location});
            } else if (pick == kLinks) {
                requests[c] = request("GET", "/go/nope");
                expected[c].push_back({404, false, ""});
            } else if (pick == kLinks + 1) {
                requests[c] = request("GET", "/healthz");
                expected[c].push_back({200, false, ""});
            } else if (pick == kLinks + 2) {
                requests[c] = request("HEAD", "/go/l" + link);
                expected[c].push_back({302, true, location});
            } else if (pick == kLinks + 3) {
                requests[c] = request("GET", "/go/l" + link + "/?src=news");
                expected[c].push_back({302, false, location});
            } else if (pick == kLinks + 4) {
                requests[c] = request("GET", "/go/l" + link) + request("GET", "/go/nope");
                expected[c].push_back({302, false, location});
                expected[c].push_back({404, false, ""});
            } else {
                requests[c] = request("GET", "/go/l" + link, "Connection: close\r\n");
                expected[c].push_back({302, false, location});
                closes[c] = true;
            }
        }
        // All sent before any answer is read, so that the server finds them ready together.
        for (std::size_t c = 0; c < kConnections; ++c) REQUIRE(connections[c]->send(requests[c]));
        for (std::size_t c = 0; c < kConnections; ++c) {
            for (std::size_t i = 0; i < expected[c].size(); ++i) {
                INFO("round " << round << ", connection " << c << ", answer " << i << ": "
                              << requests[c]);
                auto response = connections[c]->read_response(5s, expected[c][i].head);
                REQUIRE(response.has_value());
                CHECK(response->status == expected[c][i].status);
                CHECK(response->header("Location") == expected[c][i].location);
            }
            if (closes[c]) {
                INFO("round " << round << ", connection " << c << " asked to be closed");
                CHECK(connections[c]->wait_closed(5s));
                connections[c] = std::make_unique<RawConnection>(service.port());
            }
        }
    }
    // And still after the rounds: a thread whose ring failed a batch would have dropped it.
    CHECK(http_get(service.admin_port(), "/metrics").body.find(batching_threads) !=
          std::string::npos);
}

TEST_CASE("http protocol: HTTP/1.0 closes after the answer unless the client asks for keep-alive",
          "[http]") {
    DemoService demo;

    SECTION("without Connection: keep-alive the answer says close and the server closes") {
        RawConnection conn(demo.port());
        REQUIRE(conn.send("GET /go/demo HTTP/1.0\r\n\r\n"));
        auto response = conn.read_response(5s);
        REQUIRE(response.has_value());
        CHECK(response->status == 302);
        CHECK(response->header("Connection") == "close");
        std::string extra = conn.pending();
        CHECK(conn.wait_closed(3s, &extra));
        CHECK(extra.empty());
    }

    SECTION("with Connection: keep-alive the connection stays open for the next request") {
        RawConnection conn(demo.port());
        for (int i = 0; i < 3; ++i) {
            INFO("request " << i);
            REQUIRE(conn.send("GET /go/demo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
            auto response = conn.read_response(5s);
            REQUIRE(response.has_value());
            CHECK(response->status == 302);
            CHECK(response->header("Connection") == "keep-alive");
        }
        CHECK_FALSE(conn.wait_closed(200ms));
    }
}

TEST_CASE("http protocol: a header block over the limit is answered 431 and the connection closed",
          "[http]") {
    DemoService demo;

    SECTION("many small fields") {
        std::string fields;
        for (int i = 0; i < 100; ++i) {
            fields += "X-Fill-" + std::to_string(i) + ": " + std::string(100, 'a') + "\r\n";
        }
        REQUIRE(fields.size() > 10'000);  // the default limit is 8 KiB
        expect_one_answer_then_close(demo.port(), request("GET", "/go/demo", fields), 431);
    }

    SECTION("one large field, such as a big cookie") {
        std::string fields = "Cookie: c=" + std::string(10'000, 'a') + "\r\n";
        expect_one_answer_then_close(demo.port(), request("GET", "/go/demo", fields), 431);
    }

    auto after = http_get(demo.port(), "/go/demo");
    CHECK(after.status == 302);
}

TEST_CASE(
    "http protocol: a target over the limit is answered 414, even one longer than the header "
    "limit",
    "[http]") {
    DemoService demo;

    SECTION("a target of exactly the 2 KiB target limit is not refused for its length") {
        std::string target = "/go/" + std::string(2048 - 4, 'a');
        RawConnection conn(demo.port());
        REQUIRE(conn.send(request("GET", target)));
        auto response = conn.read_response(5s);
        REQUIRE(response.has_value());
        CHECK(response->status == 404);  // no such (or valid) slug
    }

    SECTION("a target over the 2 KiB target limit") {
        std::string target = "/go/" + std::string(3000, 'a');
        expect_one_answer_then_close(demo.port(), request("GET", target), 414);
    }

    SECTION("a target longer than the whole 8 KiB header limit") {
        std::string target = "/go/" + std::string(10 * 1024, 'a');
        expect_one_answer_then_close(demo.port(), request("GET", target), 414);
    }

    auto after = http_get(demo.port(), "/go/demo");
    CHECK(after.status == 302);
}

TEST_CASE(
    "http protocol: with a header limit below the target limit, a request line longer than the "
    "header limit is answered 414",
    "[http]") {
    DemoService demo(EnvPairs{{"REFGATE_MAX_HEADER_BYTES", "1024"}});

    // Within the 2 KiB target limit, but the request line alone does not fit in 1 KiB of header.
    std::string target = "/go/" + std::string(1500, 'a');
    expect_one_answer_then_close(demo.port(), request("GET", target), 414);

    // A header block over 1 KiB after a short request line is still 431.
    std::string fields = "X-Fill: " + std::string(1200, 'a') + "\r\n";
    expect_one_answer_then_close(demo.port(), request("GET", "/go/demo", fields), 431);
}

TEST_CASE(
    "http protocol: garbage, unknown methods and odd slugs get a 4xx answer and the service keeps "
    "serving",
    "[http]") {
    DemoService demo;

    std::vector<Shape> garbage = {
        {"a TLS ClientHello", std::string("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 11)},
        {"words without a target and version", "HELLO\r\n\r\n"},
        {"a request line of control characters", std::string("\x01\x02\x03 \x04 \x05\r\n\r\n")},
        {"an unsupported HTTP version", request("GET", "/go/demo", "", "HTTP/9.9")},
        {"a target with a space", "GET /go/de mo HTTP/1.1\r\nHost: x\r\n\r\n"},
    };
    for (const auto& shape : garbage) {
        INFO("request line: " << shape.name);
        expect_one_answer_then_close(demo.port(), shape.bytes, 400);
    }

    {
        RawConnection conn(demo.port());
        REQUIRE(conn.send(request("BREW", "/go/demo")));
        auto response = conn.read_response(5s);
        REQUIRE(response.has_value());
        CHECK((response->status == 405 || response->status == 400));
        CHECK(response->header("Location").empty());
    }

    for (const char* target : {"/go/%2F", "/go/..", "/go/DEMO", "/go/demo%00", "/go/", "/go"}) {
        INFO("target: " << target);
        auto response = http_get(demo.port(), target);
        CHECK(response.status == 404);
        CHECK(response.header("Location").empty());
    }

    auto after = http_get(demo.port(), "/go/demo");
    CHECK(after.status == 302);
    CHECK(after.header("Location") == kLocation);
    CHECK(demo.process().running());
}

TEST_CASE(
    "http protocol: a slow-loris client is cut off after the read timeout while another client is "
    "served",
    "[http]") {
    DemoService demo(EnvPairs{{"REFGATE_READ_TIMEOUT_MS", "700"}});

    // Taken before the connection exists, so the server's clock for it starts later than ours.
    auto start = SteadyClock::now();
    RawConnection slow(demo.port());
    REQUIRE(slow.send("GET /go/demo HTTP/1.1\r\nHost: x\r\nX-Slow: "));
    bool closed = false;
    bool other_served = false;
    std::string extra;
    while (since(start) < 3s) {
        // Waiting for the close paces the client: one byte every 200 ms.
        if (slow.wait_closed(200ms, &extra)) {
            closed = true;
            break;
        }
        if (!other_served) {
            auto asked = SteadyClock::now();
            auto response = http_get(demo.port(), "/go/demo");
            CHECK(response.status == 302);
            CHECK(since(asked) < 1s);
            other_served = true;
        }
        slow.send("a");  // a failure shows up as the close above
    }
    auto elapsed = since(start);
    INFO("closed after " << elapsed.count() << " ms");
    CHECK(other_served);
    CHECK(closed);
    CHECK(elapsed >= 500ms);
    CHECK(extra.find("HTTP/1.1 2") == std::string::npos);
    CHECK(extra.find("HTTP/1.1 3") == std::string::npos);
}

TEST_CASE("http protocol: an idle keep-alive connection is closed after the read timeout",
          "[http]") {
    DemoService demo(EnvPairs{{"REFGATE_READ_TIMEOUT_MS", "700"}});

    // Taken before the request is sent, so the server's idle clock starts later than ours.
    auto start = SteadyClock::now();
    RawConnection conn(demo.port());
    REQUIRE(conn.send(request("GET", "/go/demo")));
    auto response = conn.read_response(5s);
    REQUIRE(response.has_value());
    CHECK(response->status == 302);
    std::string extra;
    bool closed = conn.wait_closed(3s, &extra);
    auto elapsed = since(start);
    INFO("closed after " << elapsed.count() << " ms");
    CHECK(closed);
    CHECK(elapsed >= 500ms);
    CHECK(extra.empty());
}

TEST_CASE(
    "http protocol: a connection that never sends a byte is not held for ever: it is closed after "
    "the deferred accept's second and the read timeout",
    "[http]") {
    DemoService demo(EnvPairs{{"REFGATE_READ_TIMEOUT_MS", "700"}});

    // The kernel holds a silent connection (TCP_DEFER_ACCEPT) and hands it over after about a
    // second; the read timeout runs from then. It is not held for ever.
    auto start = SteadyClock::now();
    RawConnection silent(demo.port());
    bool closed = silent.wait_closed(6s);
    auto elapsed = since(start);
    INFO("closed after " << elapsed.count() << " ms");
    CHECK(closed);
    CHECK(elapsed >= 700ms);
}

TEST_CASE(
    "http protocol: a connection over the cap is closed at once without an answer, and a freed "
    "slot is served",
    "[http]") {
    DemoService demo(EnvPairs{{"REFGATE_MAX_CONNECTIONS", "3"}});

    // Three connections the server has accepted (each answered once), now idle.
    std::vector<std::unique_ptr<RawConnection>> idle;
    for (int i = 0; i < 3; ++i) {
        idle.push_back(std::make_unique<RawConnection>(demo.port()));
        REQUIRE(idle.back()->send(request("GET", "/go/demo")));
        auto response = idle.back()->read_response(5s);
        REQUIRE(response.has_value());
        CHECK(response->status == 302);
    }

    {
        RawConnection fourth(demo.port());
        fourth.send(request("GET", "/go/demo"));  // may fail: the server may have closed already
        std::string extra;
        CHECK(fourth.wait_closed(3s, &extra));
        CHECK(extra.empty());
    }
    // The three are still served.
    for (auto& conn : idle) {
        REQUIRE(conn->send(request("GET", "/go/demo")));
        auto response = conn->read_response(5s);
        REQUIRE(response.has_value());
        CHECK(response->status == 302);
    }

    idle.erase(idle.begin());
    // The server notices the close asynchronously: allow it a moment.
    bool served = false;
    auto start = SteadyClock::now();
    while (!served && since(start) < 3s) {
        RawConnection conn(demo.port());
        conn.send(request("GET", "/go/demo"));
        auto response = conn.read_response(1s);
        served = response.has_value() && response->status == 302;
        if (!served) std::this_thread::sleep_for(50ms);
    }
    CHECK(served);
}

TEST_CASE(
    "http protocol: on SIGTERM the request in flight is answered, idle connections are closed, new "
    "ones refused, and the exit code is 0",
    "[http]") {
    DemoService demo;
    auto& service = demo.process();
    int port = demo.port();

    RawConnection idle(port);
    REQUIRE(idle.send(request("GET", "/go/demo")));
    auto first = idle.read_response(5s);
    REQUIRE(first.has_value());
    CHECK(first->status == 302);

    std::string full = request("GET", "/go/demo", "User-Agent: refgate-graceful\r\n");
    std::size_t half = full.size() / 2;
    std::optional<RawConnection> in_flight;
    in_flight.emplace(port);
    REQUIRE(in_flight->send(full.substr(0, half)));
    std::this_thread::sleep_for(300ms);  // the server has read the first half

    REQUIRE(::kill(service.pid(), SIGTERM) == 0);
    REQUIRE(service.wait_for_log("\"msg\":\"stopping\"", 5s));

    std::string extra;
    CHECK(idle.wait_closed(3s, &extra));
    CHECK(extra.empty());

    REQUIRE(in_flight->send(full.substr(half)));
    auto response = in_flight->read_response(5s);
    REQUIRE(response.has_value());
    CHECK(response->status == 302);
    CHECK(response->header("Location") == kLocation);
    CHECK(response->header("Connection") == "close");
    CHECK_FALSE(response->body.empty());
    CHECK(in_flight->wait_closed(3s));

    bool refused = false;
    auto start = SteadyClock::now();
    while (!refused && since(start) < 3s) {
        refused = connection_refused(port);
        if (!refused) std::this_thread::sleep_for(50ms);
    }
    CHECK(refused);

    // A well-behaved client closes its end once it has read the answer.
    in_flight.reset();
    INFO("service log:\n" << service.log());
    CHECK(service.stop(SIGTERM) == 0);
    CHECK(service.log().find("\"msg\":\"stopped\"") != std::string::npos);
}

TEST_CASE(
    "http protocol: after an answer with Connection: close the server lets go of the connection "
    "within the linger second, even if the client keeps its end open",
    "[http]") {
    // One slot: it must come free although the first client never closes its end.
    DemoService demo(EnvPairs{{"REFGATE_MAX_CONNECTIONS", "1"}});

    RawConnection first(demo.port());
    REQUIRE(first.send("HELLO\r\n\r\n"));
    auto refused = first.read_response(5s);
    REQUIRE(refused.has_value());
    CHECK(refused->status == 400);
    CHECK(refused->header("Connection") == "close");
    CHECK(first.wait_closed(3s));  // the server's FIN; our end stays open

    bool served = false;
    auto start = SteadyClock::now();
    while (!served && since(start) < 3s) {
        RawConnection next(demo.port());
        next.send(request("GET", "/go/demo"));  // may fail while the slot is taken
        auto response = next.read_response(1s);
        served = response.has_value() && response->status == 302;
        if (!served) std::this_thread::sleep_for(100ms);
    }
    INFO("after " << since(start).count() << " ms");
    CHECK(served);
}

TEST_CASE(
    "http protocol: SIGTERM does not wait out the shutdown timeout for the client of the request "
    "in flight keeping its end open",
    "[http]") {
    DemoService demo(EnvPairs{{"REFGATE_SHUTDOWN_TIMEOUT_MS", "6000"}});
    auto& service = demo.process();

    std::string full = request("GET", "/go/demo");
    std::size_t half = full.size() / 2;
    RawConnection conn(demo.port());
    REQUIRE(conn.send(full.substr(0, half)));
    std::this_thread::sleep_for(300ms);  // the server has read the first half

    auto signalled = SteadyClock::now();
    REQUIRE(::kill(service.pid(), SIGTERM) == 0);
    REQUIRE(service.wait_for_log("\"msg\":\"stopping\"", 5s));
    REQUIRE(conn.send(full.substr(half)));
    auto response = conn.read_response(5s);
    REQUIRE(response.has_value());
    CHECK(response->status == 302);
    CHECK(response->header("Connection") == "close");
    CHECK(conn.wait_closed(3s));  // the server's FIN; our end stays open

    int exit_code = service.stop(SIGTERM);
    auto took = since(signalled);
    std::string log = service.log();
    INFO("exited " << took.count() << " ms after SIGTERM; service log:\n" << log);
    CHECK(exit_code == 0);
    CHECK(took < 4s);  // the linger after the last answer is 1 s
    CHECK(log.find("shutdown_timeout") == std::string::npos);
}

TEST_CASE("http protocol: SIGINT stops the service with exit code 0", "[http]") {
    DemoService demo;
    auto response = http_get(demo.port(), "/go/demo");
    CHECK(response.status == 302);
    INFO("service log:\n" << demo.process().log());
    CHECK(demo.process().stop(SIGINT) == 0);
}

TEST_CASE(
    "http protocol: no answer sets a cookie, and the log holds neither the user agent nor the "
    "client address",
    "[http]") {
    DemoService demo;
    int port = demo.port();
    const std::string agent = "User-Agent: " + std::string(kUserAgent) + "\r\n";

    std::vector<std::pair<std::string, bool>> requests = {
        {request("GET", "/go/demo", agent), false},
        {request("GET", "/go/demo?src=newsletter", agent), false},
        {request("HEAD", "/go/demo", agent), true},
        {request("GET", "/go/unknown", agent), false},
        {request("POST", "/go/demo", agent + "Content-Length: 0\r\n"), false},
        {request("GET", "/healthz", agent), false},
        {request("GET", "/readyz", agent), false},
        {request("GET", "/nowhere", agent + "DNT: 1\r\n"), false},
    };
    RawConnection conn(port);
    for (const auto& [bytes, head] : requests) {
        INFO("request:\n" << bytes);
        REQUIRE(conn.send(bytes));
        auto response = conn.read_response(5s, head);
        REQUIRE(response.has_value());
        CHECK_FALSE(response->has_header("Set-Cookie"));
    }
    // Refused requests, with the user agent in them.
    for (const auto& bytes :
         {request("GET", "/go/demo", agent + "Transfer-Encoding: chunked\r\n") + "0\r\n\r\n",
          request("GET", "/go/" + std::string(3000, 'a'), agent),
          request("GET", "/go/demo", agent + "X-Big: " + std::string(10'000, 'a') + "\r\n")}) {
        RawConnection refused(port);
        REQUIRE(refused.send(bytes));
        auto response = refused.read_response(5s);
        REQUIRE(response.has_value());
        CHECK(response->status >= 400);
        CHECK_FALSE(response->has_header("Set-Cookie"));
    }

    auto& service = demo.process();
    CHECK(service.stop(SIGTERM) == 0);
    std::string log = service.log();
    INFO("service log:\n" << log);
    CHECK(log.find(kUserAgent) == std::string::npos);
    std::istringstream lines(log);
    std::string line;
    int listening = 0;
    while (std::getline(lines, line)) {
        auto entry = nlohmann::json::parse(line, nullptr, false);
        if (!entry.is_discarded() && entry.is_object() && entry.value("msg", "") == "listening") {
            ++listening;
            continue;
        }
        INFO("log line: " << line);
        CHECK(line.find("127.0.0.1") == std::string::npos);
    }
    CHECK(listening == 2);
}

namespace {

// A POST to the admin API with a JSON body of `length` bytes announced and not yet sent.
std::string admin_post_header(std::size_t length, std::string_view fields) {
    std::string text = "POST /api/v1/partners HTTP/1.1\r\nHost: x\r\n";
    text.append("Content-Type: application/json\r\nContent-Length: ")
        .append(std::to_string(length))
        .append("\r\n")
        .append(fields)
        .append("\r\n");
    return text;
}

}  // namespace

TEST_CASE("http protocol: empty lines before and between pipelined requests are ignored",
          "[http]") {
    DemoService demo;
    RawConnection conn(demo.port());
    std::string burst =
        "\r\n" + request("GET", "/go/demo") + "\r\n\r\n\n" + request("HEAD", "/go/demo") + "\r\n";
    REQUIRE(conn.send(burst));
    auto first = conn.read_response(5s);
    REQUIRE(first.has_value());
    CHECK(first->status == 302);
    auto second = conn.read_response(5s, true);
    REQUIRE(second.has_value());
    CHECK(second->status == 302);
    CHECK(second->header("Connection") != "close");
    // A line break that arrives alone, later, is ignored too.
    REQUIRE(conn.send("\r\n"));
    REQUIRE(conn.send(request("GET", "/go/demo")));
    auto third = conn.read_response(5s);
    REQUIRE(third.has_value());
    CHECK(third->status == 302);
    CHECK(conn.pending().empty());
    CHECK_FALSE(conn.wait_closed(200ms));
}

TEST_CASE("http protocol: empty lines beyond the header limit are refused 400 and closed",
          "[http]") {
    DemoService demo(EnvPairs{{"REFGATE_MAX_HEADER_BYTES", "1024"}});
    std::string flood;
    for (int i = 0; i < 600; ++i) flood.append("\r\n");
    expect_one_answer_then_close(demo.port(), flood + request("GET", "/go/demo"), 400);
}

TEST_CASE("http protocol: an absolute-form target is served like its path and query", "[http]") {
    DemoService demo;
    RawConnection conn(demo.port());
    REQUIRE(conn.send(request("GET", "http://picks.example.com/go/demo")));
    auto absolute = conn.read_response(5s);
    REQUIRE(absolute.has_value());
    CHECK(absolute->status == 302);
    CHECK(absolute->header("Location") == kLocation);

    REQUIRE(conn.send(request("GET", "HTTPS://picks.example.com:443/go/demo?src=newsletter")));
    auto with_query = conn.read_response(5s);
    REQUIRE(with_query.has_value());
    CHECK(with_query->status == 302);

    REQUIRE(conn.send(request("GET", "http://picks.example.com/go/nope")));
    auto unknown = conn.read_response(5s);
    REQUIRE(unknown.has_value());
    CHECK(unknown->status == 404);
}

TEST_CASE("http protocol: an HTTP/1.1 request without Host or with two is refused 400 and closed",
          "[http]") {
    DemoService demo;
    expect_one_answer_then_close(demo.port(),
                                 "GET /go/demo HTTP/1.1\r\n\r\n" + std::string(kSmuggled), 400);
    expect_one_answer_then_close(
        demo.port(), "GET /go/demo HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n" + std::string(kSmuggled),
        400);
    expect_one_answer_then_close(demo.port(), "GET /go/demo HTTP/1.0\r\nHost: x\r\nHost: y\r\n\r\n",
                                 400);
    // Counted with the server's other refusals.
    auto metrics = http_get(demo.process().admin_port(), "/metrics");
    CHECK(metrics.body.find("refgate_http_rejected_requests_total{listener=\"public\"} 3") !=
          std::string::npos);
}

TEST_CASE(
    "http protocol: Expect: 100-continue on the admin API gets 100 Continue at once, or its "
    "final answer when the body is too large",
    "[http][admin]") {
    DemoService demo;
    int port = demo.process().admin_port();
    std::string body(1500, ' ');
    body.replace(0, 2, "{}");

    SECTION("an acceptable size: 100 Continue, then the answer once the body is sent") {
        RawConnection conn(port);
        auto start = SteadyClock::now();
        REQUIRE(conn.send(admin_post_header(body.size(), "Expect: 100-continue\r\n")));
        auto interim = conn.read_response(900ms);
        REQUIRE(interim.has_value());
        CHECK(interim->status == 100);
        CHECK(interim->reason == "Continue");
        CHECK(since(start) < 900ms);
        REQUIRE(conn.send(body));
        auto final_answer = conn.read_response(5s);
        REQUIRE(final_answer.has_value());
        CHECK(final_answer->status == 401);  // no token
    }

    SECTION("too large: 413 at once, without 100 Continue") {
        RawConnection conn(port);
        REQUIRE(conn.send(admin_post_header(10 * 1024 * 1024, "Expect: 100-continue\r\n")));
        auto answer = conn.read_response(900ms);
        REQUIRE(answer.has_value());
        CHECK(answer->status == 413);
        CHECK(answer->header("Connection") == "close");
    }

    SECTION("without Expect no 100 Continue is sent") {
        RawConnection conn(port);
        REQUIRE(conn.send(admin_post_header(body.size(), "") + body));
        auto answer = conn.read_response(5s);
        REQUIRE(answer.has_value());
        CHECK(answer->status == 401);
    }
}

TEST_CASE(
    "http protocol: the admin API answers CORS preflights, with Access-Control headers only "
    "for configured origins",
    "[http][admin][cors]") {
    DemoService demo(EnvPairs{{"REFGATE_ADMIN_CORS_ORIGINS", "https://console.example.com"}});
    int port = demo.process().admin_port();
    auto preflight = [&](const std::string& origin) {
        return http_request(port, "OPTIONS", "/api/v1/partners",
                            {{"Origin", origin},
                             {"Access-Control-Request-Method", "POST"},
                             {"Access-Control-Request-Headers", "authorization, content-type"}});
    };
    auto allowed = preflight("https://console.example.com");
    CHECK(allowed.status == 204);
    CHECK(allowed.header("Access-Control-Allow-Origin") == "https://console.example.com");
    CHECK(allowed.header("Access-Control-Allow-Methods") == "GET, POST, OPTIONS");
    CHECK(allowed.header("Access-Control-Allow-Headers") ==
          "Authorization, Content-Type, If-Match, If-None-Match");
    CHECK(allowed.has_header("Access-Control-Max-Age"));
    CHECK(allowed.header("Vary") == "Origin");

    auto other = preflight("https://evil.example");
    CHECK(other.status == 204);
    CHECK(other.header("Allow") == "GET, POST, OPTIONS");
    CHECK_FALSE(other.has_header("Access-Control-Allow-Origin"));

    // The actual request: readable by the console's scripts, even when refused.
    auto refused = http_get(port, "/api/v1/partners", {{"Origin", "https://console.example.com"}});
    CHECK(refused.status == 401);
    CHECK(refused.header("Access-Control-Allow-Origin") == "https://console.example.com");
    CHECK(refused.header("Access-Control-Expose-Headers") == "ETag, Location");
}

TEST_CASE(
    "http protocol: with hundreds of connections on a thread, idle ones still answer their next "
    "request, one sent in pieces and two pipelined, and still close at the read timeout",
    "[http]") {
    // Past 256 connections on a thread a waiting connection gives its buffers back to the pool,
    // and after a second of waiting its socket goes to the thread's parking (src/http/parking.hpp).
    DemoService demo(EnvPairs{{"REFGATE_THREADS", "1"}, {"REFGATE_READ_TIMEOUT_MS", "4000"}});
    constexpr int kConnections = 300;
    const std::string text = request("GET", "/go/demo");
    std::vector<std::unique_ptr<RawConnection>> conns;
    for (int i = 0; i < kConnections; ++i) {
        conns.push_back(std::make_unique<RawConnection>(demo.port()));
        REQUIRE(conns.back()->send(text));
        auto response = conns.back()->read_response(5s);
        REQUIRE(response.has_value());
        CHECK(response->status == 302);
    }
    auto start = SteadyClock::now();
    auto gauge = [&](std::string_view name, int n) {
        return http_get(demo.process().admin_port(), "/metrics")
                   .body.find(std::string(name) + "{listener=\"public\"} " + std::to_string(n) +
                              "\n") != std::string::npos;
    };
    auto open = [&](int n) { return gauge("refgate_http_open_connections", n); };
    auto parked = [&](int n) { return gauge("refgate_http_parked_connections", n); };
    // Every idle connection is parked a second after its answer (within a 100 ms sweep); the
    // first 256, which waited with their buffers, a second after they gave them back.
    for (int i = 0; i < 70 && !parked(kConnections); ++i) std::this_thread::sleep_for(50ms);
    CHECK(parked(kConnections));
    CHECK(open(kConnections));
    conns[1].reset();  // a parked connection whose client leaves is closed
    for (int i = 0; i < 50 && !open(kConnections - 1); ++i) std::this_thread::sleep_for(20ms);
    CHECK(open(kConnections - 1));
    CHECK(parked(kConnections - 1));
    for (int i = 0; i < kConnections; ++i) {
        if (i == 1) continue;
        if (i == kConnections - 2) {  // in two pieces, apart
            REQUIRE(conns[i]->send(text.substr(0, 9)));
            std::this_thread::sleep_for(100ms);
            REQUIRE(conns[i]->send(text.substr(9)));
        } else if (i == kConnections - 1) {  // two at once
            REQUIRE(conns[i]->send(text + text));
        } else if (i > 0) {  // the first stays idle
            REQUIRE(conns[i]->send(text));
        }
    }
    for (int i = 2; i < kConnections; ++i) {
        for (int n = 0; n < (i == kConnections - 1 ? 2 : 1); ++n) {
            auto response = conns[i]->read_response(5s);
            INFO("connection " << i << ", answer " << n);
            REQUIRE(response.has_value());
            CHECK(response->status == 302);
            CHECK(response->header("Location") == kLocation);
        }
    }
    // The idle one is closed at its read timeout, counted from its first answer.
    std::string extra;
    CHECK(conns[0]->wait_closed(6s, &extra));
    CHECK(extra.empty());
    CHECK(since(start) < 6s);
}

TEST_CASE(
    "http protocol: out of file descriptors, the service says so, keeps serving its connections "
    "and takes the waiting ones once it has descriptors again",
    "[http]") {
    DemoService demo(EnvPairs{{"REFGATE_THREADS", "1"}});
    const pid_t pid = demo.process().pid();
    RawConnection kept(demo.port());
    REQUIRE(kept.send(request("GET", "/go/demo")));
    REQUIRE(kept.read_response(5s).has_value());

    // The process's limit lowered to the descriptors it holds (prlimit(2), as `prlimit --pid`
    // would): none of these connections can be taken, but for the odd one that a descriptor the
    // service was about to close (from its start) makes room for.
    std::size_t open_fds = 0;
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
        ++open_fds;
    }
    // Only the soft limit: raising it back again needs no privilege.
    rlimit old_limit{};
    REQUIRE(::prlimit(pid, RLIMIT_NOFILE, nullptr, &old_limit) == 0);
    rlimit tight{open_fds, old_limit.rlim_max};
    REQUIRE(::prlimit(pid, RLIMIT_NOFILE, &tight, nullptr) == 0);
    std::vector<std::unique_ptr<RawConnection>> conns;
    for (int i = 0; i < 6; ++i) {
        conns.push_back(std::make_unique<RawConnection>(demo.port()));
        REQUIRE(conns.back()->send(request("GET", "/go/demo")));
    }
    std::vector<bool> answered(conns.size(), false);
    for (std::size_t i = 0; i < conns.size(); ++i) {
        auto response = conns[i]->read_response(300ms);
        answered[i] = response.has_value() && response->status == 302;
    }
    CHECK(std::count(answered.begin(), answered.end(), false) >= 2);
    CHECK(demo.process().wait_for_log("\"msg\":\"accept_failed\"", 5s));
    CHECK(demo.process().log().find("Too many open files") != std::string::npos);
    // It stays up while its background work fails to open files and connections, and a
    // connection it already has is still served.
    std::this_thread::sleep_for(1s);
    INFO("service log:\n" << demo.process().log());
    REQUIRE(demo.process().running());
    REQUIRE(kept.send(request("GET", "/go/demo")));
    auto again = kept.read_response(5s);
    REQUIRE(again.has_value());
    CHECK(again->status == 302);

    // Descriptors again: the waiting connections are taken and answered (the accept is retried
    // every 100 ms), none lost.
    REQUIRE(::prlimit(pid, RLIMIT_NOFILE, &old_limit, nullptr) == 0);
    for (std::size_t i = 0; i < conns.size(); ++i) {
        if (answered[i]) continue;
        auto response = conns[i]->read_response(5s);
        INFO("connection " << i);
        REQUIRE(response.has_value());
        CHECK(response->status == 302);
        CHECK(response->header("Location") == kLocation);
    }
    CHECK(demo.process().running());
}

}  // namespace refgate::test
