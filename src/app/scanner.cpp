#include "scanner.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "refgate/runtime/log.hpp"

namespace refgate {
namespace {

constexpr const char* kDefault = "default";

// A file installed with refgate: beside the binary (a build tree) or in ../share/refgate (an
// installation); empty when neither exists.
std::string beside_binary(const std::string& name) {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    auto dir = exe.parent_path();
    for (const auto& candidate : {dir / name, dir / ".." / "share" / "refgate" / name}) {
        if (std::filesystem::is_regular_file(candidate, ec)) return candidate.lexically_normal();
    }
    return {};
}

ScannerNetworks read_networks(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return ScannerNetworks::parse(text.str());
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
}

}  // namespace

void load_scanner(const ClickConfig& config, ScannerData& out) {
    std::string asn_path = config.asn_db == kDefault ? beside_binary("asn.mmdb") : config.asn_db;
    if (!asn_path.empty()) {
        try {
            out.asn = std::make_unique<AsnDatabase>(asn_path);
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(std::string("REFGATE_ASN_DB (asn_db): ") + e.what());
        }
    }
    out.networks_path = config.scanner_networks == kDefault ? beside_binary("scanner-networks.txt")
                                                            : config.scanner_networks;
    if (!out.networks_path.empty()) {
        try {
            out.networks.set(read_networks(out.networks_path));
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(std::string("REFGATE_SCANNER_NETWORKS (scanner_networks): ") +
                                     e.what());
        }
    }
    out.sources = {.asn = out.asn.get(),
                   .networks = &out.networks,
                   .burst_links = config.scanner_burst_links,
                   .burst_seconds = config.scanner_burst_seconds};
    auto networks = out.networks.current();
    log::info("scanner_check",
              {{"asn_db", out.asn ? asn_path + " (" + out.asn->describe() + ")"
                                  : std::string("none: no ASN check")},
               {"scanner_networks", out.networks_path.empty() ? "none" : out.networks_path},
               {"asns", networks->asns.size()},
               {"ranges", networks->ranges.size()},
               {"burst_links", config.scanner_burst_links},
               {"burst_seconds", config.scanner_burst_seconds}});
}

void reload_scanner_networks(ScannerData& data) {
    if (data.networks_path.empty()) return;
    try {
        data.networks.set(read_networks(data.networks_path));
        auto networks = data.networks.current();
        log::info("scanner_networks_reloaded", {{"path", data.networks_path},
                                                {"asns", networks->asns.size()},
                                                {"ranges", networks->ranges.size()}});
    } catch (const std::runtime_error& e) {
        log::error("scanner_networks_rejected",
                   {{"error", e.what()}, {"detail", "kept the previous list"}});
    }
}

void load_country_database(const ClickConfig& config, CountryData& out, HealthState& health) {
    out.path = config.geoip_db == kDefault ? beside_binary("country.mmdb") : config.geoip_db;
    if (out.path.empty()) {
        health.country_db.store(0);
        log::warn("country_rules_skipped",
                  {{"detail",
                    "no country database (REFGATE_GEOIP_DB): rules naming countries "
                    "match no reader"}});
        return;
    }
    try {
        auto db = std::make_shared<const CountryDatabase>(out.path);
        log::info("country_database", {{"path", out.path}, {"database", db->describe()}});
        out.box.publish(std::move(db));
        health.country_db.store(1);
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(std::string("REFGATE_GEOIP_DB (geoip_db): ") + e.what());
    }
}

void reload_country_database(CountryData& data) {
    if (data.path.empty()) return;
    try {
        data.box.publish(std::make_shared<const CountryDatabase>(data.path));
        log::info("country_database_reloaded", {{"path", data.path}});
    } catch (const std::runtime_error& e) {
        log::error("country_database_rejected",
                   {{"error", e.what()}, {"detail", "kept the previous database"}});
    }
}

}  // namespace refgate
