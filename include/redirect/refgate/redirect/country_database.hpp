#pragma once

// The targeting rules' country: a country database in MaxMind's format (the one refgate builds
// from a freely licensed npm package, or a GeoLite2-Country file), memory-mapped by libmaxminddb.

#include <memory>
#include <string>

#include "refgate/domain/targeting.hpp"
#include "refgate/runtime/published.hpp"

struct MMDB_s;

namespace refgate {

class CountryDatabase final : public CountryLookup {
  public:
    // Throws std::runtime_error naming the path and libmaxminddb's reason.
    explicit CountryDatabase(const std::string& path);
    ~CountryDatabase() override;
    CountryDatabase(const CountryDatabase&) = delete;
    CountryDatabase& operator=(const CountryDatabase&) = delete;

    // GeoLite2's country.iso_code, else ip-location-db's country_code.
    CountryCode country_of(const IpBytes& address) const noexcept override;
    std::string describe() const;

  private:
    std::unique_ptr<MMDB_s> db_;
};

// The country database of the running process, replaced as a whole (SIGHUP); empty: none, and
// country rules match no reader.
using CountryLookupBox = Published<CountryLookup>;

}  // namespace refgate
