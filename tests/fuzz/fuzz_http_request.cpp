// The server's request parser over a connection's byte stream, framed as the session frames it
// (empty lines skipped up to the header limit, one parser per request, the header checked before
// the body, pipelined requests one after another). The first input byte picks the limits (small
// ones, so that every refusal is reachable), the second how the stream is cut into reads.
// Invariants: the outcome does not depend on how the bytes arrive (all at once or in pieces),
// except that a request line complete in the first read is checked before the rest of its
// header arrives (so a stream cut short may hold one refusal more when read at once, and a
// malformed line that is also too long may be refused as either, 400 or 414/431);
// a parser never takes a byte of the next request; an accepted request stays within every limit,
// has exactly one Host (HTTP/1.1), no Transfer-Encoding, no field line folded onto the next
// (obs-fold), and a body only where one is allowed, of its announced length; a refusal is 400, 413,
// 414 or 431; an accepted request, written out again from what was stored, parses to the same
// request; and the parser's fast path for plain headers changes nothing: Beast alone comes to the
// same outcomes.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "refgate/http/request_parser.hpp"

namespace {

using refgate::config::HttpLimits;
using refgate::http::HeaderReading;
using refgate::http::RequestParser;
using refgate::http::RequestStorage;

// What one request came to, in a form that compares as a whole.
struct Outcome {
    int status = 0;  // 0: accepted; else the refusal's status
    std::string method, target;
    int version = 0;
    std::vector<std::pair<std::string, std::string>> fields;
    std::string body;
    bool keep_alive = false;
    bool operator==(const Outcome&) const = default;
};

Outcome accepted(const RequestStorage& s, const RequestParser& parser) {
    Outcome o;
    o.method = s.method_name;
    o.target = s.target;
    o.version = s.version;
    for (const auto& f : s.fields) o.fields.emplace_back(f.name, f.value);
    o.body = s.body;
    o.keep_alive = parser.keep_alive();
    return o;
}

Outcome refused(int status) {
    Outcome o;
    o.status = status;
    return o;
}

// The session's loop over one connection, fed by `reads`. Ends at the first refusal or when the
// stream ends (a request cut short is left out, as the session would wait for it).
class Connection {
  public:
    Connection(const HttpLimits& limits, HeaderReading reading)
        : limits_(limits), reading_(reading) {
        storage_.arena.reserve(limits.max_header_bytes);
    }

    void read(std::string_view bytes) {
        if (closed_) return;
        buffer_.append(bytes);
        process();
    }

    const std::vector<Outcome>& outcomes() const { return outcomes_; }
    // The stream ended inside a request.
    bool cut_short() const {
        return !closed_ && (!buffer_.empty() || (parser_ && parser_->got_some()));
    }

  private:
    void process() {
        while (!closed_ && !buffer_.empty()) {
            if (!parser_) {
                parser_.emplace(storage_, limits_, nullptr, reading_);
                header_checked_ = false;
                empty_line_bytes_ = 0;
            }
            if (!parser_->got_some() && !skip_empty_lines()) return;
            if (buffer_.empty()) return;
            auto step = parser_->put(buffer_);
            FUZZ_CHECK(step.used <= buffer_.size());
            buffer_.erase(0, step.used);
            if (step.need_more) return;
            if (step.refusal) return refuse(step.refusal->status);
            if (parser_->header_done() && !header_checked_) {
                header_checked_ = true;
                if (auto refusal = parser_->check_header()) return refuse(refusal->status);
            }
            if (parser_->done()) {
                outcomes_.push_back(accepted(storage_, *parser_));
                check_limits(outcomes_.back());
                parser_.reset();
                continue;
            }
            if (step.used == 0) return;
        }
    }

    // False when the connection is refused for too many of them.
    bool skip_empty_lines() {
        std::size_t n = buffer_.find_first_not_of("\r\n");
        if (n == std::string::npos) n = buffer_.size();
        buffer_.erase(0, n);
        empty_line_bytes_ += n;
        if (empty_line_bytes_ <= limits_.max_header_bytes) return true;
        refuse(400);
        return false;
    }

    void refuse(int status) {
        FUZZ_CHECK(status == 400 || status == 413 || status == 414 || status == 431);
        outcomes_.push_back(refused(status));
        closed_ = true;
    }

