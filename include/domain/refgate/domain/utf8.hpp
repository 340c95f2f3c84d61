#pragma once

// UTF-8 encoding of one code point, for the places that decode escapes (HTML character references,
// JSON \u escapes in the snapshot file), and the check that text read from a file is UTF-8.

#include <cstdint>
#include <string>
#include <string_view>

namespace refgate::domain {

// Appends `cp` (at most U+10FFFF; surrogates are the caller's concern) as UTF-8.
inline void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or code points
// above U+10FFFF), as JSON output needs it.
inline bool valid_utf8(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        std::size_t length = 1;
        std::uint32_t cp = c;
        if (c >= 0x80) {
            if (c >= 0xC2 && c <= 0xDF) {
                length = 2, cp = c & 0x1F;
            } else if (c >= 0xE0 && c <= 0xEF) {
                length = 3, cp = c & 0x0F;
            } else if (c >= 0xF0 && c <= 0xF4) {
                length = 4, cp = c & 0x07;
            } else {
                return false;
            }
            if (i + length > text.size()) return false;
            for (std::size_t k = 1; k < length; ++k) {
                const auto next = static_cast<unsigned char>(text[i + k]);
                if ((next & 0xC0) != 0x80) return false;
                cp = (cp << 6) | (next & 0x3F);
            }
            const std::uint32_t smallest = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
            if (cp < smallest || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        }
        i += length;
    }
    return true;
}

}  // namespace refgate::domain
