#pragma once

// A country database flattened into sorted address ranges (range_table.hpp), built once per
// database, in the background.

#include <cstddef>
#include <cstdint>
#include <utility>

#include "refgate/domain/range_table.hpp"
#include "refgate/domain/targeting.hpp"

namespace refgate::domain {

class CountryRanges final : public CountryLookup {
  public:
    CountryRanges() = default;
    explicit CountryRanges(RangeTableBuilder<CountryCode> table) : table_(std::move(table)) {}

    // See RangeTableBuilder. Country 0: none.
    void add_v4(std::uint32_t first, std::uint32_t last, CountryCode country) {
        table_.add_v4(first, last, country);
    }
    void add_v6(Address128 first, Address128 last, CountryCode country) {
        table_.add_v6(first, last, country);
    }
    void alias_ipv4(bool ipv4_compatible, bool six_to_four) noexcept {
        table_.alias_ipv4(ipv4_compatible, six_to_four);
    }
    void finish() { table_.finish(); }

    CountryCode country_of(const IpBytes& address) const noexcept override {
        return table_.tables().find(address);
    }
    RangeTables<CountryCode> tables() const noexcept { return table_.tables(); }
    // Ranges after merging, gaps included; memory held (bytes).
    std::size_t size() const noexcept { return table_.size(); }
    std::size_t bytes() const noexcept { return table_.bytes(); }

  private:
    RangeTableBuilder<CountryCode> table_;
};

}  // namespace refgate::domain
