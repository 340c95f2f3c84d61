#include "refgate/http/request_parser.hpp"

#include <algorithm>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <new>

#include "plain_header.hpp"
#include "refgate/http/server.hpp"

namespace refgate::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using error_code = boost::system::error_code;

Method to_method(bhttp::verb verb) {
    switch (verb) {
        case bhttp::verb::get:
            return Method::get;
        case bhttp::verb::head:
            return Method::head;
        case bhttp::verb::post:
            return Method::post;
        case bhttp::verb::put:
            return Method::put;
        case bhttp::verb::patch:
            return Method::patch;
        case bhttp::verb::delete_:
            return Method::del;
        case bhttp::verb::options:
            return Method::options;
        default:
            return Method::other;
    }
}

}  // namespace

void RequestStorage::reset() {
    method = Method::other;
    method_name.clear();
    target.clear();
    authority.clear();
    version = 11;
    arena.clear();
    fields.clear();
    body.clear();
    host_fields = 0;
    transfer_encoding = false;
    notes = {};
}

bool RequestStorage::expects_continue() const {
    for (const auto& f : fields) {
        if (iequals(f.name, "expect") && iequals(f.value, "100-continue")) return true;
    }
    return false;
}

// A parser that stores nothing of its own: Beast's request_parser would build a fields container
// (a node per header) every time.
class RequestParser::Impl final : public bhttp::basic_parser<true> {
    // Errors of our own that the parser callbacks raise; each maps to one status.
    enum class RequestError { none, target_too_long, body_not_allowed, body_too_large };

  public:
    Impl(RequestStorage& storage, const config::HttpLimits& limits, Handler* early,
         HeaderReading reading)
        : storage_(storage),
          limits_(limits),
          early_(early),
          plain_first_(reading == HeaderReading::plain_first) {
        storage_.reset();
        // One byte over ours: Beast refuses a header that is still incomplete at that size, and
        // step() measures a complete one itself (Beast's own count depends on how the bytes
        // arrived).
        header_limit(static_cast<std::uint32_t>(limits.max_header_bytes + 1));
        body_limit(boost::none);  // enforced in on_body_init_impl, per method
    }

    Step step(std::string_view input) {
        Step taken = take(input);
        // Notes made ahead of the parser for a path its request line did not confirm (not read
        // yet, say) are dropped: they must not outlive the bytes they were read from.
        if (!storage_.notes.arrived.empty()) storage_.notes = {};
        return taken;
    }

    Step take(std::string_view input) {
        // Beast has taken nothing yet (it takes the request line early only when the rest of the
        // header is not there, and then the fast path has nothing whole to read either).
        if (plain_first_ && header_used_ == 0 && !plain_ && header_may_end(input)) {
            if (auto header = read_plain_header(input, limits_, storage_, early_)) {
                plain_ = header;
                return Step{.used = header->size};
            }
            plain_looked_ = input.size();
        }
        error_code ec;
        Step step;
        const bool header_was_done = is_header_done();
        step.used = basic_parser::put(boost::asio::const_buffer(input.data(), input.size()), ec);
        if (!header_was_done) header_used_ += step.used;
        if ((!ec || ec == bhttp::error::need_more) && !header_was_done &&
            folds_a_line(input.substr(0, step.used))) {
            // Beast 1.81 unfolds obs-fold into one value; RFC 9112 section 5.2 lets a server
            // refuse it with 400 instead, which every reader of the header then agrees on.
            step.need_more = false;
            step.refusal = Refusal{};
            return step;
        }
        if (ec == bhttp::error::need_more) {
            step.need_more = true;
            // Beast counts a header's bytes differently depending on how they arrived (from the
            // request line or from the fields); this counts every byte of it the same way.
            if (!is_header_done() &&
                header_used_ + input.size() - step.used > limits_.max_header_bytes) {
                step.need_more = false;
                step.refusal = refusal(bhttp::error::header_limit, input.substr(step.used));
            }
        } else if (ec) {
            step.refusal = refusal(ec, input);
        } else if (!header_was_done && is_header_done() &&
                   header_used_ > limits_.max_header_bytes) {
            // Parsing stops after the header, so this is the whole header: request line,
            // fields and the empty line.
            step.refusal = Refusal{431, "Request Header Fields Too Large"};
        }
        return step;
    }

    const RequestStorage& storage() const { return storage_; }
    const config::HttpLimits& limits() const { return limits_; }

