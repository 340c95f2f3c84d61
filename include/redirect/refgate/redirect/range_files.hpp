#pragma once

// The country and ASN databases' ranges in their compact form (refgate/domain/range_file.hpp),
// written at build time beside the MMDB files (country.ranges, asn.ranges) and mapped read-only
// here: the ranges cost no heap and no walk of the database, and their pages are shared by every
// refgate process on the machine.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "refgate/domain/range_file.hpp"
#include "refgate/domain/targeting.hpp"
#include "refgate/runtime/mapped_file.hpp"

namespace refgate::redirect {

// What a range file records of the MMDB it was made from; a file whose record differs from the
// database opened (another build of it) is refused.
struct MmdbSource {
    std::uint64_t build_epoch = 0;
    std::uint64_t node_count = 0;
};

class MappedCountryRanges final : public domain::CountryLookup {
  public:
    // Maps and checks the file (every byte read once, then unmapped from this process until a
    // lookup reads it); throws std::runtime_error naming the path and what is wrong, or that it
    // was made from another database than `source`.
    MappedCountryRanges(const std::string& path, const MmdbSource& source);

    domain::CountryCode country_of(const domain::IpBytes& address) const noexcept override {
        return tables_.find(address);
    }
    std::size_t size() const noexcept { return tables_.size(); }
    std::size_t bytes() const noexcept { return file_.bytes().size(); }

  private:
    runtime::MappedFile file_;
    domain::RangeTables<domain::CountryCode> tables_;
};

class MappedAsnRanges {
  public:
    // As MappedCountryRanges.
    MappedAsnRanges(const std::string& path, const MmdbSource& source);

    // What AsnDatabase::asn_of answers (an address without one, or with autonomous system 0:
    // nullopt). Allocates nothing.
    std::optional<std::uint32_t> asn_of(const domain::IpBytes& address) const noexcept {
        std::uint32_t asn = tables_.find(address);
        return asn != 0 ? std::optional<std::uint32_t>(asn) : std::nullopt;
    }
    std::size_t size() const noexcept { return tables_.size(); }
    std::size_t bytes() const noexcept { return file_.bytes().size(); }

  private:
    runtime::MappedFile file_;
    domain::RangeTables<std::uint32_t> tables_;
};

}  // namespace refgate::redirect
