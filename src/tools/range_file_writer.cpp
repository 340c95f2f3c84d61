#include "refgate/tools/range_file_writer.hpp"

#include <cstring>
#include <span>

namespace refgate::tools {
namespace {

template <typename T>
void put(std::string& out, std::size_t offset, std::span<const T> items) {
    if (!items.empty()) std::memcpy(out.data() + offset, items.data(), items.size_bytes());
}

template <typename V>
std::string write(const domain::RangeTables<V>& tables, domain::RangeFileKind kind,
                  std::uint64_t epoch, std::uint64_t nodes) {
    domain::RangeFileHeader h{};
    std::memcpy(h.magic, domain::kRangeFileMagic, sizeof h.magic);
    h.version = domain::kRangeFileVersion;
    h.kind = static_cast<std::uint32_t>(kind);
    h.value_size = sizeof(V);
    h.flags = (tables.ipv4_compatible ? domain::kRangeFileIpv4Compatible : 0) |
              (tables.six_to_four ? domain::kRangeFileSixToFour : 0);
    h.source_epoch = epoch;
    h.source_nodes = nodes;
    h.v4_count = static_cast<std::uint32_t>(tables.v4.starts.size());
    h.v6_count = static_cast<std::uint32_t>(tables.v6.starts.size());
    auto layout = domain::RangeFileLayout::of(h.v4_count, h.v6_count, sizeof(V));
    std::string out(layout.size, '\0');
    std::memcpy(out.data(), &h, sizeof h);
    put(out, layout.v4_index, tables.v4.index);
    put(out, layout.v6_index, tables.v6.index);
    put(out, layout.v4_starts, tables.v4.starts);
    put(out, layout.v4_values, tables.v4.values);
    put(out, layout.v6_starts, tables.v6.starts);
    put(out, layout.v6_values, tables.v6.values);
    return out;
}

}  // namespace

std::string write_range_file(const domain::RangeTables<std::uint16_t>& countries,
                             std::uint64_t source_epoch, std::uint64_t source_nodes) {
    return write(countries, domain::RangeFileKind::country, source_epoch, source_nodes);
}

std::string write_range_file(const domain::RangeTables<std::uint32_t>& asns,
                             std::uint64_t source_epoch, std::uint64_t source_nodes) {
    return write(asns, domain::RangeFileKind::asn, source_epoch, source_nodes);
}

}  // namespace refgate::tools
