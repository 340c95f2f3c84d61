#pragma once

// Writes the compact range file (refgate/domain/range_file.hpp) of a flattened database: the
// build-time converter src/tools/range_file.cpp uses it, and tests make small files with it.

#include <cstdint>
#include <string>

#include "refgate/domain/range_file.hpp"

namespace refgate::tools {

// The file's bytes; `source_epoch` and `source_nodes` name the MMDB the tables come from.
std::string write_range_file(const domain::RangeTables<std::uint16_t>& countries,
                             std::uint64_t source_epoch, std::uint64_t source_nodes);
std::string write_range_file(const domain::RangeTables<std::uint32_t>& asns,
                             std::uint64_t source_epoch, std::uint64_t source_nodes);

}  // namespace refgate::tools
