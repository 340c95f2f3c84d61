#include "refgate/redirect/reader_targeting.hpp"

#include <random>

#include "refgate/domain/counter_key.hpp"

namespace refgate {
namespace {

struct TargetingFields {
    std::string_view user_agent, accept_language, forwarded_for;
};

TargetingFields targeting_fields(const http::Request& request) {
    TargetingFields out;
    if (request.fields == nullptr) return out;
    for (const auto& field : *request.fields) {
        std::string_view* slot = nullptr;
        if (field.name.size() == 10 && http::iequals(field.name, "User-Agent")) {
            slot = &out.user_agent;
        } else if (field.name.size() == 15 && http::iequals(field.name, "Accept-Language")) {
            slot = &out.accept_language;
        } else if (field.name.size() == 15 && http::iequals(field.name, "X-Forwarded-For")) {
            slot = &out.forwarded_for;
        }
        if (slot != nullptr && slot->data() == nullptr) *slot = field.value;
    }
    return out;
}

}  // namespace

ReaderTargeting::ReaderTargeting(const TargetingSources& sources) : sources_(sources) {
    if (sources.salts != nullptr) salts_.emplace(*sources.salts);
    if (sources.countries != nullptr) countries_.emplace(*sources.countries);
    std::random_device random;
    for (auto& byte : own_key_) byte = static_cast<std::uint8_t>(random());
}

Target ReaderTargeting::choose(const Snapshot& snapshot, const LinkEntry& entry,
                               const http::Request& request, std::int64_t unix_seconds) {
    TargetingFields fields = targeting_fields(request);
    static const std::vector<IpNetwork> kNoProxies;
    const auto& proxies = sources_.trusted_proxies ? *sources_.trusted_proxies : kNoProxies;
    IpBytes address = client_address(request.peer.bytes, fields.forwarded_for, proxies);
    ReaderTraits reader{0, platform_of(fields.user_agent),
                        preferred_language(fields.accept_language)};
    last_country_ = 0;
    looked_up_ = false;
    if (entry.country_rules && countries_) {
        if (const CountryLookup* countries = countries_->get()) {
            reader.country = last_country_ = countries->country_of(address);
            looked_up_ = true;
        }
    }
    auto reader_key = [&] {
        std::int32_t day = utc_day(unix_seconds);
        SaltKey key;
        if (!salts_ || !salts_->get(day, key)) {
            key = own_key_;
            for (int i = 0; i < 4; ++i) key[i] ^= static_cast<std::uint8_t>(day >> (8 * i));
        }
        return unique_hash(key, address, fields.user_agent, entry.id);
    };
    return snapshot.target(entry, reader, reader_key);
}

CountryCode ReaderTargeting::country_of(const http::Request& request) {
    const CountryLookup* countries = countries_ ? countries_->get() : nullptr;
    if (countries == nullptr) return 0;
    TargetingFields fields = targeting_fields(request);
    static const std::vector<IpNetwork> kNoProxies;
    const auto& proxies = sources_.trusted_proxies ? *sources_.trusted_proxies : kNoProxies;
    return countries->country_of(client_address(request.peer.bytes, fields.forwarded_for, proxies));
}

}  // namespace refgate
