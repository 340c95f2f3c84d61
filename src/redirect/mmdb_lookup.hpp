#pragma once

// One address looked up in a libmaxminddb database: what the ASN and country databases share.

#include <maxminddb.h>

#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "refgate/domain/address_ranges.hpp"
#include "refgate/domain/ip_network.hpp"

namespace refgate {

// The entry of `address` (IPv4-mapped addresses are asked as IPv4, where libmaxminddb starts at
// the IPv4 subtree); found_entry false when there is none. Allocates nothing.
MMDB_lookup_result_s mmdb_lookup(const MMDB_s& db, const IpBytes& address) noexcept;

// Opens `path` memory-mapped; throws std::runtime_error naming `what`, the path and the reason.
void mmdb_open(const std::string& path, const char* what, MMDB_s& db);

// Each data record's address range, found by a depth-first walk of the whole search tree
// (addresses in IPv6 terms; an IPv4 database's tree is the last 32 bits of ::/96, as
// libmaxminddb reads IPv4 in an IPv6 one). Empty records are not reported. False when stopped or
// when the tree is malformed (a node reached more often than a tree with its aliases allows).
// `enter` (when set) says whether to walk the subtree of a prefix (depth bits fixed).
using MmdbLeaf = std::function<void(Address128 first, Address128 last, MMDB_entry_s& entry)>;
using MmdbEnter = std::function<bool(Address128 prefix, int depth)>;
bool mmdb_walk(const MMDB_s& db, std::stop_token stop, const MmdbLeaf& leaf,
               const MmdbEnter& enter = {});
// The search node at `prefix`/`depth` (in IPv6 terms); nullopt when the tree ends above it.
std::optional<std::uint64_t> mmdb_node_at(const MMDB_s& db, Address128 prefix, int depth);

// The database's type and description, for the start log.
std::string mmdb_describe(const MMDB_s& db);

}  // namespace refgate
