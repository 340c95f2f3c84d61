#include "refgate/redirect/range_files.hpp"

#include <stdexcept>

namespace refgate::redirect {
namespace {

template <typename V, typename Read>
domain::RangeTables<V> checked(const runtime::MappedFile& file, const std::string& path,
                               const MmdbSource& source, Read read) {
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
    : file_(path),
      tables_(checked<domain::CountryCode>(file_, path, source, domain::read_country_range_file)) {}

MappedAsnRanges::MappedAsnRanges(const std::string& path, const MmdbSource& source)
    : file_(path),
      tables_(checked<std::uint32_t>(file_, path, source, domain::read_asn_range_file)) {}

}  // namespace refgate::redirect
