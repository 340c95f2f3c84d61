#pragma once

// Writes an autonomous-system database in MaxMind's binary format (MMDB 2.0: a binary search
// tree over address bits, a data section, a metadata map), the form libmaxminddb reads. refgate
// builds its ASN database with it from a freely licensed CSV (src/tools/asn_mmdb.cpp), and tests
// make small databases with it. Records have GeoLite2-ASN's fields, so either database serves.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "refgate/domain/ip_network.hpp"

namespace refgate::tools {

class MmdbAsnWriter {
  public:
    // The addresses from `first` to `last` (both IPv4, as IPv4-mapped IPv6, or both IPv6) belong
    // to autonomous system `asn`, run by `organization`. Throws std::invalid_argument when the
    // range is empty or mixes families. A later range wins where ranges overlap.
    void add(const domain::IpBytes& first, const domain::IpBytes& last, std::uint32_t asn,
             std::string_view organization);

    // The database: an IPv6 tree where IPv4 lives under ::/96 and, aliased, ::ffff:0:0/96.
    std::string finish(std::uint64_t build_epoch, std::string_view description) const;

    std::size_t range_count() const noexcept { return ranges_.size(); }

  private:
    struct Range {
        unsigned __int128 first;
        unsigned __int128 last;
        std::uint32_t asn;
        std::string organization;
    };
    std::vector<Range> ranges_;
};

// The same format for countries, with GeoLite2-Country's fields ({"country": {"iso_code"}}):
// refgate's country database (src/tools/country_mmdb.cpp) and the tests' small ones.
class MmdbCountryWriter {
  public:
    // The addresses from `first` to `last` are in `country` (two letters). Throws
    // std::invalid_argument as MmdbAsnWriter::add does, or for a code that is not two bytes.
    void add(const domain::IpBytes& first, const domain::IpBytes& last, std::string_view country);
    std::string finish(std::uint64_t build_epoch, std::string_view description) const;
    std::size_t range_count() const noexcept { return ranges_.size(); }

  private:
    struct Range {
        std::pair<unsigned __int128, unsigned __int128> bounds;
        std::string country;
    };
    std::vector<Range> ranges_;
};

// A range as the writers keep it: IPv4 as its 32-bit value; throws as MmdbAsnWriter::add.
std::pair<unsigned __int128, unsigned __int128> range_bounds(const domain::IpBytes& first,
                                                             const domain::IpBytes& last);

}  // namespace refgate::tools
