#include "refgate/http/request_parser.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "../../../src/http/plain_header.hpp"
#include "refgate/http/server.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace request_parser_test {

namespace {

using refgate::config::HttpLimits;
using refgate::http::HeaderReading;
using refgate::http::Method;
using refgate::http::RequestParser;
using refgate::http::RequestStorage;

// Storage as a connection sets it up: the header arena reserved to the header limit.
struct Parsing {
    explicit Parsing(HttpLimits l = {}) : limits(l) {
        storage.arena.reserve(limits.max_header_bytes);
    }
    HttpLimits limits;
    RequestStorage storage;
};

// Feeds `bytes` in one go and checks the header as the server does; the refusal's status, or 0.
int refusal_status(Parsing& p, std::string_view bytes) {
    RequestParser parser(p.storage, p.limits);
    auto step = parser.put(bytes);
    if (step.refusal) return step.refusal->status;
    if (parser.header_done()) {
        if (auto refusal = parser.check_header()) return refusal->status;
    }
    return 0;
}

}  // namespace

TEST_CASE("a request split across reads is parsed once its header is complete", "[http][parser]") {
    Parsing p;
    RequestParser parser(p.storage, p.limits);
    std::string_view first = "GET /go/alpha?src=news HTTP/1.1\r\nHost: picks.example\r\n";
    auto step = parser.put(first);
    CHECK(step.need_more);
    CHECK_FALSE(parser.done());
    std::string rest(first.substr(step.used));
    rest += "User-Agent: test\r\n\r\n";
    step = parser.put(rest);
    REQUIRE_FALSE(step.refusal);
    CHECK(parser.done());
    CHECK(parser.keep_alive());
    CHECK(p.storage.method == Method::get);
    CHECK(p.storage.target == "/go/alpha?src=news");
    REQUIRE(p.storage.fields.size() == 2);
    CHECK(p.storage.fields[1].value == "test");
}

TEST_CASE("the parser takes one request and leaves a pipelined one for the next parser",
          "[http][parser]") {
    Parsing p;
    std::string_view two = "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n";
    std::size_t used = 0;
    {
        RequestParser parser(p.storage, p.limits);
        used = parser.put(two).used;
        CHECK(parser.done());
        CHECK(p.storage.target == "/a");
    }
    RequestParser next(p.storage, p.limits);
    next.put(two.substr(used));
    CHECK(next.done());
    CHECK(p.storage.target == "/b");
}

TEST_CASE("an absolute-form target reaches handlers as its path and query", "[http][parser]") {
    Parsing p;
    CHECK(refusal_status(p, "GET http://picks.example/go/a?x=1 HTTP/1.1\r\nHost: x\r\n\r\n") == 0);
    CHECK(p.storage.target == "/go/a?x=1");
    CHECK(refusal_status(p, "GET http://picks.example HTTP/1.1\r\nHost: x\r\n\r\n") == 0);
    CHECK(p.storage.target == "/");
}

