#pragma once

// A country database flattened into sorted address ranges, so that a lookup touches a few cache
// lines instead of walking some 30 nodes of the database's search tree: a prefix index (the
// first 16 bits of the address) points at the ranges that can hold it, and a binary search
// among those few finds it. Built once per database, in the background.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "refgate/domain/address_ranges.hpp"
#include "refgate/domain/targeting.hpp"

namespace refgate {

class CountryRanges final : public CountryLookup {
  public:
    // Inclusive ranges of the IPv4 space (answers IPv4-mapped addresses) and of the whole IPv6
    // space (answers every other address). Ranges of one family must not overlap (the leaves of
    // a search tree; a later overlap is cut to what is left) and may come in any order until
    // finish(). Country 0: none.
    void add_v4(std::uint32_t first, std::uint32_t last, CountryCode country);
    void add_v6(Address128 first, Address128 last, CountryCode country);
    // Where the IPv6 space repeats the IPv4 table (a database's aliases of its IPv4 subtree):
    // IPv4-compatible addresses (::a.b.c.d) and 6to4 ones (2002:aabb:ccdd::/48) are then
    // answered from it, and their ranges need not be added to the IPv6 table.
    void alias_ipv4(bool ipv4_compatible, bool six_to_four) noexcept {
        ipv4_compatible_ = ipv4_compatible;
        six_to_four_ = six_to_four;
    }
    // Sorts, fills the gaps with "none", merges neighbours of one country, builds the indexes.
    void finish();

    CountryCode country_of(const IpBytes& address) const noexcept override;
    // Ranges after merging, gaps included; memory held (bytes).
    std::size_t size() const noexcept { return v4_.starts.size() + v6_.starts.size(); }
    std::size_t bytes() const noexcept { return v4_.bytes() + v6_.bytes(); }

  private:
    template <typename T>
    struct Table {
        static constexpr int kShift = int(sizeof(T) * 8) - 16;
        struct Pending {
            T first, last;
            CountryCode country;
        };
        std::vector<Pending> pending;
        // Range i holds starts[i] up to starts[i + 1] - 1; starts[0] is 0 once finished.
        std::vector<T> starts;
        std::vector<CountryCode> countries;
        // index[p]: the range that holds the first address of prefix p (its first 16 bits).
        std::vector<std::uint32_t> index;

        void finish();
        CountryCode find(T key) const noexcept;
        std::size_t bytes() const noexcept {
            return pending.capacity() * sizeof(Pending) + starts.capacity() * sizeof(T) +
                   countries.capacity() * sizeof(CountryCode) +
                   index.capacity() * sizeof(std::uint32_t);
        }
    };
    Table<std::uint32_t> v4_;
    Table<Address128> v6_;
    bool ipv4_compatible_ = false, six_to_four_ = false;
};

}  // namespace refgate
