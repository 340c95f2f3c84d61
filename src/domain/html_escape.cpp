// HTML escaping: on every redirect (the page that links to the Location), so written 16 bytes a
// step where SSE2 is there (every x86-64) and into room sized once.

#include <array>
#include <bit>
#include <cstring>
#include <string>

#include "refgate/domain/html.hpp"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace refgate::domain {

namespace {

// An entity as 8 bytes, copied whole (a fixed-size copy is a single move); `size` of them count.
struct Entity {
    char text[8];
    std::size_t size;
};

constexpr auto kEntities = [] {
    std::array<Entity, 256> table{};
    auto set = [&](unsigned char c, std::string_view entity) {
        for (std::size_t i = 0; i < entity.size(); ++i) table[c].text[i] = entity[i];
        table[c].size = entity.size();
    };
    set('&', "&amp;");
    set('<', "&lt;");
    set('>', "&gt;");
    set('"', "&quot;");
    set('\'', "&#39;");
    return table;
}();

char* write_entity(char* to, char c) {
    const Entity& entity = kEntities[static_cast<unsigned char>(c)];
    std::memcpy(to, entity.text, sizeof entity.text);
    return to + entity.size;
}

#ifdef __SSE2__
// Writes `count` (at most 16) bytes of `chunk`, escaped: the whole chunk at once when nothing in
// it needs escaping (16 bytes are stored; the room allows it), else run by run.
[[gnu::always_inline]] inline char* write_chunk(char* to, __m128i chunk, const char* bytes,
                                                std::size_t count) {
    const __m128i hits =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, _mm_set1_epi8('&')),
                                  _mm_cmpeq_epi8(chunk, _mm_set1_epi8('<'))),
                     _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, _mm_set1_epi8('>')),
                                               _mm_cmpeq_epi8(chunk, _mm_set1_epi8('"'))),
                                  _mm_cmpeq_epi8(chunk, _mm_set1_epi8('\''))));
    auto mask = static_cast<unsigned>(_mm_movemask_epi8(hits));
    if (mask == 0) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to), chunk);
        return to + count;
    }
    std::size_t from = 0;
    do {
        const auto at = static_cast<std::size_t>(std::countr_zero(mask));
        mask &= mask - 1;
        std::memcpy(to, bytes + from, at - from);
        to = write_entity(to + (at - from), bytes[at]);
        from = at + 1;
    } while (mask != 0);
    std::memcpy(to, bytes + from, count - from);
    return to + (count - from);
}
#endif

}  // namespace

char* write_escaped_html(char* to, std::string_view text) {
#ifdef __SSE2__
    std::size_t at = 0;
    for (; at + 16 <= text.size(); at += 16) {
        const char* bytes = text.data() + at;
        to = write_chunk(to, _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes)), bytes, 16);
    }
    if (at == text.size()) return to;
    // The last bytes, from a zero-padded copy (a NUL needs no escaping and is not written).
    alignas(16) char tail[16] = {};
    std::memcpy(tail, text.data() + at, text.size() - at);
    return write_chunk(to, _mm_load_si128(reinterpret_cast<const __m128i*>(tail)), tail,
                       text.size() - at);
#else
    for (char c : text) {
        if (kEntities[static_cast<unsigned char>(c)].size != 0) {
            to = write_entity(to, c);
        } else {
            *to++ = c;
        }
    }
    return to;
#endif
}

void append_escaped_html(std::string& out, std::string_view text) {
    const std::size_t start = out.size();
    out.resize(start + escaped_html_room(text.size()));
    char* end = write_escaped_html(out.data() + start, text);
    out.resize(static_cast<std::size_t>(end - out.data()));
}

std::string escape_html(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    append_escaped_html(out, text);
    return out;
}

}  // namespace refgate::domain
