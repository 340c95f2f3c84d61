#pragma once

// One address looked up in a libmaxminddb database: what the ASN and country databases share.

#include <maxminddb.h>

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <unordered_map>

#include "refgate/domain/address_ranges.hpp"
#include "refgate/domain/ip_network.hpp"
#include "refgate/domain/range_table.hpp"

namespace refgate::redirect {

// The entry of `address` (IPv4-mapped addresses are asked as IPv4, where libmaxminddb starts at
// the IPv4 subtree); found_entry false when there is none. Allocates nothing.
MMDB_lookup_result_s mmdb_lookup(const MMDB_s& db, const domain::IpBytes& address) noexcept;

// Opens `path` memory-mapped; throws std::runtime_error naming `what`, the path and the reason.
void mmdb_open(const std::string& path, const char* what, MMDB_s& db);

// Each data record's address range, found by a depth-first walk of the whole search tree
// (addresses in IPv6 terms; an IPv4 database's tree is the last 32 bits of ::/96, as
// libmaxminddb reads IPv4 in an IPv6 one). Empty records are not reported. False when stopped or
// when the tree is malformed (a node reached more often than a tree with its aliases allows).
// `enter` (when set) says whether to walk the subtree of a prefix (depth bits fixed).
using MmdbLeaf =
    std::function<void(domain::Address128 first, domain::Address128 last, MMDB_entry_s& entry)>;
using MmdbEnter = std::function<bool(domain::Address128 prefix, int depth)>;
bool mmdb_walk(const MMDB_s& db, std::stop_token stop, const MmdbLeaf& leaf,
               const MmdbEnter& enter = {});
// The search node at `prefix`/`depth` (in IPv6 terms); nullopt when the tree ends above it.
std::optional<std::uint64_t> mmdb_node_at(const MMDB_s& db, domain::Address128 prefix, int depth);

// Every address range of the database with the value `value_of(entry)` reads from its record,
// into `out` (not finished), answering every address exactly as a lookup does. libmaxminddb
// refuses IPv6 lookups in an IPv4 database: those addresses have none. In an IPv6 one, IPv4 (and
// IPv4-mapped) addresses are looked up in the IPv4 subtree, ::/96, which IPv4-compatible
// addresses reach too, and often 6to4 ones through an alias: those are answered from the IPv4
// table instead of being repeated in the IPv6 one. False when stopped or malformed.
template <typename V, typename ValueOf>
bool mmdb_flatten(const MMDB_s& db, std::stop_token stop, ValueOf value_of,
                  domain::RangeTableBuilder<V>& out) {
    constexpr domain::Address128 kV4Last = 0xffffffffu;
    constexpr domain::Address128 kMapped = domain::Address128{0xffff} << 32;
    constexpr domain::Address128 k6to4 = domain::Address128{0x2002} << 112;
    const bool v6 = db.metadata.ip_version == 6;
    auto v4_root = mmdb_node_at(db, 0, 96);
    const bool six_to_four = v6 && v4_root && mmdb_node_at(db, k6to4, 16) == v4_root;
    out.alias_ipv4(v6, six_to_four);
    auto enter = [&](domain::Address128 prefix, int depth) {
        // Mapped addresses never reach the IPv6 table.
        return !(depth == 96 && prefix == kMapped) &&
               !(six_to_four && depth == 16 && prefix == k6to4);
    };
    std::unordered_map<std::uint32_t, V> seen;  // data offset -> value
    auto leaf = [&](domain::Address128 first, domain::Address128 last, MMDB_entry_s& e) {
        auto [it, inserted] = seen.try_emplace(e.offset, V{});
        if (inserted) it->second = value_of(e);
        if (first <= kV4Last) {
            out.add_v4(static_cast<std::uint32_t>(first),
                       static_cast<std::uint32_t>(std::min(last, kV4Last)), it->second);
            if (last <= kV4Last) return;
        }
        if (v6) out.add_v6(first, last, it->second);
    };
    return mmdb_walk(db, stop, leaf, enter);
}

// The database's type and description, for the start log.
std::string mmdb_describe(const MMDB_s& db);

}  // namespace refgate::redirect
