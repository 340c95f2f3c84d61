#include "scanner.hpp"

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "refgate/runtime/background_thread.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::app {
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

// The compact ranges file `name` in the directory of the database at `database_path` (where the
// build and `cmake --install` put both); empty when there is none.
std::string ranges_beside(const std::string& database_path, const char* name) {
    std::error_code ec;
    auto candidate = std::filesystem::path(database_path).parent_path() / name;
    return std::filesystem::is_regular_file(candidate, ec) ? candidate.string() : std::string();
}

domain::ScannerNetworks read_networks(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return domain::ScannerNetworks::parse(text.str());
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
}

// Until the walk publishes the ranges, each human click from an unlisted range asks the database
// (~1 us); after it, a search in a small sorted array (~0.3 us). The walk (0.3-0.6 s of CPU for
// the built database) starts a while after start, so that short-lived processes (tests, a
// restart that is stopped again) never pay for it, and at once after a SIGHUP. The previous walk
// is stopped and joined first, so a walk never publishes over a newer list.
constexpr std::chrono::seconds kWalkDelayAtStart{20};

void start_ranges_walk(ScannerData& data, std::chrono::seconds delay) {
    data.ranges_walk = {};
    auto networks = data.networks.current();
    if (!data.asn || data.asn_ranges || networks->asns.empty()) return;
    data.ranges_walk = std::jthread([&data, networks, delay](std::stop_token stop) {
        runtime::become_background_thread("asn_ranges", runtime::BackgroundPriority::low);
        std::mutex mutex;
        std::unique_lock lock(mutex);
        std::condition_variable_any().wait_for(lock, stop, delay, [] { return false; });
        if (stop.stop_requested()) return;
        auto start = std::chrono::steady_clock::now();
        auto ranges = data.asn->ranges_of(networks->asns, stop);
        if (stop.stop_requested()) return;
        if (!ranges) {
            runtime::log::error(
                "scanner_asn_ranges_failed",
                {{"detail", "the ASN database's tree is malformed; each click asks it"}});
            return;
        }
        auto with_ranges = *networks;
        with_ranges.asn_ranges = std::make_shared<const domain::AddressRanges>(std::move(*ranges));
        auto size = with_ranges.asn_ranges->size();
        data.networks.set(std::move(with_ranges));
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
        runtime::log::info("scanner_asn_ranges",
                           {{"form", "built"}, {"ranges", size}, {"ms", ms.count()}});
        runtime::trim_heap();  // the walk's freed working memory goes back to the system
    });
}

}  // namespace

