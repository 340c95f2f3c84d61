#pragma once

// One address looked up in a libmaxminddb database: what the ASN and country databases share.

#include <maxminddb.h>

#include <string>

#include "refgate/domain/ip_network.hpp"

namespace refgate {

// The entry of `address` (IPv4-mapped addresses are asked as IPv4, where libmaxminddb starts at
// the IPv4 subtree); found_entry false when there is none. Allocates nothing.
MMDB_lookup_result_s mmdb_lookup(const MMDB_s& db, const IpBytes& address) noexcept;

// Opens `path` memory-mapped; throws std::runtime_error naming `what`, the path and the reason.
void mmdb_open(const std::string& path, const char* what, MMDB_s& db);

// The database's type and description, for the start log.
std::string mmdb_describe(const MMDB_s& db);

}  // namespace refgate
