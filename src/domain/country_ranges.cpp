#include "refgate/domain/country_ranges.hpp"

#include <algorithm>

namespace refgate {
namespace {}  // namespace

void CountryRanges::add_v4(std::uint32_t first, std::uint32_t last, CountryCode country) {
    if (first <= last) v4_.pending.push_back({first, last, country});
}

void CountryRanges::add_v6(Address128 first, Address128 last, CountryCode country) {
    if (first <= last) v6_.pending.push_back({first, last, country});
}

void CountryRanges::finish() {
    v4_.finish();
    v6_.finish();
}

template <typename T>
void CountryRanges::Table<T>::finish() {
    std::sort(pending.begin(), pending.end(),
              [](const Pending& a, const Pending& b) { return a.first < b.first; });
    starts.clear();
    countries.clear();
    auto push = [&](T start, CountryCode country) {
        if (!countries.empty() && countries.back() == country) return;  // one range with its left
        starts.push_back(start);
        countries.push_back(country);
    };
    T next = 0;  // the first address not covered yet
    bool done = false;
    for (const Pending& r : pending) {
        if (done || r.last < next) continue;
        if (r.first > next) push(next, 0);
        push(std::max(r.first, next), r.country);
        done = r.last == static_cast<T>(~T{0});
        next = r.last + 1;
    }
    if (!done) push(next, 0);
    // Not `pending = {}`: that assigns an empty initializer list and keeps the capacity (30 MiB
    // for a whole country database, held for the life of the process).
    std::vector<Pending>().swap(pending);
    starts.shrink_to_fit();
    countries.shrink_to_fit();
    index.assign(std::size_t{1} << 16, 0);
    std::size_t range = 0;
    for (std::size_t prefix = 0; prefix < index.size(); ++prefix) {
        T first = static_cast<T>(static_cast<T>(prefix) << kShift);
        while (range + 1 < starts.size() && starts[range + 1] <= first) ++range;
        index[prefix] = static_cast<std::uint32_t>(range);
    }
}

template <typename T>
CountryCode CountryRanges::Table<T>::find(T key) const noexcept {
    if (starts.empty()) return 0;
    auto prefix = static_cast<std::size_t>(key >> kShift);
    // The ranges from the one holding the prefix's first address to the one holding its last.
    std::size_t lo = index[prefix];
    std::size_t hi = prefix + 1 < index.size() ? index[prefix + 1] + 1 : starts.size();
    auto after = std::upper_bound(starts.begin() + static_cast<std::ptrdiff_t>(lo) + 1,
                                  starts.begin() + static_cast<std::ptrdiff_t>(hi), key);
    return countries[static_cast<std::size_t>(after - starts.begin()) - 1];
}

CountryCode CountryRanges::country_of(const IpBytes& address) const noexcept {
    Address128 n = address_number(address);
    if (n >= kMappedFirst && n <= kMappedLast)
        return v4_.find(static_cast<std::uint32_t>(n - kMappedFirst));
    if (ipv4_compatible_ && n <= 0xffffffffu) return v4_.find(static_cast<std::uint32_t>(n));
    if (six_to_four_ && (n >> 112) == 0x2002) return v4_.find(static_cast<std::uint32_t>(n >> 80));
    return v6_.find(n);
}

}  // namespace refgate