    // The parser's state, whichever path read the header (a plain one has no body).
    bool took_some() const { return plain_ || got_some(); }
    bool header_complete() const { return plain_ || is_header_done(); }
    bool complete() const { return plain_ || is_done(); }
    bool read_plain() const { return plain_.has_value(); }
    bool stays_open() const { return plain_ ? plain_->keep_alive : keep_alive(); }
    std::uint64_t announced_length() const { return plain_ ? 0 : content_length().value_or(0); }

  private:
    // Whether the fast path may find a whole header in `input` now: always at the first look;
    // after it looked in vain (the header was not all there), only once the bytes that came
    // since end a header. So a header that arrives a byte at a time is looked at twice, not at
    // every byte.
    bool header_may_end(std::string_view input) {
        if (plain_looked_ == 0) return true;
        const std::size_t from = plain_looked_ < 3 ? 0 : plain_looked_ - 3;
        if (from < input.size() && input.find("\r\n\r\n", from) != std::string_view::npos)
            return true;
        plain_looked_ = std::max(plain_looked_, input.size());
        return false;
    }

    // Header bytes Beast took: whole lines, each ended by CRLF, the request line and whole
    // fields only (it looks past a field's CRLF before taking it), so a line that continues the
    // one before it (obs-fold: CRLF then SP or HTAB) is always within them.
    static bool folds_a_line(std::string_view header) {
        for (std::size_t at = header.find('\n'); at != std::string_view::npos;
             at = header.find('\n', at + 1)) {
            if (at + 1 < header.size() && (header[at + 1] == ' ' || header[at + 1] == '\t'))
                return true;
        }
        return false;
    }

    Refusal refusal(error_code ec, std::string_view input) const {
        switch (error_) {
            case RequestError::target_too_long:
                return {414, "URI Too Long"};
            case RequestError::body_not_allowed:
                return {400, "Bad Request"};
            case RequestError::body_too_large:
                return {413, "Content Too Large"};
            case RequestError::none:
                break;
        }
        if (ec == bhttp::error::header_limit) {
            if (storage_.method_name.empty() && target_too_long(input))
                return {414, "URI Too Long"};
            return {431, "Request Header Fields Too Large"};
        }
        return {};
    }

    // Beast parses the request line only once the whole header is in: when the header is too
    // long before that, the line is read here to tell a long target from long fields.
    bool target_too_long(std::string_view input) const {
        // Only what Beast looked at: the bytes up to the limit.
        input = input.substr(0, limits_.max_header_bytes + 1);
        const std::size_t line_end = input.find('\n');
        if (line_end == std::string_view::npos) return true;  // the line alone is over the limit
        std::string_view line = input.substr(0, line_end);
        const std::size_t first = line.find(' ');
        const std::size_t last = line.rfind(' ');
        if (first == std::string_view::npos || last <= first) return false;
        return last - first - 1 > limits_.max_target_bytes;
    }

    void on_request_impl(bhttp::verb method, beast::string_view method_str,
                         beast::string_view target, int version, error_code& ec) override {
        if (target.size() > limits_.max_target_bytes) {
            error_ = RequestError::target_too_long;
            ec = bhttp::error::bad_target;
            return;
        }
        storage_.method = to_method(method);
        storage_.method_name.assign(method_str.data(), method_str.size());
        std::string_view text(target.data(), target.size());
        if (!text.starts_with('/')) {
            // Absolute-form (RFC 9112 section 3.2.2): handlers see its path and query.
            if (auto path = absolute_form_path(text)) {
                // Its host names the domain (issue 46), not the Host field (RFC 9112 3.2.2).
                std::string_view rest = text.substr(text.find("://") + 3);
                storage_.authority.assign(rest.substr(0, rest.size() - path->size()));
                text = *path;
                if (!text.starts_with('/')) storage_.target.push_back('/');
            }
        }
        storage_.target.append(text);
        storage_.version = version;
        storage_.confirm(path());
        if (early_ != nullptr)
            early_->prepare(path(), Handler::Parsed::request_line, storage_.notes);
    }

    void on_response_impl(int, beast::string_view, int, error_code& ec) override {
        ec = bhttp::error::bad_version;
    }

