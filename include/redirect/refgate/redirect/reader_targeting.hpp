#pragma once

// What a redirect needs to evaluate a link's targeting rules for a request: the reader's
// platform (User-Agent), preferred language (Accept-Language), country (the client address,
// through the trusted X-Forwarded-For hop, looked up and forgotten) and, for a split, a keyed
// hash of the reader, link and day. Nothing is kept past the call.

#include <optional>
#include <vector>

#include "refgate/clicks/salts.hpp"
#include "refgate/domain/ip_network.hpp"
#include "refgate/domain/snapshot.hpp"
#include "refgate/http/request.hpp"
#include "refgate/redirect/country_database.hpp"
#include "refgate/redirect/reader_request.hpp"

namespace refgate::redirect {

// Shared by every thread's targeting; each may be null.
struct TargetingSources {
    const std::vector<domain::IpNetwork>* trusted_proxies = nullptr;
    // The daily salts of the unique estimate: a split's draw is the same hash, so a reader keeps
    // their branch all day on every instance. Until a salt is known (Redis away), a key of this
    // process's own, also changing daily.
    const clicks::SaltBox* salts = nullptr;
    const CountryLookupBox* countries = nullptr;
};

// One per I/O thread (not thread-safe). Allocates nothing per call.
class ReaderTargeting {
  public:
    explicit ReaderTargeting(const TargetingSources& sources);

    // Where a reader of `entry` (an active link) goes; `reader` is the request read once
    // (ReaderRequest::of with trusted_proxies()).
    domain::Target choose(const domain::Snapshot& snapshot, const domain::LinkEntry& entry,
                          ReaderRequest& reader, std::int64_t unix_seconds);
    // Whether the last choose() looked the reader's country up, and what it found (0: none).
    bool looked_up() const noexcept { return looked_up_; }
    domain::CountryCode last_country() const noexcept { return last_country_; }
    // Whether a country database is loaded: clicks are then counted per country.
    bool has_countries() noexcept { return countries_ && countries_->get() != nullptr; }
    // The reader's country (0: unknown or no database).
    domain::CountryCode country_of(const ReaderRequest& reader);
    const std::vector<domain::IpNetwork>& trusted_proxies() const noexcept;

  private:
    TargetingSources sources_;
    std::optional<clicks::SaltReader> salts_;
    std::optional<runtime::PublishedReader<domain::CountryLookup>> countries_;
    clicks::SaltKey own_key_{};
    domain::CountryCode last_country_ = 0;
    bool looked_up_ = false;
};

}  // namespace refgate::redirect
