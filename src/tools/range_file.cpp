// range_file --country|--asn IN.mmdb OUT: flattens an MMDB database (the one the build makes from
// the data package, src/tools/asn_mmdb.cpp) into its compact range file
// (refgate/domain/range_file.hpp), which `serve` maps instead of building the ranges on its heap.
// Run at build time (src/tools/CMakeLists.txt). The ranges are found by the very walk `serve`
// runs for a database the operator names, so both answer alike.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>

#include "refgate/redirect/country_database.hpp"
#include "refgate/redirect/scanner_check.hpp"
#include "refgate/tools/range_file_writer.hpp"

namespace {

std::string flatten(std::string_view kind, const std::string& in, std::size_t& ranges) {
    if (kind == "--country") {
        refgate::redirect::CountryDatabase db(in);
        auto table = db.ranges(std::stop_token{});
        if (!table) throw std::runtime_error(in + ": the search tree is malformed");
        ranges = table->size();
        auto source = db.source();
        return refgate::tools::write_range_file(table->tables(), source.build_epoch,
                                                source.node_count);
    }
    refgate::redirect::AsnDatabase db(in);
    auto table = db.all_ranges(std::stop_token{});
    if (!table) throw std::runtime_error(in + ": the search tree is malformed");
    ranges = table->size();
    auto source = db.source();
    return refgate::tools::write_range_file(table->tables(), source.build_epoch, source.node_count);
}

}  // namespace

int main(int argc, char** argv) {
    std::string_view kind = argc == 4 ? argv[1] : "";
    if (kind != "--country" && kind != "--asn") {
        std::cerr << "usage: range_file --country|--asn IN.mmdb OUT\n";
        return 2;
    }
    try {
        std::size_t ranges = 0;
        std::string bytes = flatten(kind, argv[2], ranges);
        std::string temp = std::string(argv[3]) + ".tmp";
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out || std::rename(temp.c_str(), argv[3]) != 0)
            throw std::runtime_error(std::string(argv[3]) + ": cannot be written");
        std::cout << "range_file: " << ranges << " ranges, " << bytes.size() << " bytes -> "
                  << argv[3] << "\n";
    } catch (const std::exception& e) {
        std::cerr << "range_file: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
