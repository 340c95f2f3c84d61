#include "refgate/redirect/scanner_check.hpp"

#include <maxminddb.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "mmdb_lookup.hpp"

namespace refgate {
namespace {

// Loopback, private, shared (carrier NAT), link-local and unspecified addresses: what a client
// address is when refgate runs behind a proxy it was not told to trust, or readers share a NAT.
// Many readers then have one address, so the burst rule must not judge it.
bool shared_address(const IpBytes& a) noexcept {
    static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(a.data(), kMapped, sizeof kMapped) == 0) {
        std::uint8_t b0 = a[12], b1 = a[13];
        return b0 == 0 || b0 == 10 || b0 == 127 || (b0 == 100 && (b1 & 0xc0) == 64) ||
               (b0 == 169 && b1 == 254) || (b0 == 172 && (b1 & 0xf0) == 16) ||
               (b0 == 192 && b1 == 168);
    }
    bool zero_to_14 = std::all_of(a.begin(), a.begin() + 15, [](std::uint8_t b) { return b == 0; });
    if (zero_to_14 && a[15] <= 1) return true;  // :: and ::1
    return (a[0] & 0xfe) == 0xfc || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80);
}

}  // namespace

AsnDatabase::AsnDatabase(const std::string& path) : db_(std::make_unique<MMDB_s>()) {
    mmdb_open(path, "ASN database", *db_);
}

AsnDatabase::~AsnDatabase() { MMDB_close(db_.get()); }

std::optional<std::uint32_t> AsnDatabase::asn_of(const IpBytes& address) const noexcept {
    MMDB_lookup_result_s result = mmdb_lookup(*db_, address);
    if (!result.found_entry) return std::nullopt;
    MMDB_entry_data_s data{};
    if (MMDB_get_value(&result.entry, &data, "autonomous_system_number", nullptr) != MMDB_SUCCESS ||
        !data.has_data || data.type != MMDB_DATA_TYPE_UINT32)
        return std::nullopt;
    return data.uint32;
}

std::optional<AddressRanges> AsnDatabase::ranges_of(const std::vector<std::uint32_t>& asns,
                                                    std::stop_token stop) const {
    AddressRanges out;
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
    bool walked = mmdb_walk(*db_, stop, [&](Address128 first, Address128 last, MMDB_entry_s& e) {
        if (!listed(e)) return;
        out.add(first, last);
        // The IPv4 subtree (::/96) is what libmaxminddb answers for IPv4-mapped addresses.
        constexpr Address128 kV4Last = 0xffffffffu;
        constexpr Address128 kMapped = Address128{0xffff} << 32;
        if (first <= kV4Last) out.add(kMapped | first, kMapped | std::min(last, kV4Last));
    });
    if (!walked) return std::nullopt;
    out.finish();
    return out;
}

std::string AsnDatabase::describe() const { return mmdb_describe(*db_); }

ScannerCheck::ScannerCheck(const ScannerSources& sources) : sources_(sources) {
    if (sources.networks != nullptr) networks_.emplace(*sources.networks);
    if (sources.burst_links > 0) window_.emplace(sources.burst_links, sources.burst_seconds);
}

bool ScannerCheck::from_listed_network(const IpBytes& address) noexcept {
    // A new list (SIGHUP) is taken once per thread, under the box's lock held for a copy.
    const ScannerNetworks* networks = networks_ ? networks_->get() : nullptr;
    if (networks == nullptr || networks->empty()) return false;
    if (networks->listed_address(address)) return true;
    if (networks->asn_ranges) return networks->asn_ranges->contains(address);
    if (sources_.asn == nullptr || networks->asns.empty()) return false;
    auto asn = sources_.asn->asn_of(address);
    return asn && networks->listed_asn(*asn);
}

bool ScannerCheck::burst_applies(const IpBytes& address) const noexcept {
    return window_.has_value() && !shared_address(address);
}

bool ScannerCheck::in_burst(std::uint64_t client, std::int64_t link_id, std::int64_t now) noexcept {
    return window_ && window_->fetch(client, link_id, now);
}

}  // namespace refgate