TEST_CASE("requests the server must refuse get their specific status", "[http][parser]") {
    Parsing p({.max_header_bytes = 512, .max_target_bytes = 64, .max_body_bytes = 10});
    std::string long_target = "GET /" + std::string(100, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n";
    CHECK(refusal_status(p, long_target) == 414);
    std::string big_header =
        "GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(600, 'b') + "\r\n\r\n";
    CHECK(refusal_status(p, big_header) == 431);
    CHECK(refusal_status(p, "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n") ==
          400);
    CHECK(refusal_status(p, "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc") == 400);
    CHECK(refusal_status(p, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n") == 413);
    CHECK(refusal_status(p, "GET / HTTP/1.1\r\n\r\n") == 400);                        // no Host
    CHECK(refusal_status(p, "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == 400);  // two
    CHECK(refusal_status(p, "GET / HTTP/1.0\r\n\r\n") == 0);  // HTTP/1.0 needs none
    CHECK(refusal_status(p, "HTTP/1.1 200 OK\r\n\r\n") == 400);
}

TEST_CASE("a body within the limit is read whole", "[http][parser]") {
    Parsing p({.max_body_bytes = 64});
    RequestParser parser(p.storage, p.limits);
    std::string_view input = "POST /api HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
    // The header first, then the body: the server calls put() while it takes bytes.
    auto step = parser.put(input);
    REQUIRE_FALSE(step.refusal);
    CHECK(parser.header_done());
    CHECK_FALSE(parser.check_header());
    CHECK(parser.content_length() == 5);
    step = parser.put(input.substr(step.used));
    REQUIRE_FALSE(step.refusal);
    CHECK(parser.done());
    CHECK(p.storage.body == "hello");
}

// Feeds `bytes` as the session does when they arrive `piece` bytes at a time: the unparsed rest
// stays buffered; the refusal's status, 0 for a complete request, -1 while it waits for more.
int status_in_pieces(Parsing& p, std::string_view bytes, std::size_t piece,
                     HeaderReading reading = HeaderReading::plain_first) {
    RequestParser parser(p.storage, p.limits, nullptr, reading);
    std::string buffer;
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
        buffer.append(bytes.substr(at, piece));
        auto step = parser.put(buffer);
        buffer.erase(0, step.used);
        if (step.refusal) return step.refusal->status;
        if (parser.done()) return 0;
    }
    return -1;
}

TEST_CASE("the header limit counts every byte of the header however the bytes arrive",
          "[http][parser]") {
    HttpLimits limits;
    limits.max_header_bytes = 256;
    const std::string line = "GET /go/demo HTTP/1.1\r\nHost: a\r\nX-Long: ";
    // At the limit: accepted, all at once and in small reads alike.
    const std::string fits = line + std::string(256 - line.size() - 4, 'b') + "\r\n\r\n";
    REQUIRE(fits.size() == 256);
    for (std::size_t piece : {fits.size(), std::size_t{7}, std::size_t{1}}) {
        Parsing p(limits);
        CHECK(status_in_pieces(p, fits, piece) == 0);
    }
    // One byte over: 431 (a long field, not a long target) all at once and in small reads;
    // Beast alone let the whole-read one through and called the other 414.
    const std::string over = line + std::string(256 - line.size() - 3, 'b') + "\r\n\r\n";
    for (std::size_t piece : {over.size(), std::size_t{7}, std::size_t{1}}) {
        Parsing p(limits);
        CHECK(status_in_pieces(p, over, piece) == 431);
    }
    // A long target is still 414, in pieces too.
    const std::string target = "GET /" + std::string(300, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n";
    for (std::size_t piece : {target.size(), std::size_t{7}}) {
        Parsing p(limits);
        CHECK(status_in_pieces(p, target, piece) == 414);
    }
}

TEST_CASE("a header line folded onto the next (obs-fold) is refused 400 however it arrives",
          "[http][parser]") {
    // RFC 9112 section 5.2: a field line continued by a line that starts with SP or HTAB. Beast
    // 1.81 would join it into one value ("a b"), which a proxy in front may read differently.
    const std::vector<std::string> folded = {
        "GET /go/demo HTTP/1.1\r\nHost: x\r\nX-Foo: a\r\n b\r\n\r\n",
        "GET /go/demo HTTP/1.1\r\nX-Foo: a\r\n\tb\r\nHost: x\r\n\r\n",
        "GET /go/demo HTTP/1.1\r\nHost: x\r\nX-Foo:\r\n b\r\n\r\n",  // empty first line
        "GET /go/demo HTTP/1.1\r\nHost:\r\n x\r\n\r\n",
        "POST /api HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nX-Foo: a\r\n  b\r\n\r\nhi",
    };
    for (const auto& bytes : folded) {
        for (auto reading : {HeaderReading::plain_first, HeaderReading::beast_only}) {
            for (std::size_t piece : {bytes.size(), std::size_t{5}, std::size_t{1}}) {
                INFO(bytes << " in pieces of " << piece);
                Parsing p({.max_body_bytes = 64});
                CHECK(status_in_pieces(p, bytes, piece, reading) == 400);
            }
        }
    }
    // Line breaks followed by a space in a body, or a value with inner spaces, are no fold.
    const std::vector<std::string> plain = {
        "POST /api HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n\r\n ab",
        "GET /go/demo HTTP/1.1\r\nHost: x\r\nX-Foo: a  b\t\r\n\r\n",
    };
    for (const auto& bytes : plain) {
        for (auto reading : {HeaderReading::plain_first, HeaderReading::beast_only}) {
            INFO(bytes);
            Parsing p({.max_body_bytes = 64});
            RequestParser parser(p.storage, p.limits, nullptr, reading);
            auto step = parser.put(bytes);  // the header
            REQUIRE_FALSE(step.refusal);
            if (!parser.done()) step = parser.put(std::string_view(bytes).substr(step.used));
            CHECK_FALSE(step.refusal);
            CHECK(parser.done());
        }
    }
}

// Records what the parser tells it before the request is handled.
class Preparing final : public refgate::http::Handler {
  public:
    void handle(const refgate::http::Request&, refgate::http::Response&) override {}
    void prepare(std::string_view path, Parsed stage, refgate::http::RequestNotes& notes) override {
        seen.emplace_back(std::string(path), stage);
        notes.handler = this;
        ++notes.values[0];
    }
    std::vector<std::pair<std::string, Parsed>> seen;
};

TEST_CASE("the handler is told the path at the request line and again at the header's end",
          "[http][parser]") {
    using Parsed = refgate::http::Handler::Parsed;
    Parsing p;
    Preparing early;
    RequestParser parser(p.storage, p.limits, &early);
    std::string_view first = "GET /go/alpha?src=news HTTP/1.1\r\nHost: picks.example\r\n";
    auto step = parser.put(first);
    // Not the header's stage before the header is complete.
    for (const auto& [path, stage] : early.seen) CHECK(stage == Parsed::request_line);
    std::string rest(first.substr(step.used));
    rest += "\r\n";
    step = parser.put(rest);
    REQUIRE(parser.done());
    // The request line once or more (the fast path tells it before it finds the header cut
    // short, then Beast), the header's end once and last.
    REQUIRE(early.seen.size() >= 2);
    for (std::size_t i = 0; i + 1 < early.seen.size(); ++i)
        CHECK(early.seen[i] == std::pair<std::string, Parsed>("/go/alpha", Parsed::request_line));
    CHECK(early.seen.back() == std::pair<std::string, Parsed>("/go/alpha", Parsed::header));

    // An absolute-form target: its path, as handle() will see it.
    Parsing q;
    Preparing absolute;
    RequestParser second(q.storage, q.limits, &absolute);
    second.put("GET http://picks.example/go/beta HTTP/1.1\r\nHost: picks.example\r\n\r\n");
    REQUIRE(absolute.seen.size() == 2);
    CHECK(absolute.seen[0].first == "/go/beta");

    // A whole plain header at once: told exactly twice, in order.
    Parsing w;
    Preparing whole;
    RequestParser fourth(w.storage, w.limits, &whole);
    REQUIRE(fourth.put("GET /go/gamma?x=1 HTTP/1.1\r\nHost: picks.example\r\n\r\n").used > 0);
    REQUIRE(fourth.plain());
    REQUIRE(whole.seen.size() == 2);
    CHECK(whole.seen[0] == std::pair<std::string, Parsed>("/go/gamma", Parsed::request_line));
    CHECK(whole.seen[1] == std::pair<std::string, Parsed>("/go/gamma", Parsed::header));
    // What it noted stays with the request for handle(), and is gone with the next one.
    CHECK(w.storage.notes.handler == &whole);
    CHECK(w.storage.notes.values[0] == 2);
    RequestParser fifth(w.storage, w.limits, nullptr);
    CHECK(w.storage.notes.handler == nullptr);
    CHECK(w.storage.notes.values[0] == 0);

    // A refused request line tells nothing.
    Parsing r;
    Preparing refused;
    RequestParser third(r.storage, r.limits, &refused);
    CHECK(third.put("GET /go/x HTTX/1.1\r\nHost: a\r\n\r\n").refusal);
    CHECK(refused.seen.empty());
}

TEST_CASE("a plain header that arrives a byte at a time is still read by the fast path",
          "[http][parser]") {
    // The fast path looks again only once the bytes that came end a header: whatever the cut,
    // the header is read when its last byte is in, by the fast path, which went over it once
    // (the handler is told the request line once).
    const std::string request =
        "GET /go/alpha?src=news HTTP/1.1\r\nHost: picks.example\r\nUser-Agent: test\r\n\r\n"
        "GET /go/next HTTP/1.1\r\n";
    const std::size_t header_size = request.find("GET /go/next");
    for (std::size_t piece : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{5}}) {
        Parsing p;
        Preparing early;
        RequestParser parser(p.storage, p.limits, &early);
        std::string buffer;  // what the connection holds: Beast takes none of it meanwhile
        std::size_t fed = 0;
        RequestParser::Step step;
        while (!parser.done() && fed < request.size()) {
            buffer.append(request, fed, piece);
            fed = std::min(request.size(), fed + piece);
            step = parser.put(buffer);
            REQUIRE_FALSE(step.refusal);
            if (!parser.done()) {
                CHECK(step.used == 0);
                CHECK(step.need_more);
            }
        }
        CAPTURE(piece);
        REQUIRE(parser.done());
        CHECK(parser.plain());
        CHECK(early.seen.size() == 2);
        CHECK(step.used == header_size);
        CHECK(fed >= header_size);
        CHECK(fed < header_size + piece);
        CHECK(p.storage.target == "/go/alpha?src=news");
        REQUIRE(p.storage.fields.size() == 2);
        CHECK(p.storage.fields[1].value == "test");
    }
}

TEST_CASE("a path read ahead of the parser is the path the parser reads, or none",
          "[http][parser]") {
    const refgate::config::HttpLimits limits;
    using refgate::http::arriving_path;
    CHECK(arriving_path("GET /go/alpha?src=news HTTP/1.1\r\n", limits) == "/go/alpha");
    CHECK(arriving_path("HEAD /go/beta HTTP/1.1\r\nHost: x\r\n", limits) == "/go/beta");
    CHECK(arriving_path("GET / HTTP/1.0", limits) == "/");
    CHECK(arriving_path("GET /go/alp", limits).empty());  // its end has not come
    CHECK(arriving_path("POST /go/alpha HTTP/1.1\r\n", limits).empty());
    CHECK(arriving_path("GET http://h/go/alpha HTTP/1.1\r\n", limits).empty());
    CHECK(arriving_path("\r\nGET /go/alpha HTTP/1.1\r\n", limits).empty());
    CHECK(arriving_path("GET  /go/alpha HTTP/1.1\r\n", limits).empty());
    const std::string long_target = "/go/" + std::string(limits.max_target_bytes, 'a');
    CHECK(arriving_path("GET " + long_target + " HTTP/1.1\r\n", limits).empty());
}

TEST_CASE("notes made ahead of the parser are kept only for the path its request line has",
          "[http][parser]") {
    Parsing p;
    Preparing early;
    // Made for the path that comes: kept, the mark gone (it pointed into the read buffer).
    {
        RequestParser parser(p.storage, p.limits, &early);
        p.storage.notes.arrived = "/go/alpha";
        p.storage.notes.values[1] = 77;
        REQUIRE(parser.put("GET /go/alpha HTTP/1.1\r\nHost: x\r\n\r\n").used > 0);
        CHECK(p.storage.notes.values[1] == 77);
        CHECK(p.storage.notes.arrived.empty());
    }
    // Made for another path: dropped before the handler is told the request line.
    {
        RequestParser parser(p.storage, p.limits, &early);
        p.storage.notes.arrived = "/go/other";
        p.storage.notes.values[1] = 77;
        REQUIRE(parser.put("GET /go/alpha HTTP/1.1\r\nHost: x\r\n\r\n").used > 0);
        CHECK(p.storage.notes.values[1] == 0);
        CHECK(p.storage.notes.values[0] == 2);  // only what the parser's two calls noted
    }
    // Not confirmed by the first bytes parsed (the header is not whole): dropped too.
    {
        RequestParser parser(p.storage, p.limits, &early);
        p.storage.notes.arrived = "/go/alpha";
        p.storage.notes.values[1] = 77;
        CHECK(parser.put("GET /go/alpha HTTP/1.1\r\nHost").need_more);
        CHECK(p.storage.notes.values[1] == 0);
        CHECK(p.storage.notes.arrived.empty());
    }
}

// Everything a parse of one input comes to, whichever path read it.
struct Parse {
    std::size_t used = 0;
    bool need_more = false;
    int refusal = 0;  // the status of a refusal from put() or check_header(), else 0
    bool header_done = false, done = false, keep_alive = false;
    std::string method_name, target;
    Method method = Method::other;
    int version = 0, host_fields = 0;
    std::vector<std::pair<std::string, std::string>> fields;
    bool plain = false;  // not compared: which path it was

    bool same_as(const Parse& o) const {
        return used == o.used && need_more == o.need_more && refusal == o.refusal &&
               header_done == o.header_done && done == o.done && keep_alive == o.keep_alive &&
               method_name == o.method_name && target == o.target && method == o.method &&
               version == o.version && host_fields == o.host_fields && fields == o.fields;
    }
};

Parse parse(const HttpLimits& limits, std::string_view input,
            refgate::http::HeaderReading reading) {
    Parsing p(limits);
    RequestParser parser(p.storage, p.limits, nullptr, reading);
    Parse r;
    auto step = parser.put(input);
    r.used = step.used;
    r.need_more = step.need_more;
    if (step.refusal) {
        r.refusal = step.refusal->status;
        return r;
    }
    r.header_done = parser.header_done();
    if (!r.header_done) return r;
    if (auto refusal = parser.check_header()) r.refusal = refusal->status;
    r.done = parser.done();
    r.keep_alive = parser.keep_alive();
    r.plain = parser.plain();
    const auto& s = p.storage;
    r.method_name = s.method_name;
    r.target = s.target;
    r.method = s.method;
    r.version = s.version;
    r.host_fields = s.host_fields;
    for (const auto& f : s.fields) r.fields.emplace_back(f.name, f.value);
    return r;
}

TEST_CASE("the fast path reads a plain header exactly as Beast does, and leaves the rest to it",
          "[http][parser]") {
    const std::vector<std::string> seeds = {
        "GET /go/alpha?src=news HTTP/1.1\r\nHost: picks.example\r\nUser-Agent: Mozilla/5.0 "
        "(X11; Linux x86_64) Gecko/20100101 Firefox/120.0\r\nAccept: */*\r\n\r\n",
        "HEAD /go/a HTTP/1.0\r\nConnection: keep-alive\r\nX-Empty:\t \r\n\r\nGET /",
        "GET / HTTP/1.1\r\nhost:x \r\nConnection: close\r\nProxy-Connection: Keep-Alive\r\n\r\n",
    };
    // Bytes that a header's grammar treats specially, and a few it does not.
    const std::string specials = std::string("\0\t\n\r :/?,;\"#Aa-~\x7f\x80\xff", 20);
    std::vector<std::string> inputs;
    for (const auto& seed : seeds) {
        for (std::size_t i = 0; i <= seed.size(); ++i) {
            inputs.push_back(seed.substr(0, i));
            for (char c : specials) {
                if (i < seed.size()) {
                    std::string replaced = seed;
                    replaced[i] = c;
                    inputs.push_back(std::move(replaced));
                }
                inputs.push_back(seed.substr(0, i) + c + seed.substr(i));
            }
        }
    }
    const std::vector<HttpLimits> limits = {
        {}, {.max_header_bytes = 120, .max_target_bytes = 12, .max_body_bytes = 0}};
    std::size_t plain = 0;
    for (const auto& limit : limits) {
        for (const auto& input : inputs) {
            Parse fast = parse(limit, input, HeaderReading::plain_first);
            Parse beast = parse(limit, input, HeaderReading::beast_only);
            INFO(input);
            CHECK(fast.same_as(beast));
            CHECK_FALSE(beast.plain);
            if (fast.plain) ++plain;
        }
    }
    // Most of the inputs left to Beast are refused or incomplete; the fast path read a good share.
    CHECK(plain > inputs.size() / 4);
    CHECK(plain < inputs.size() * 2);
}

}  // namespace request_parser_test
