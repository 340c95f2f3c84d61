#pragma once

// The click class `scanner`'s data for `serve`: the ASN database and the scanner networks named
// by the settings (or found beside the binary), loaded at start and, the networks, on SIGHUP.

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "refgate/config/config.hpp"
#include "refgate/redirect/country_database.hpp"
#include "refgate/redirect/scanner_check.hpp"
#include "refgate/runtime/file_identity.hpp"
#include "refgate/runtime/health_state.hpp"

namespace refgate::app {

struct ScannerData {
    std::unique_ptr<redirect::AsnDatabase> asn;
    // asn.ranges beside the built database (REFGATE_ASN_DB=default), mapped: no walk is needed.
    std::unique_ptr<redirect::MappedAsnRanges> asn_ranges;
    redirect::ScannerNetworksBox networks;
    std::string networks_path;  // empty: none
    redirect::ScannerSources sources;
    // Flattens the listed autonomous systems' ranges out of the database after each load (last:
    // stopped and joined before the rest goes).
    std::jthread ranges_walk;
};

// Opens the database and reads the networks file; throws std::runtime_error naming the setting,
// the file and (for a bad line) its number. Logs once what the scanner check uses.
void load_scanner(const config::ClickConfig& config, ScannerData& out);

// Reads the networks file again (SIGHUP); a file that cannot be read or has a bad line is logged
// and the previous list kept.
void reload_scanner_networks(ScannerData& data);

// The targeting rules' country database (REFGATE_GEOIP_DB), loaded at start, on SIGHUP and when
// its file changes.
struct CountryData {
    redirect::CountryLookupBox box;
    std::string path;  // empty: none
    // country.ranges beside the built database (REFGATE_GEOIP_DB=default); empty for a database
    // the operator names, whose ranges are built in the background.
    std::string ranges_path;
    // The file loaded and the last one refused, so that the poll opens a file once; SIGHUP's
    // reload and the poll run on different threads, hence the mutex.
    std::mutex mutex;
    std::optional<runtime::FileIdentity> loaded;
    std::optional<runtime::FileIdentity> refused;
    bool missing_logged = false;
};

// How often the country database's file is checked (one stat): a file replaced on disk is in use
// within this, with no SIGHUP.
constexpr std::chrono::seconds kCountryFilePoll{2};

// Opens the database the setting names (or finds beside the binary); throws std::runtime_error
// naming the setting when a named file cannot be opened. Without one, country rules are skipped:
// logged once here and shown in /readyz (`health.country_db`).
void load_country_database(const config::ClickConfig& config, CountryData& out,
                           runtime::HealthState& health);

// Opens the file again (SIGHUP); a file that cannot be opened is logged and the previous kept.
void reload_country_database(CountryData& data);

// Opens the file again when it is not the one loaded (another inode, size or mtime: a file renamed
// over it, as package upgrades install one, or rewritten). The new database is swapped in only
// once libmaxminddb opened it and checked its metadata and tree; a file that cannot be opened is
// logged once and the previous database kept, as is a file that went missing. One stat when
// nothing changed; run off the I/O threads (a PeriodicWorker every kCountryFilePoll).
void follow_country_database_file(CountryData& data);

}  // namespace refgate::app
