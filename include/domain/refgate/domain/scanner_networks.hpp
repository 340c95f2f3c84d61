#pragma once

// The networks whose clicks are counted as `scanner`: autonomous systems of e-mail security and
// cloud providers, and address ranges (deploy/scanner-networks.txt documents the format).

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "refgate/domain/address_ranges.hpp"
#include "refgate/domain/ip_network.hpp"

namespace refgate::domain {

struct ScannerNetworks {
    std::vector<std::uint32_t> asns;  // sorted, unique
    std::vector<IpNetwork> ranges;
    // The listed autonomous systems' address ranges in the ASN database, once a background walk
    // of the database has flattened them (null until then: each click asks the database).
    std::shared_ptr<const AddressRanges> asn_ranges;

    // One entry a line: `AS<number>` or an address range, then optionally `# comment`; blank
    // lines and `#` lines are skipped. Throws std::invalid_argument naming the line number and
    // its text at the first bad line.
    static ScannerNetworks parse(std::string_view text);

    bool listed_asn(std::uint32_t asn) const noexcept;
    bool listed_address(const IpBytes& address) const noexcept;
    bool empty() const noexcept { return asns.empty() && ranges.empty(); }
};

}  // namespace refgate::domain
