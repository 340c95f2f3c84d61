#pragma once

// The click class `scanner`'s data for `serve`: the ASN database and the scanner networks named
// by the settings (or found beside the binary), loaded at start and, the networks, on SIGHUP.

#include <memory>
#include <string>
#include <thread>

#include "refgate/config/config.hpp"
#include "refgate/redirect/scanner_check.hpp"

namespace refgate {

struct ScannerData {
    std::unique_ptr<AsnDatabase> asn;
    ScannerNetworksBox networks;
    std::string networks_path;  // empty: none
    ScannerSources sources;
    // Flattens the listed autonomous systems' ranges out of the database after each load (last:
    // stopped and joined before the rest goes).
    std::jthread ranges_walk;
};

// Opens the database and reads the networks file; throws std::runtime_error naming the setting,
// the file and (for a bad line) its number. Logs once what the scanner check uses.
void load_scanner(const ClickConfig& config, ScannerData& out);

// Reads the networks file again (SIGHUP); a file that cannot be read or has a bad line is logged
// and the previous list kept.
void reload_scanner_networks(ScannerData& data);

}  // namespace refgate
