#include "refgate/redirect/scanner_check.hpp"

#include <maxminddb.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "mmdb_lookup.hpp"

namespace refgate::redirect {
AsnDatabase::AsnDatabase(const std::string& path) : db_(std::make_unique<MMDB_s>()) {
    mmdb_open(path, "ASN database", *db_);
}

AsnDatabase::~AsnDatabase() { MMDB_close(db_.get()); }

std::optional<std::uint32_t> AsnDatabase::asn_of(const domain::IpBytes& address) const noexcept {
    MMDB_lookup_result_s result = mmdb_lookup(*db_, address);
    if (!result.found_entry) return std::nullopt;
    MMDB_entry_data_s data{};
    if (MMDB_get_value(&result.entry, &data, "autonomous_system_number", nullptr) != MMDB_SUCCESS ||
        !data.has_data || data.type != MMDB_DATA_TYPE_UINT32)
        return std::nullopt;
    return data.uint32;
}

std::optional<domain::AddressRanges> AsnDatabase::ranges_of(const std::vector<std::uint32_t>& asns,
                                                            std::stop_token stop) const {
    domain::AddressRanges out;
    std::unordered_map<std::uint32_t, bool> seen;  // data offset -> listed
    auto listed = [&](MMDB_entry_s& entry) {
        auto [it, inserted] = seen.try_emplace(entry.offset, false);
        if (inserted) {
            MMDB_entry_data_s data{};
            it->second = MMDB_get_value(&entry, &data, "autonomous_system_number", nullptr) ==
                             MMDB_SUCCESS &&
                         data.has_data && data.type == MMDB_DATA_TYPE_UINT32 &&
                         std::binary_search(asns.begin(), asns.end(), data.uint32);
        }
        return it->second;
    };
    bool walked = mmdb_walk(
        *db_, stop, [&](domain::Address128 first, domain::Address128 last, MMDB_entry_s& e) {
            if (!listed(e)) return;
            out.add(first, last);
            // The IPv4 subtree (::/96) is what libmaxminddb answers for IPv4-mapped addresses.
            constexpr domain::Address128 kV4Last = 0xffffffffu;
            constexpr domain::Address128 kMapped = domain::Address128{0xffff} << 32;
            if (first <= kV4Last) out.add(kMapped | first, kMapped | std::min(last, kV4Last));
        });
    if (!walked) return std::nullopt;
    out.finish();
    return out;
}

std::optional<domain::RangeTableBuilder<std::uint32_t>> AsnDatabase::all_ranges(
    std::stop_token stop) const {
    domain::RangeTableBuilder<std::uint32_t> out;
    auto asn = [](MMDB_entry_s& entry) -> std::uint32_t {
        MMDB_entry_data_s data{};
        if (MMDB_get_value(&entry, &data, "autonomous_system_number", nullptr) != MMDB_SUCCESS ||
            !data.has_data || data.type != MMDB_DATA_TYPE_UINT32)
            return 0;
        return data.uint32;
    };
    if (!mmdb_flatten(*db_, stop, asn, out)) return std::nullopt;
    out.finish();
    return out;
}

MmdbSource AsnDatabase::source() const noexcept {
    return {.build_epoch = db_->metadata.build_epoch, .node_count = db_->metadata.node_count};
}

std::string AsnDatabase::describe() const { return mmdb_describe(*db_); }

ScannerCheck::ScannerCheck(const ScannerSources& sources) : sources_(sources) {
    if (sources.networks != nullptr) networks_.emplace(*sources.networks);
    if (sources.burst_links > 0) window_.emplace(sources.burst_links, sources.burst_seconds);
}

bool ScannerCheck::from_listed_network(const domain::IpBytes& address) noexcept {
    // A new list (SIGHUP) is taken once per thread, under the box's lock held for a copy.
    const domain::ScannerNetworks* networks = networks_ ? networks_->get() : nullptr;
    if (networks == nullptr || networks->empty()) return false;
    if (networks->listed_address(address)) return true;
    if (networks->asn_ranges) return networks->asn_ranges->contains(address);
    if (networks->asns.empty()) return false;
    std::optional<std::uint32_t> asn;
    if (sources_.asn_ranges != nullptr) {
        asn = sources_.asn_ranges->asn_of(address);
    } else if (sources_.asn != nullptr) {
        asn = sources_.asn->asn_of(address);
    }
    return asn && networks->listed_asn(*asn);
}

bool ScannerCheck::burst_applies(const domain::IpBytes& address) const noexcept {
    // A shared address (private, loopback, carrier NAT, link-local, unspecified) is many
    // readers behind one, or refgate behind a proxy it does not trust: the burst rule does not
    // judge it.
    return window_.has_value() && domain::address_scope(address) != domain::AddressScope::shared;
}

bool ScannerCheck::in_burst(std::uint64_t client, std::int64_t link_id, std::int64_t now) noexcept {
    return window_ && window_->fetch(client, link_id, now);
}

}  // namespace refgate::redirect