    void check_limits(const Outcome& o) const {
        // An absolute-form target may gain the '/' of an empty path.
        FUZZ_CHECK(o.target.size() <= limits_.max_target_bytes + 1);
        FUZZ_CHECK(!o.target.empty());
        std::size_t header_bytes = 0;
        int hosts = 0;
        for (const auto& [name, value] : o.fields) {
            header_bytes += name.size() + value.size();
            FUZZ_CHECK(!refgate::http::iequals(name, "transfer-encoding"));
            if (refgate::http::iequals(name, "host")) ++hosts;
        }
        FUZZ_CHECK(header_bytes <= limits_.max_header_bytes);
        FUZZ_CHECK(hosts <= 1 && (o.version < 11 || hosts == 1));
        FUZZ_CHECK(o.body.size() <= limits_.max_body_bytes);
        if (o.method == "GET" || o.method == "HEAD") FUZZ_CHECK(o.body.empty());
    }

    const HttpLimits& limits_;
    HeaderReading reading_;
    RequestStorage storage_;
    std::optional<RequestParser> parser_;
    std::string buffer_;
    bool header_checked_ = false;
    std::size_t empty_line_bytes_ = 0;
    bool closed_ = false;
    std::vector<Outcome> outcomes_;
};

HttpLimits limits_for(std::uint8_t choice) {
    HttpLimits limits;
    limits.max_header_bytes = (choice & 1) ? 256 : 8 * 1024;
    limits.max_target_bytes = (choice & 2) ? 48 : 2 * 1024;
    limits.max_body_bytes = (choice & 4) ? 64 : 0;
    return limits;
}

struct Run {
    std::vector<Outcome> outcomes;
    bool cut_short = false;
};

Run run(std::string_view stream, const HttpLimits& limits, std::uint8_t cut,
        HeaderReading reading = HeaderReading::plain_first) {
    Connection connection(limits, reading);
    if (cut == 0) {
        connection.read(stream);
    } else {
        // Pieces of 1 to 16 bytes from a small generator seeded by `cut`.
        std::uint32_t state = cut;
        while (!stream.empty()) {
            state = state * 1103515245u + 12345u;
            std::size_t n = std::min<std::size_t>(stream.size(), 1 + (state >> 16) % 16);
            connection.read(stream.substr(0, n));
            stream.remove_prefix(n);
        }
    }
    return {connection.outcomes(), connection.cut_short()};
}

bool same(const Outcome& a, const Outcome& b) {
    return a == b || (a.status != 0 && b.status != 0 && (a.status == 400 || b.status == 400));
}

// Two runs of one stream agree, but for the early refusal described at the top.
bool agree(const Run& whole, const Run& pieces) {
    const auto& a = whole.outcomes;
    const auto& b = pieces.outcomes;
    if (a.size() == b.size() && whole.cut_short == pieces.cut_short)
        return std::equal(a.begin(), a.end(), b.begin(), same);
    return pieces.cut_short && a.size() == b.size() + 1 && a.back().status != 0 &&
           std::equal(b.begin(), b.end(), a.begin(), same);
}

std::string written_out(const Outcome& o) {
    std::string text = o.method + " " + o.target + (o.version == 10 ? " HTTP/1.0" : " HTTP/1.1");
    text += "\r\n";
    // No space after the colon: the written-out header is never longer than the one read.
    for (const auto& [name, value] : o.fields) text += name + ":" + value + "\r\n";
    return text + "\r\n" + o.body;
}

// The first request's header in the stream (after the empty lines the session skips) continues
// a line onto the next: CRLF then SP or HTAB before the empty line that ends it.
bool first_header_folds(std::string_view stream) {
    std::size_t start = stream.find_first_not_of("\r\n");
    if (start == std::string_view::npos) return false;
    std::string_view header = stream.substr(start);
    header = header.substr(0, header.find("\r\n\r\n"));
    for (std::size_t at = header.find('\n'); at != std::string_view::npos;
         at = header.find('\n', at + 1)) {
        if (at + 1 < header.size() && (header[at + 1] == ' ' || header[at + 1] == '\t'))
            return true;
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const HttpLimits limits = limits_for(data[0]);
    const std::string_view stream = refgate::fuzz::as_text(data + 2, size - 2);

    const Run whole = run(stream, limits, 0);
    FUZZ_CHECK(agree(whole, run(stream, limits, static_cast<std::uint8_t>(data[1] | 1))));
    const Run beast = run(stream, limits, 0, HeaderReading::beast_only);
    FUZZ_CHECK(beast.outcomes == whole.outcomes && beast.cut_short == whole.cut_short);
    if (!whole.outcomes.empty() && whole.outcomes.front().status == 0)
        FUZZ_CHECK(!first_header_folds(stream));

    for (const Outcome& o : whole.outcomes) {
        if (o.status != 0 || o.version < 10 || o.version > 11) continue;
        const Run again = run(written_out(o), limits, 0);
        FUZZ_CHECK(again.outcomes.size() == 1 && !again.cut_short);
        // Keep-alive follows Connection, which is among the fields written out.
        FUZZ_CHECK(again.outcomes.front() == o);
    }
    return 0;
}
