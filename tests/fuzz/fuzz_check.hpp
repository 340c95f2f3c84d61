#pragma once

// What every fuzz target shares: an invariant check that aborts (libFuzzer records the input as a
// crash), and splitting an input into lines.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#define FUZZ_CHECK(cond)                                             \
    do {                                                             \
        if (!(cond)) refgate::fuzz::fail(#cond, __FILE__, __LINE__); \
    } while (false)

namespace refgate::fuzz {

[[noreturn]] inline void fail(const char* what, const char* file, int line) {
    std::fprintf(stderr, "invariant violated: %s (%s:%d)\n", what, file, line);
    std::abort();
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// The first `count - 1` lines of `text` and then the rest (which may hold more newlines).
inline std::vector<std::string_view> split_lines(std::string_view text, std::size_t count) {
    std::vector<std::string_view> parts;
    while (parts.size() + 1 < count) {
        auto eol = text.find('\n');
        if (eol == std::string_view::npos) break;
        parts.push_back(text.substr(0, eol));
        text.remove_prefix(eol + 1);
    }
    parts.push_back(text);
    parts.resize(count);
    return parts;
}

inline std::vector<std::string> split_list(std::string_view text, char separator) {
    std::vector<std::string> out;
    while (!text.empty()) {
        auto end = text.find(separator);
        out.emplace_back(text.substr(0, end));
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return out;
}

}  // namespace refgate::fuzz
