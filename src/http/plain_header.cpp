#include "plain_header.hpp"

#include <array>
#include <bit>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace refgate::http {
namespace {

// tchar (RFC 9110 5.6.2): the bytes of a field name, as Beast reads them.
constexpr auto kTokenBytes = [] {
    std::array<bool, 256> table{};
    for (int c = '0'; c <= '9'; ++c) table[static_cast<std::size_t>(c)] = true;
    for (int c = 'a'; c <= 'z'; ++c) {
        table[static_cast<std::size_t>(c)] = true;
        table[static_cast<std::size_t>(c - 'a' + 'A')] = true;
    }
    for (char c : std::string_view("!#$%&'*+-.^_`|~")) table[static_cast<unsigned char>(c)] = true;
    return table;
}();

bool is_token_byte(char c) { return kTokenBytes[static_cast<unsigned char>(c)]; }

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// A printable ASCII byte of at least `lowest` (0x21 for a target, 0x20 for a field value), or a
// tab where `tabs`.
bool is_plain(char c, char lowest, bool tabs) {
    return (c >= lowest && c < 0x7f) || (tabs && c == '\t');
}

// The index of the first byte at or after `at` that is not plain (is_plain), or input.size().
std::size_t plain_run(std::string_view input, std::size_t at, char lowest, bool tabs) {
#ifdef __SSE2__
    const __m128i floor = _mm_set1_epi8(lowest);
    const __m128i del = _mm_set1_epi8(0x7f);
    const __m128i tab = _mm_set1_epi8('\t');
    for (; at + 16 <= input.size(); at += 16) {
        __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(input.data() + at));
        // A signed compare: bytes from 0x80 up are negative, so below the floor as well.
        auto outside = static_cast<unsigned>(_mm_movemask_epi8(
            _mm_or_si128(_mm_cmplt_epi8(bytes, floor), _mm_cmpeq_epi8(bytes, del))));
        if (tabs) outside &= ~static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, tab)));
        if (outside != 0) return at + static_cast<std::size_t>(std::countr_zero(outside));
    }
#endif
    while (at < input.size() && is_plain(input[at], lowest, tabs)) ++at;
    return at;
}

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

struct Connection {
    bool close = false;
    bool keep_alive = false;
};

// Takes note of a field the parser gives meaning to; false for one the fast path leaves to
// Beast (body framing, Upgrade, a Connection list).
bool note_field(std::string_view name, std::string_view value, RequestStorage& storage,
                Connection& connection) {
    switch (name.size()) {
        case 4:
            if (iequals(name, "host")) ++storage.host_fields;
            return true;
        case 7:
            return !iequals(name, "upgrade");
        case 10:
        case 16:
            if (!iequals(name, "connection") && !iequals(name, "proxy-connection")) return true;
            if (iequals(value, "close")) {
                connection.close = true;
                return true;
            }
            if (iequals(value, "keep-alive")) {
                connection.keep_alive = true;
                return true;
            }
            return false;
        case 14:
            return !iequals(name, "content-length");
        case 17:
            return !iequals(name, "transfer-encoding");
        default:
            return true;
    }
}

std::optional<PlainHeader> declined(RequestStorage& storage) {
    storage.reset();
    return std::nullopt;
}

}  // namespace

std::optional<PlainHeader> read_plain_header(std::string_view input,
                                             const config::HttpLimits& limits,
                                             RequestStorage& storage, Handler* early) {
    // A header longer than the limit is Beast's to refuse.
    input = input.substr(0, limits.max_header_bytes);
    std::size_t at = 0;
    if (input.starts_with("GET /")) {
        storage.method = Method::get;
        at = 4;
    } else if (input.starts_with("HEAD /")) {
        storage.method = Method::head;
        at = 5;
    } else {
        return std::nullopt;
    }
    const std::size_t target_end = plain_run(input, at, 0x21, false);
    const std::string_view target = input.substr(at, target_end - at);
    const std::string_view version = input.substr(target_end, 11);
    if (version == " HTTP/1.1\r\n") {
        storage.version = 11;
    } else if (version == " HTTP/1.0\r\n") {
        storage.version = 10;
    } else {
        return declined(storage);
    }
    if (target.size() > limits.max_target_bytes) return declined(storage);
    storage.method_name.assign(input.substr(0, at - 1));
    storage.target.assign(target);
    // Told now, so that what it prefetches loads while the fields are read (told again by Beast
    // should the header turn out to be Beast's).
    const std::string_view path = path_of(storage.target);
    storage.confirm(path);
    if (early != nullptr) early->prepare(path, Handler::Parsed::request_line, storage.notes);

    // The fields are read in place and copied to the arena at once when the header is whole.
    Connection connection;
    at = target_end + version.size();
    const std::size_t fields_at = at;
    const char* const bytes = input.data();
    const std::size_t size = input.size();
    for (;;) {
        if (at >= size) return declined(storage);
        if (bytes[at] == '\r') {
            if (at + 1 >= size || bytes[at + 1] != '\n') return declined(storage);
            break;
        }
        const std::size_t name_at = at;
        while (at < size && is_token_byte(bytes[at])) ++at;
        if (at == name_at || at >= size || bytes[at] != ':') return declined(storage);
        const std::string_view name(bytes + name_at, at - name_at);
        ++at;
        while (at < size && is_blank(bytes[at])) ++at;
        const std::size_t value_at = at;
        at = plain_run(input, at, 0x20, true);
        // The line ends in CRLF, and the next one is there and does not continue it (obs-fold).
        if (at + 2 >= size || bytes[at] != '\r' || bytes[at + 1] != '\n' || is_blank(bytes[at + 2]))
            return declined(storage);
        std::size_t value_end = at;
        while (value_end > value_at && is_blank(bytes[value_end - 1])) --value_end;
        const std::string_view value(bytes + value_at, value_end - value_at);
        at += 2;
        if (!note_field(name, value, storage, connection)) return declined(storage);
        storage.fields.push_back({name, value});
    }
    auto& arena = storage.arena;
    const std::size_t fields_size = at - fields_at;
    if (arena.size() + fields_size > arena.capacity()) return declined(storage);
    const std::size_t arena_at = arena.size();
    arena.append(bytes + fields_at, fields_size);
    const char* const moved = arena.data() + arena_at;
    for (auto& field : storage.fields) {
        field.name = {moved + (field.name.data() - (bytes + fields_at)), field.name.size()};
        field.value = {moved + (field.value.data() - (bytes + fields_at)), field.value.size()};
    }
    at += 2;  // the empty line
    if (early != nullptr) early->prepare(path, Handler::Parsed::header, storage.notes);
    return PlainHeader{
        .size = at,
        .keep_alive = storage.version >= 11 ? !connection.close : connection.keep_alive};
}

std::string_view arriving_path(std::string_view input, const config::HttpLimits& limits) {
    std::size_t at;
    if (input.starts_with("GET /")) {
        at = 4;
    } else if (input.starts_with("HEAD /")) {
        at = 5;
    } else {
        return {};
    }
    const std::string_view target = input.substr(at, limits.max_target_bytes + 1);
    const std::size_t end = target.find(' ');
    if (end == std::string_view::npos) return {};
    return path_of(target.substr(0, end));
}

}  // namespace refgate::http
