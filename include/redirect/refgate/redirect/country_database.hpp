#pragma once

// The targeting rules' country: a country database in MaxMind's format (the one refgate builds
// from a freely licensed npm package, or a GeoLite2-Country file), memory-mapped by libmaxminddb,
// and flattened in the background into sorted ranges (CountryRanges) that answer the same.

#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "refgate/domain/country_ranges.hpp"
#include "refgate/domain/targeting.hpp"
#include "refgate/redirect/range_files.hpp"
#include "refgate/runtime/published.hpp"

struct MMDB_s;

namespace refgate::redirect {

class CountryDatabase final : public domain::CountryLookup {
  public:
    // Throws std::runtime_error naming the path and libmaxminddb's reason.
    explicit CountryDatabase(const std::string& path);
    ~CountryDatabase() override;
    CountryDatabase(const CountryDatabase&) = delete;
    CountryDatabase& operator=(const CountryDatabase&) = delete;

    // GeoLite2's country.iso_code, else ip-location-db's country_code.
    domain::CountryCode country_of(const domain::IpBytes& address) const noexcept override;
    // Every address range of the database with its country, answering every address exactly as
    // country_of() does: a walk of the whole search tree (~0.5 s for the built database, for a
    // background thread). nullopt when stopped or when the tree is malformed.
    std::optional<domain::CountryRanges> ranges(std::stop_token stop) const;
    std::string describe() const;
    // What a range file made from this database records (range_files.hpp).
    MmdbSource source() const noexcept;

  private:
    std::unique_ptr<MMDB_s> db_;
};

// The country database of the running process, replaced as a whole (SIGHUP); empty: none, and
// country rules match no reader. A database published here answers at once (a walk down its
// tree per lookup); a thread then flattens it into CountryRanges and publishes those in its
// place, unless something newer was published meanwhile. The first database waits
// `first_delay` before that, so that short-lived processes (tests, a restart stopped again) never
// pay for it; later ones (a reload) are flattened at once.
class CountryLookupBox : public runtime::Published<domain::CountryLookup> {
  public:
    explicit CountryLookupBox(std::chrono::milliseconds first_delay = std::chrono::seconds{20})
        : delay_(first_delay) {}
    ~CountryLookupBox();  // stops and joins the flattening
    CountryLookupBox(const CountryLookupBox&) = delete;
    CountryLookupBox& operator=(const CountryLookupBox&) = delete;

    using runtime::Published<domain::CountryLookup>::publish;
    void publish(std::shared_ptr<const CountryDatabase> database);
    // Ranges that need no flattening (a range file mapped): a flattening under way stops.
    void publish_ranges(std::shared_ptr<const domain::CountryLookup> ranges);

  private:
    std::chrono::milliseconds delay_;
    std::jthread flatten_;  // last: stopped and joined before the rest goes
};

}  // namespace refgate::redirect
