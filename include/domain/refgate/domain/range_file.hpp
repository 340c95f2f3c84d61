#pragma once

// The compact, read-only form of a database's address ranges (range_table.hpp), written once at
// build time beside the MMDB it comes from (src/tools/range_file.cpp) and mapped read-only at
// run time, so that the pages are the page cache's, shared by every process, and a process holds
// only those its lookups touched. This is the format and the check; opening and mapping files is
// runtime's.
//
// Layout (host byte order, little-endian on every platform refgate builds for; a file of the
// other order fails the magic check), every section at a multiple of 16 bytes:
//   header (64 bytes, RangeFileHeader)
//   IPv4 prefix index   uint32 x 65536
//   IPv6 prefix index   uint32 x 65536
//   IPv4 starts         uint32 x v4_count
//   IPv4 values         value_size x v4_count (a country code: 2 bytes; an autonomous system: 4)
//   IPv6 starts         128-bit x v6_count
//   IPv6 values         value_size x v6_count
// and nothing after. The header names the MMDB the ranges were made from (its build epoch and
// node count), so that ranges never answer for another database.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "refgate/domain/range_table.hpp"

namespace refgate::domain {

enum class RangeFileKind : std::uint32_t { country = 1, asn = 2 };

inline constexpr char kRangeFileMagic[8] = {'R', 'G', 'R', 'A', 'N', 'G', 'E', 'S'};
inline constexpr std::uint32_t kRangeFileVersion = 1;
inline constexpr std::uint32_t kRangeFileIpv4Compatible = 1;  // flags
inline constexpr std::uint32_t kRangeFileSixToFour = 2;

struct RangeFileHeader {
    char magic[8];
    std::uint32_t version;
    std::uint32_t kind;  // RangeFileKind
    std::uint32_t value_size;
    std::uint32_t flags;
    std::uint64_t source_epoch;  // the MMDB's build_epoch
    std::uint64_t source_nodes;  // and node_count
    std::uint32_t v4_count;
    std::uint32_t v6_count;
    std::uint8_t reserved[16];  // zero
};
static_assert(sizeof(RangeFileHeader) == 64);

// Where each section starts, and the file's size.
struct RangeFileLayout {
    std::size_t v4_index, v6_index, v4_starts, v4_values, v6_starts, v6_values, size;
    static RangeFileLayout of(std::size_t v4_count, std::size_t v6_count, std::size_t value_size);
};

template <typename V>
struct RangeFileContents {
    RangeFileHeader header;
    RangeTables<V> tables;  // views into the bytes read
};

// The file's tables, after checking the header (magic, version, kind, value size, flags, sizes
// against the byte count), that the bytes start 16-byte aligned, that both tables' starts begin
// at 0 and strictly increase, and that every prefix index entry names the range holding its
// prefix's first address: what a lookup relies on to stay inside the arrays. Reads every byte
// once. nullopt with `error` saying why.
std::optional<RangeFileContents<std::uint16_t>> read_country_range_file(
    std::span<const std::byte> bytes, std::string& error);
std::optional<RangeFileContents<std::uint32_t>> read_asn_range_file(
    std::span<const std::byte> bytes, std::string& error);

}  // namespace refgate::domain
