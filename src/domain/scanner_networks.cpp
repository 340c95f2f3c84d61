#include "refgate/domain/scanner_networks.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>

namespace refgate::domain {
namespace {

std::string_view trim(std::string_view text) {
    auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (!text.empty() && blank(text.front())) text.remove_prefix(1);
    while (!text.empty() && blank(text.back())) text.remove_suffix(1);
    return text;
}

bool parse_asn(std::string_view entry, std::uint32_t& out) {
    if (entry.size() < 3 || (entry[0] != 'A' && entry[0] != 'a') ||
        (entry[1] != 'S' && entry[1] != 's'))
        return false;
    entry.remove_prefix(2);
    auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), out);
    return ec == std::errc{} && end == entry.data() + entry.size() && out != 0;
}

}  // namespace

ScannerNetworks ScannerNetworks::parse(std::string_view text) {
    ScannerNetworks out;
    std::size_t number = 0;
    while (!text.empty()) {
        ++number;
        auto eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
        std::string_view entry = trim(line.substr(0, line.find('#')));
        if (entry.empty()) continue;
        std::uint32_t asn = 0;
        if (parse_asn(entry, asn)) {
            out.asns.push_back(asn);
        } else if (auto range = IpNetwork::parse(entry)) {
            out.ranges.push_back(*range);
        } else {
            throw std::invalid_argument(
                "line " + std::to_string(number) +
                ": not AS<number> or an address range: " + std::string(trim(line)));
        }
    }
    std::sort(out.asns.begin(), out.asns.end());
    out.asns.erase(std::unique(out.asns.begin(), out.asns.end()), out.asns.end());
    return out;
}

bool ScannerNetworks::listed_asn(std::uint32_t asn) const noexcept {
    return std::binary_search(asns.begin(), asns.end(), asn);
}

bool ScannerNetworks::listed_address(const IpBytes& address) const noexcept {
    return any_contains(ranges, address);
}

}  // namespace refgate::domain
