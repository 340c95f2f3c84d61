#pragma once

// Address ranges with a value each (a country, an autonomous system), flattened so that a lookup
// touches a few cache lines instead of walking some 30 nodes of a database's search tree: a
// prefix index (the first 16 bits of the address) points at the ranges that can hold it, and a
// binary search among those few finds it. RangeTables is the read-only view (over vectors built
// here, or over a compact file mapped read-only: range_file.hpp); RangeTableBuilder builds it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "refgate/domain/address_ranges.hpp"

namespace refgate::domain {

// One family's table: range i holds starts[i] up to starts[i + 1] - 1 (starts[0] is 0) and has
// values[i]; index[p] is the range that holds the first address of prefix p.
template <typename T, typename V>
struct RangeColumn {
    static constexpr int kShift = int(sizeof(T) * 8) - 16;
    static constexpr std::size_t kIndexSize = std::size_t{1} << 16;
    std::span<const T> starts;
    std::span<const V> values;
    std::span<const std::uint32_t> index;  // kIndexSize entries when starts is not empty

    V find(T key) const noexcept {
        if (starts.empty()) return V{};
        auto prefix = static_cast<std::size_t>(key >> kShift);
        // The ranges from the one holding the prefix's first address to the one holding its last.
        std::size_t lo = index[prefix];
        std::size_t hi = prefix + 1 < index.size() ? index[prefix + 1] + 1 : starts.size();
        auto after = std::upper_bound(starts.begin() + static_cast<std::ptrdiff_t>(lo) + 1,
                                      starts.begin() + static_cast<std::ptrdiff_t>(hi), key);
        return values[static_cast<std::size_t>(after - starts.begin()) - 1];
    }
};

// The IPv4 space (answers IPv4-mapped addresses) and the whole IPv6 space (every other address).
// Where a database's IPv6 tree repeats its IPv4 one (aliases), IPv4-compatible addresses
// (::a.b.c.d) and 6to4 ones (2002:aabb:ccdd::/48) are answered from the IPv4 table.
template <typename V>
struct RangeTables {
    RangeColumn<std::uint32_t, V> v4;
    RangeColumn<Address128, V> v6;
    bool ipv4_compatible = false;
    bool six_to_four = false;

    // V{} (country 0, autonomous system 0): none.
    V find(const IpBytes& address) const noexcept {
        Address128 n = address_number(address);
        if (n >= kMappedFirst && n <= kMappedLast)
            return v4.find(static_cast<std::uint32_t>(n - kMappedFirst));
        if (ipv4_compatible && n <= 0xffffffffu) return v4.find(static_cast<std::uint32_t>(n));
        if (six_to_four && (n >> 112) == 0x2002)
            return v4.find(static_cast<std::uint32_t>(n >> 80));
        return v6.find(n);
    }
    std::size_t size() const noexcept { return v4.starts.size() + v6.starts.size(); }
};

template <typename V>
class RangeTableBuilder {
  public:
    // Inclusive ranges; ranges of one family must not overlap (the leaves of a search tree; a
    // later overlap is cut to what is left) and may come in any order until finish(). V{}: none.
    void add_v4(std::uint32_t first, std::uint32_t last, V value);
    void add_v6(Address128 first, Address128 last, V value);
    void alias_ipv4(bool ipv4_compatible, bool six_to_four) noexcept {
        ipv4_compatible_ = ipv4_compatible;
        six_to_four_ = six_to_four;
    }
    // Sorts, fills the gaps with V{}, merges neighbours of one value, builds the indexes.
    void finish();

    // Valid until this builder changes or goes.
    RangeTables<V> tables() const noexcept {
        return {.v4 = v4_.column(),
                .v6 = v6_.column(),
                .ipv4_compatible = ipv4_compatible_,
                .six_to_four = six_to_four_};
    }
    std::size_t size() const noexcept { return v4_.starts.size() + v6_.starts.size(); }
    // Memory held (bytes).
    std::size_t bytes() const noexcept { return v4_.bytes() + v6_.bytes(); }

  private:
    template <typename T>
    struct Table {
        struct Pending {
            T first, last;
            V value;
        };
        std::vector<Pending> pending;
        std::vector<T> starts;
        std::vector<V> values;
        std::vector<std::uint32_t> index;

        void finish();
        RangeColumn<T, V> column() const noexcept { return {starts, values, index}; }
        std::size_t bytes() const noexcept {
            return pending.capacity() * sizeof(Pending) + starts.capacity() * sizeof(T) +
                   values.capacity() * sizeof(V) + index.capacity() * sizeof(std::uint32_t);
        }
    };
    Table<std::uint32_t> v4_;
    Table<Address128> v6_;
    bool ipv4_compatible_ = false, six_to_four_ = false;
};

extern template class RangeTableBuilder<std::uint16_t>;
extern template class RangeTableBuilder<std::uint32_t>;

}  // namespace refgate::domain