    void on_field_impl(bhttp::field name, beast::string_view name_string, beast::string_view value,
                       error_code& ec) override {
        if (name == bhttp::field::host) ++storage_.host_fields;
        if (name == bhttp::field::transfer_encoding ||
            iequals({name_string.data(), name_string.size()}, "transfer-encoding")) {
            storage_.transfer_encoding = true;
        }
        auto& arena = storage_.arena;
        if (arena.size() + name_string.size() + value.size() > arena.capacity()) {
            ec = bhttp::error::header_limit;
            return;
        }
        std::size_t name_at = arena.size();
        arena.append(name_string.data(), name_string.size());
        std::size_t value_at = arena.size();
        arena.append(value.data(), value.size());
        storage_.fields.push_back({std::string_view(arena).substr(name_at, name_string.size()),
                                   std::string_view(arena).substr(value_at, value.size())});
    }

    void on_header_impl(error_code&) override {
        if (early_ != nullptr) early_->prepare(path(), Handler::Parsed::header, storage_.notes);
    }

    std::string_view path() const {
        std::string_view target = storage_.target;
        return target.substr(0, target.find('?'));
    }

    void on_body_init_impl(boost::optional<std::uint64_t> const& content_length,
                           error_code& ec) override {
        if (storage_.bodiless()) {
            error_ = RequestError::body_not_allowed;
            ec = bhttp::error::unexpected_body;
        } else if (!content_length || *content_length > limits_.max_body_bytes) {
            error_ = RequestError::body_too_large;
            ec = bhttp::error::body_limit;
        } else {
            storage_.body.reserve(static_cast<std::size_t>(*content_length));
        }
    }

    std::size_t on_body_impl(beast::string_view body, error_code&) override {
        storage_.body.append(body.data(), body.size());
        return body.size();
    }

    void on_chunk_header_impl(std::uint64_t, beast::string_view, error_code& ec) override {
        ec = bhttp::error::bad_transfer_encoding;  // never reached: Transfer-Encoding is refused
    }

    std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view, error_code& ec) override {
        ec = bhttp::error::bad_transfer_encoding;
        return 0;
    }

    void on_finish_impl(error_code&) override {}

    RequestStorage& storage_;
    const config::HttpLimits& limits_;
    Handler* early_;
    RequestError error_ = RequestError::none;
    std::size_t header_used_ = 0;  // bytes of the header taken so far
    bool plain_first_;
    std::size_t plain_looked_ = 0;      // the input's size when the fast path last declined
    std::optional<PlainHeader> plain_;  // the header, when the fast path read it
};

RequestParser::RequestParser(RequestStorage& storage, const config::HttpLimits& limits,
                             Handler* early, HeaderReading reading) {
    static_assert(sizeof(Impl) <= kImplSize);
    static_assert(alignof(Impl) <= alignof(std::max_align_t));
    new (impl_) Impl(storage, limits, early, reading);
}

RequestParser::~RequestParser() { impl().~Impl(); }

RequestParser::Impl& RequestParser::impl() { return *std::launder(reinterpret_cast<Impl*>(impl_)); }

const RequestParser::Impl& RequestParser::impl() const {
    return *std::launder(reinterpret_cast<const Impl*>(impl_));
}

RequestParser::Step RequestParser::put(std::string_view input) { return impl().step(input); }

bool RequestParser::got_some() const { return impl().took_some(); }
bool RequestParser::header_done() const { return impl().header_complete(); }
bool RequestParser::done() const { return impl().complete(); }
bool RequestParser::keep_alive() const { return impl().stays_open(); }
bool RequestParser::plain() const { return impl().read_plain(); }

std::uint64_t RequestParser::content_length() const { return impl().announced_length(); }

std::optional<Refusal> RequestParser::check_header() const {
    const RequestStorage& storage = impl().storage();
    // Beast 1.81 mis-frames some Transfer-Encoding shapes; refgate needs none.
    if (storage.transfer_encoding) return Refusal{};
    // An HTTP/1.1 request names exactly one Host, an HTTP/1.0 one at most (RFC 9112 3.2).
    if (storage.host_fields > 1 || (storage.version >= 11 && storage.host_fields == 0))
        return Refusal{};
    // A body is refused by its announced length, without waiting for it to arrive.
    auto length = content_length();
    if (storage.bodiless() && length > 0) return Refusal{};
    if (length > impl().limits().max_body_bytes) return Refusal{413, "Content Too Large"};
    return std::nullopt;
}

}  // namespace refgate::http
