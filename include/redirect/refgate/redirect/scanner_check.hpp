#pragma once

// The click class `scanner`: a human-looking click from a listed network (its autonomous system
// looked up in an ASN database in MaxMind's format, or a listed address range), or from a client
// that fetches many distinct links of one channel within seconds. The address is looked up and
// forgotten; the burst window knows a client only by a keyed hash.

#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "refgate/domain/address_ranges.hpp"
#include "refgate/domain/burst_window.hpp"
#include "refgate/domain/ip_network.hpp"
#include "refgate/domain/range_table.hpp"
#include "refgate/domain/scanner_networks.hpp"
#include "refgate/redirect/range_files.hpp"
#include "refgate/runtime/published.hpp"

struct MMDB_s;

namespace refgate::redirect {

// An ASN database, memory-mapped by libmaxminddb; lookups are thread-safe, allocate nothing and
// read only memory.
class AsnDatabase {
  public:
    // Throws std::runtime_error naming the path and libmaxminddb's reason.
    explicit AsnDatabase(const std::string& path);
    ~AsnDatabase();
    AsnDatabase(const AsnDatabase&) = delete;
    AsnDatabase& operator=(const AsnDatabase&) = delete;

    // The autonomous system of an address; nullopt when the database has none for it.
    std::optional<std::uint32_t> asn_of(const domain::IpBytes& address) const noexcept;
    // The address ranges of the listed autonomous systems (sorted), found by walking the whole
    // search tree: ~0.1 s for a full database, for a background thread. nullopt when stopped or
    // when the tree is malformed (a node reached more often than a tree allows).
    std::optional<domain::AddressRanges> ranges_of(const std::vector<std::uint32_t>& asns,
                                                   std::stop_token stop) const;
    // Every address range with its autonomous system (0: none), answering as asn_of() does: what
    // the build writes into asn.ranges. nullopt when stopped or malformed.
    std::optional<domain::RangeTableBuilder<std::uint32_t>> all_ranges(std::stop_token stop) const;
    MmdbSource source() const noexcept;
    // The database's type and description, for the start log.
    std::string describe() const;

  private:
    std::unique_ptr<MMDB_s> db_;
};

// The scanner networks of the running process, replaced as a whole (SIGHUP).
class ScannerNetworksBox : public runtime::Published<domain::ScannerNetworks> {
  public:
    explicit ScannerNetworksBox(domain::ScannerNetworks networks = {}) { set(std::move(networks)); }
    void set(domain::ScannerNetworks networks) {
        publish(std::make_shared<const domain::ScannerNetworks>(std::move(networks)));
    }
};

// What every recorder's check reads. burst_links 0 turns the burst rule off.
struct ScannerSources {
    const AsnDatabase* asn = nullptr;  // null: no ASN lookups
    // The database's ranges mapped (asn.ranges): asked instead of it when set.
    const MappedAsnRanges* asn_ranges = nullptr;
    const ScannerNetworksBox* networks = nullptr;
    unsigned burst_links = 4;
    std::int64_t burst_seconds = 10;
};

// One per I/O thread (not thread-safe): the networks are re-read only when they changed.
class ScannerCheck {
  public:
    explicit ScannerCheck(const ScannerSources& sources);

    // Whether the address is in a listed range or its autonomous system is listed.
    bool from_listed_network(const domain::IpBytes& address) noexcept;
    // Whether the burst rule judges clicks from this address: it is on, and the address is not
    // loopback, private, carrier NAT or link-local (a proxy's or a NAT's, shared by readers).
    bool burst_applies(const domain::IpBytes& address) const noexcept;
    // BurstWindow::fetch (false when the rule is off).
    bool in_burst(std::uint64_t client, std::int64_t link_id, std::int64_t now) noexcept;

  private:
    ScannerSources sources_;
    std::optional<runtime::PublishedReader<domain::ScannerNetworks>> networks_;
    std::optional<domain::BurstWindow> window_;
};

}  // namespace refgate::redirect