void load_scanner(const config::ClickConfig& config, ScannerData& out) {
    std::string asn_path = config.asn_db == kDefault ? beside_binary("asn.mmdb") : config.asn_db;
    if (!asn_path.empty()) {
        try {
            out.asn = std::make_unique<redirect::AsnDatabase>(asn_path);
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(std::string("REFGATE_ASN_DB (asn_db): ") + e.what());
        }
        std::string ranges_path =
            config.asn_db == kDefault ? ranges_beside(asn_path, "asn.ranges") : std::string();
        if (!ranges_path.empty()) {
            try {
                out.asn_ranges =
                    std::make_unique<redirect::MappedAsnRanges>(ranges_path, out.asn->source());
                runtime::log::info("scanner_asn_ranges", {{"form", "mapped"},
                                                          {"path", ranges_path},
                                                          {"ranges", out.asn_ranges->size()},
                                                          {"bytes", out.asn_ranges->bytes()}});
            } catch (const std::runtime_error& e) {
                runtime::log::error("range_file_rejected",
                                    {{"error", e.what()},
                                     {"detail",
                                      "each click asks the ASN database until its ranges are "
                                      "built in the background"}});
            }
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
                   .asn_ranges = out.asn_ranges.get(),
                   .networks = &out.networks,
                   .burst_links = config.scanner_burst_links,
                   .burst_seconds = config.scanner_burst_seconds};
    auto networks = out.networks.current();
    runtime::log::info(
        "scanner_check",
        {{"asn_db", out.asn ? asn_path + " (" + out.asn->describe() + ")"
                            : std::string("none: no ASN check")},
         {"scanner_networks", out.networks_path.empty() ? "none" : out.networks_path},
         {"asns", networks->asns.size()},
         {"ranges", networks->ranges.size()},
         {"burst_links", config.scanner_burst_links},
         {"burst_seconds", config.scanner_burst_seconds}});
    start_ranges_walk(out, kWalkDelayAtStart);
}

void reload_scanner_networks(ScannerData& data) {
    if (data.networks_path.empty()) return;
    try {
        auto networks_read = read_networks(data.networks_path);
        data.ranges_walk = {};
        data.networks.set(std::move(networks_read));
        start_ranges_walk(data, std::chrono::seconds{0});
        auto networks = data.networks.current();
        runtime::log::info("scanner_networks_reloaded", {{"path", data.networks_path},
                                                         {"asns", networks->asns.size()},
                                                         {"ranges", networks->ranges.size()}});
    } catch (const std::runtime_error& e) {
        runtime::log::error("scanner_networks_rejected",
                            {{"error", e.what()}, {"detail", "kept the previous list"}});
    }
}

namespace {

// The database's ranges from its range file when there is a good one (the database itself is not
// kept), else the database, flattened in the background.
void publish_country_database(CountryData& data,
                              std::shared_ptr<const redirect::CountryDatabase> db) {
    if (!data.ranges_path.empty()) {
        try {
            auto ranges = std::make_shared<const redirect::MappedCountryRanges>(data.ranges_path,
                                                                                db->source());
            runtime::log::info("country_ranges", {{"form", "mapped"},
                                                  {"path", data.ranges_path},
                                                  {"ranges", ranges->size()},
                                                  {"bytes", ranges->bytes()}});
            data.box.publish_ranges(std::move(ranges));
            return;
        } catch (const std::runtime_error& e) {
            runtime::log::error("range_file_rejected",
                                {{"error", e.what()},
                                 {"detail",
                                  "each lookup walks the country database until its ranges are "
                                  "built in the background"}});
        }
    }
    data.box.publish(std::move(db));
}

}  // namespace

void load_country_database(const config::ClickConfig& config, CountryData& out,
                           runtime::HealthState& health) {
    out.path = config.geoip_db == kDefault ? beside_binary("country.mmdb") : config.geoip_db;
    if (out.path.empty()) {
        health.country_db.store(0);
        runtime::log::warn("country_rules_skipped",
                           {{"detail",
                             "no country database (REFGATE_GEOIP_DB): rules naming countries "
                             "match no reader"}});
        return;
    }
    if (config.geoip_db == kDefault) out.ranges_path = ranges_beside(out.path, "country.ranges");
    try {
        out.loaded =
            runtime::file_identity(out.path);  // before opening: a change meanwhile is seen later
        auto db = std::make_shared<const redirect::CountryDatabase>(out.path);
        runtime::log::info("country_database", {{"path", out.path}, {"database", db->describe()}});
        publish_country_database(out, std::move(db));
        health.country_db.store(1);
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(std::string("REFGATE_GEOIP_DB (geoip_db): ") + e.what());
    }
}

namespace {

// Opens the file as it is now and publishes it, or keeps the previous database; under data.mutex.
void reopen_country_database(CountryData& data,
                             const std::optional<runtime::FileIdentity>& identity,
                             const char* reason) {
    try {
        auto db = std::make_shared<const redirect::CountryDatabase>(data.path);
        std::string described = db->describe();
        publish_country_database(data, std::move(db));
        data.loaded = identity;
        data.refused.reset();
        runtime::log::info("country_database_reloaded",
                           {{"path", data.path}, {"reason", reason}, {"database", described}});
    } catch (const std::runtime_error& e) {
        data.refused = identity;
        runtime::log::error(
            "country_database_rejected",
            {{"error", e.what()}, {"reason", reason}, {"detail", "kept the previous database"}});
    }
}

}  // namespace

void reload_country_database(CountryData& data) {
    if (data.path.empty()) return;
    std::lock_guard lock(data.mutex);
    reopen_country_database(data, runtime::file_identity(data.path), "SIGHUP");
}

void follow_country_database_file(CountryData& data) {
    if (data.path.empty()) return;
    std::lock_guard lock(data.mutex);
    auto identity = runtime::file_identity(data.path);
    if (!identity) {
        if (!data.missing_logged)
            runtime::log::warn(
                "country_database_missing",
                {{"path", data.path}, {"detail", "kept the database loaded before"}});
        data.missing_logged = true;
        return;
    }
    data.missing_logged = false;
    if (identity == data.loaded || identity == data.refused) return;
    reopen_country_database(data, identity, "file_changed");
}

}  // namespace refgate::app
