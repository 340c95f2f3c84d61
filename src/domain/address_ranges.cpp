#include "refgate/domain/address_ranges.hpp"

#include <algorithm>

namespace refgate::domain {
namespace {}  // namespace

Address128 address_number(const IpBytes& address) noexcept {
    Address128 n = 0;
    for (std::uint8_t b : address) n = (n << 8) | b;
    return n;
}

void AddressRanges::add(Address128 first, Address128 last) {
    if (first > last) return;
    if (first < kMappedFirst) v6_.push_back({first, std::min(last, kMappedFirst - 1)});
    if (last > kMappedLast) v6_.push_back({std::max(first, kMappedLast + 1), last});
    if (first <= kMappedLast && last >= kMappedFirst) {
        auto v4_first = static_cast<std::uint32_t>(std::max(first, kMappedFirst) - kMappedFirst);
        auto v4_last = static_cast<std::uint32_t>(std::min(last, kMappedLast) - kMappedFirst);
        v4_.push_back({v4_first, v4_last});
    }
}

template <typename T>
void AddressRanges::merge(std::vector<Range<T>>& ranges) {
    std::sort(ranges.begin(), ranges.end(),
              [](const Range<T>& a, const Range<T>& b) { return a.first < b.first; });
    std::size_t out = 0;
    for (const Range<T>& r : ranges) {
        // Overlapping or adjacent (last + 1 == first, without overflowing at the top).
        if (out > 0 && (r.first <= ranges[out - 1].last || r.first - 1 == ranges[out - 1].last)) {
            ranges[out - 1].last = std::max(ranges[out - 1].last, r.last);
        } else {
            ranges[out++] = r;
        }
    }
    ranges.resize(out);
    ranges.shrink_to_fit();
}

void AddressRanges::finish() {
    merge(v4_);
    merge(v6_);
}

template <typename T>
bool AddressRanges::search(const std::vector<Range<T>>& ranges, T value) noexcept {
    // The first range starting after the value; the one before it is the only candidate.
    auto after = std::upper_bound(ranges.begin(), ranges.end(), value,
                                  [](T v, const Range<T>& r) { return v < r.first; });
    return after != ranges.begin() && value <= std::prev(after)->last;
}

bool AddressRanges::contains(const IpBytes& address) const noexcept {
    Address128 n = address_number(address);
    if (n >= kMappedFirst && n <= kMappedLast)
        return search(v4_, static_cast<std::uint32_t>(n - kMappedFirst));
    return search(v6_, n);
}

}  // namespace refgate::domain
