#pragma once

// A set of address ranges looked up by binary search: the scanner check's listed autonomous
// systems flattened out of the ASN database, so a click's check is a few compares in a small
// sorted array instead of a walk down the database's search tree.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "refgate/domain/ip_network.hpp"

namespace refgate::domain {

using Address128 = unsigned __int128;

// The address as a 128-bit number (IPv4 as its IPv4-mapped IPv6 form).
Address128 address_number(const IpBytes& address) noexcept;
// The IPv4-mapped block (::ffff:0.0.0.0/96) as numbers.
constexpr Address128 kMappedFirst = Address128{0xffff} << 32;
constexpr Address128 kMappedLast = kMappedFirst | 0xffffffffu;

class AddressRanges {
  public:
    // An inclusive range; ranges may overlap and come in any order until finish().
    void add(Address128 first, Address128 last);
    // Sorts and merges overlapping and adjacent ranges; call once, before contains().
    void finish();

    bool contains(const IpBytes& address) const noexcept;
    // Ranges after merging, IPv4 and IPv6.
    std::size_t size() const noexcept { return v4_.size() + v6_.size(); }

  private:
    template <typename T>
    struct Range {
        T first;
        T last;
    };
    // IPv4 (the mapped block) apart: the common case searches 8-byte entries.
    std::vector<Range<std::uint32_t>> v4_;
    std::vector<Range<Address128>> v6_;

    template <typename T>
    static void merge(std::vector<Range<T>>& ranges);
    template <typename T>
    static bool search(const std::vector<Range<T>>& ranges, T value) noexcept;
};

}  // namespace refgate::domain
