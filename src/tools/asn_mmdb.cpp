// asn_mmdb OUT DESCRIPTION CSV...: converts CSV files of "first,last,asn,organisation" address
// ranges (the form of the npm package @ip-location-db/asn; the organisation may be quoted, with
// "" for a quote) into an MMDB ASN database. Run at build time (src/tools/CMakeLists.txt).
// asn_mmdb --country OUT DESCRIPTION CSV...: the same for "first,last,country" ranges (the form of
// @ip-location-db/geo-whois-asn-country) into an MMDB country database.
// build_epoch is SOURCE_DATE_EPOCH when set, else the newest modification time of the inputs (npm
// gives a package's files a fixed one), so the same input gives the same bytes.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/tools/mmdb_writer.hpp"

namespace {

// The fields of one CSV line; false when a quoted field is not closed.
bool split_csv(const std::string& line, std::vector<std::string>& fields) {
    fields.assign(1, std::string());
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (quoted) {
            if (c != '"') {
                fields.back() += c;
            } else if (i + 1 < line.size() && line[i + 1] == '"') {
                fields.back() += '"';
                ++i;
            } else {
                quoted = false;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields.emplace_back();
        } else if (c != '\r') {
            fields.back() += c;
        }
    }
    return !quoted;
}

void add_country_file(refgate::tools::MmdbCountryWriter& writer, const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot be read");
    std::string line;
    std::vector<std::string> fields;
    for (std::size_t number = 1; std::getline(in, line); ++number) {
        if (line.empty()) continue;
        bool ok = split_csv(line, fields) && fields.size() == 3 && fields[2].size() == 2;
        auto first = ok ? refgate::domain::parse_ip(fields[0]) : std::nullopt;
        auto last = ok ? refgate::domain::parse_ip(fields[1]) : std::nullopt;
        if (!ok || !first || !last)
            throw std::runtime_error(path + ":" + std::to_string(number) +
                                     ": not first,last,country");
        writer.add(*first, *last, fields[2]);
    }
}

void add_file(refgate::tools::MmdbAsnWriter& writer, const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot be read");
    std::string line;
    std::vector<std::string> fields;
    for (std::size_t number = 1; std::getline(in, line); ++number) {
        if (line.empty()) continue;
        std::uint32_t asn = 0;
        bool ok = split_csv(line, fields) && fields.size() == 4;
        auto first = ok ? refgate::domain::parse_ip(fields[0]) : std::nullopt;
        auto last = ok ? refgate::domain::parse_ip(fields[1]) : std::nullopt;
        if (ok) {
            const auto& text = fields[2];
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), asn);
            ok = ec == std::errc{} && end == text.data() + text.size();
        }
        if (!ok || !first || !last)
            throw std::runtime_error(path + ":" + std::to_string(number) +
                                     ": not first,last,asn,organisation");
        writer.add(*first, *last, asn, fields[3]);
    }
}

std::uint64_t modified_at(const std::string& path) {
    auto time = std::filesystem::last_write_time(path);
    auto since = std::chrono::file_clock::to_sys(time).time_since_epoch();
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since).count();
    return seconds > 0 ? static_cast<std::uint64_t>(seconds) : 1;
}

}  // namespace

int main(int argc, char** argv) {
    bool country = argc > 1 && std::string_view(argv[1]) == "--country";
    if (country) {
        --argc;
        ++argv;
    }
    if (argc < 4) {
        std::cerr << "usage: asn_mmdb [--country] OUT DESCRIPTION CSV...\n";
        return 2;
    }
    try {
        refgate::tools::MmdbAsnWriter writer;
        refgate::tools::MmdbCountryWriter countries;
        for (int i = 3; i < argc; ++i) {
            if (country) {
                add_country_file(countries, argv[i]);
            } else {
                add_file(writer, argv[i]);
            }
        }
        std::uint64_t epoch = 1;  // libmaxminddb refuses a database built at 0
        for (int i = 3; i < argc; ++i) epoch = std::max(epoch, modified_at(argv[i]));
        if (const char* source_date = std::getenv("SOURCE_DATE_EPOCH"))
            epoch = std::max<std::uint64_t>(1, std::strtoull(source_date, nullptr, 10));
        std::string bytes =
            country ? countries.finish(epoch, argv[2]) : writer.finish(epoch, argv[2]);
        std::string temp = std::string(argv[1]) + ".tmp";
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out || std::rename(temp.c_str(), argv[1]) != 0)
            throw std::runtime_error(std::string(argv[1]) + ": cannot be written");
        std::cout << "asn_mmdb: " << (country ? countries.range_count() : writer.range_count())
                  << " ranges, " << bytes.size() << " bytes -> " << argv[1] << "\n";
    } catch (const std::exception& e) {
        std::cerr << "asn_mmdb: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
