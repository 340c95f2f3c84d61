#include "refgate/redirect/range_files.hpp"

#include <stdexcept>

namespace refgate {
namespace {

template <typename V, typename Read>
RangeTables<V> checked(const MappedFile& file, const std::string& path, const MmdbSource& source,
                       Read read) {
    std::string error;
    auto contents = read(file.bytes(), error);
    file.release_resident();
    if (!contents) throw std::runtime_error(path + ": " + error);
    if (contents->header.source_epoch != source.build_epoch ||
        contents->header.source_nodes != source.node_count)
        throw std::runtime_error(path + ": made from another build of the database (epoch " +
                                 std::to_string(contents->header.source_epoch) + ", " +
                                 std::to_string(contents->header.source_nodes) +
                                 " nodes; the database opened: epoch " +
                                 std::to_string(source.build_epoch) + ", " +
                                 std::to_string(source.node_count) + " nodes)");
    return contents->tables;
}

}  // namespace

MappedCountryRanges::MappedCountryRanges(const std::string& path, const MmdbSource& source)
    : file_(path), tables_(checked<CountryCode>(file_, path, source, read_country_range_file)) {}

MappedAsnRanges::MappedAsnRanges(const std::string& path, const MmdbSource& source)
    : file_(path), tables_(checked<std::uint32_t>(file_, path, source, read_asn_range_file)) {}

}  // namespace refgate
