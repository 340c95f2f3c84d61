#pragma once

// Hashes for in-process tables keyed by strings: quick_hash, and StringHash for unordered
// containers that can be searched with a string_view (with std::equal_to<>), without building a
// std::string per lookup.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace refgate::domain {

namespace string_hash_detail {

inline std::uint64_t load64(const char* p) noexcept {
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline std::uint64_t load32(const char* p) noexcept {
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Both halves of the 128-bit product folded together: every input bit reaches the low bits.
inline std::uint64_t fold_multiply(std::uint64_t a, std::uint64_t b) noexcept {
    const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
    return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
}

}  // namespace string_hash_detail

// A multiply-and-fold hash over 16 bytes a step (the shape of wyhash): several times quicker
// than libstdc++'s std::hash on a User-Agent, which the redirect path hashes on every click. For
// tables of this process only (its values are not stable across versions) and not a defence
// against chosen collisions: the tables that use it bound their probes or are caches.
inline std::uint64_t quick_hash(std::string_view text) noexcept {
    using namespace string_hash_detail;
    constexpr std::uint64_t kA = 0xa0761d6478bd642full, kB = 0xe7037ed1a0b428dbull,
                            kC = 0x8ebc6af09c88c6e3ull;
    const char* p = text.data();
    std::size_t n = text.size();
    std::uint64_t state = kC ^ n;
    for (; n > 16; n -= 16, p += 16) state = fold_multiply(load64(p) ^ kA, load64(p + 8) ^ state);
    std::uint64_t a = 0, b = 0;
    if (n >= 8) {  // the last 8 to 16 bytes, as two loads that may overlap
        a = load64(p);
        b = load64(p + n - 8);
    } else if (n >= 4) {
        a = load32(p);
        b = load32(p + n - 4);
    } else if (n > 0) {
        a = (std::uint64_t{static_cast<unsigned char>(p[0])} << 16) |
            (std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) |
            static_cast<unsigned char>(p[n - 1]);
    }
    return fold_multiply(a ^ kA, b ^ state ^ kB) ^ n;
}

struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return quick_hash(s); }
};

}  // namespace refgate::domain
