#include "refgate/redirect/scanner_check.hpp"

#include <maxminddb.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "mmdb_lookup.hpp"

namespace refgate {
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

namespace {

// A depth-first walk of the search tree that reports each data record's address range.
class TreeWalk {
  public:
    TreeWalk(const MMDB_s& db, const std::vector<std::uint32_t>& asns) : db_(db), asns_(asns) {}

    // False when stopped or malformed.
    bool run(AddressRanges& out, std::stop_token& stop) {
        // An IPv4 database's tree is the last 32 bits of ::/96, as libmaxminddb reads IPv4 in an
        // IPv6 one; both become IPv4-mapped ranges below.
        int root_depth = db_.metadata.ip_version == 4 ? 96 : 0;
        std::vector<Pending> stack{{0, root_depth, 0}};
        std::uint64_t visits = 0;
        // Aliases (::ffff:0:0/96, 2002::/16) reach the IPv4 subtree again; more visits than that
        // means a cycle.
        const std::uint64_t limit = 4ull * db_.metadata.node_count + 16;
        while (!stack.empty()) {
            if ((visits++ & 0xffff) == 0 && stop.stop_requested()) return false;
            if (visits > limit) return false;
            Pending at = stack.back();
            stack.pop_back();
            MMDB_search_node_s node{};
            if (at.depth >= 128 || MMDB_read_node(&db_, at.node, &node) != MMDB_SUCCESS)
                return false;
            Address128 right_bit = Address128{1} << (127 - at.depth);
            if (!record(node.left_record_type, node.left_record, node.left_record_entry,
                        {at.node, at.depth + 1, at.prefix}, stack, out) ||
                !record(node.right_record_type, node.right_record, node.right_record_entry,
                        {at.node, at.depth + 1, at.prefix | right_bit}, stack, out))
                return false;
        }
        out.finish();
        return true;
    }

  private:
    struct Pending {
        std::uint32_t node;
        int depth;  // bits of prefix fixed
        Address128 prefix;
    };

    bool record(std::uint8_t type, std::uint64_t value, MMDB_entry_s entry, Pending child,
                std::vector<Pending>& stack, AddressRanges& out) {
        if (type == MMDB_RECORD_TYPE_SEARCH_NODE) {
            child.node = static_cast<std::uint32_t>(value);
            stack.push_back(child);
        } else if (type == MMDB_RECORD_TYPE_DATA && listed(entry)) {
            Address128 span =
                child.depth == 0 ? ~Address128{0} : (Address128{1} << (128 - child.depth)) - 1;
            Address128 last = child.prefix | span;
            out.add(child.prefix, last);
            // The IPv4 subtree (::/96) is what libmaxminddb answers for IPv4-mapped addresses.
            constexpr Address128 kV4Last = 0xffffffffu;
            constexpr Address128 kMapped = Address128{0xffff} << 32;
            if (child.prefix <= kV4Last)
                out.add(kMapped | child.prefix, kMapped | std::min(last, kV4Last));
        }
        return type != MMDB_RECORD_TYPE_INVALID;
    }

    bool listed(MMDB_entry_s& entry) {
        auto [it, inserted] = seen_.try_emplace(entry.offset, false);
        if (inserted) {
            MMDB_entry_data_s data{};
            it->second = MMDB_get_value(&entry, &data, "autonomous_system_number", nullptr) ==
                             MMDB_SUCCESS &&
                         data.has_data && data.type == MMDB_DATA_TYPE_UINT32 &&
                         std::binary_search(asns_.begin(), asns_.end(), data.uint32);
        }
        return it->second;
    }

    const MMDB_s& db_;
    const std::vector<std::uint32_t>& asns_;
    std::unordered_map<std::uint32_t, bool> seen_;  // data offset -> listed
};

}  // namespace

std::optional<AddressRanges> AsnDatabase::ranges_of(const std::vector<std::uint32_t>& asns,
                                                    std::stop_token stop) const {
    AddressRanges out;
    if (!TreeWalk(*db_, asns).run(out, stop)) return std::nullopt;
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
    // A shared address (private, loopback, carrier NAT, link-local, unspecified) is many
    // readers behind one, or refgate behind a proxy it does not trust: the burst rule does not
    // judge it.
    return window_.has_value() && address_scope(address) != AddressScope::shared;
}

bool ScannerCheck::in_burst(std::uint64_t client, std::int64_t link_id, std::int64_t now) noexcept {
    return window_ && window_->fetch(client, link_id, now);
}

}  // namespace refgate
