#include "refgate/redirect/reader_targeting.hpp"

#include <random>

#include "refgate/domain/counter_key.hpp"

namespace refgate::redirect {
namespace {

const std::vector<domain::IpNetwork> kNoProxies;

}  // namespace

ReaderTargeting::ReaderTargeting(const TargetingSources& sources) : sources_(sources) {
    if (sources.salts != nullptr) salts_.emplace(*sources.salts);
    if (sources.countries != nullptr) countries_.emplace(*sources.countries);
    std::random_device random;
    for (auto& byte : own_key_) byte = static_cast<std::uint8_t>(random());
}

domain::Target ReaderTargeting::choose(const domain::Snapshot& snapshot,
                                       const domain::LinkEntry& entry, ReaderRequest& request,
                                       std::int64_t unix_seconds) {
    domain::ReaderTraits reader{0, domain::platform_of(request.user_agent),
                                domain::preferred_language(request.accept_language)};
    last_country_ = 0;
    looked_up_ = false;
    if (entry.country_rules && countries_) {
        if (const domain::CountryLookup* countries = countries_->get()) {
            reader.country = last_country_ = countries->country_of(request.address);
            looked_up_ = true;
        }
    }
    auto reader_key = [&] {
        std::int32_t day = domain::utc_day(unix_seconds);
        clicks::SaltKey key;
        // The day's salt gives the unique estimate's hash, which the click's sample reuses.
        if (salts_ && salts_->get(day, key)) return request.hash(key, entry.id);
        key = own_key_;
        for (int i = 0; i < 4; ++i) key[i] ^= static_cast<std::uint8_t>(day >> (8 * i));
        return clicks::unique_hash(key, request.address, request.user_agent, entry.id);
    };
    return snapshot.target(entry, reader, reader_key);
}

domain::CountryCode ReaderTargeting::country_of(const ReaderRequest& reader) {
    const domain::CountryLookup* countries = countries_ ? countries_->get() : nullptr;
    return countries == nullptr ? 0 : countries->country_of(reader.address);
}

const std::vector<domain::IpNetwork>& ReaderTargeting::trusted_proxies() const noexcept {
    return sources_.trusted_proxies ? *sources_.trusted_proxies : kNoProxies;
}

}  // namespace refgate::redirect
