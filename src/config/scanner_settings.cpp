#include "setting.hpp"

namespace refgate::config {

// The click class `scanner`: the ASN database, the scanner networks and the burst rule; the
// targeting rules' country database.
std::vector<Setting> scanner_settings() {
    return {
        text_setting(
            "asn_db", "REFGATE_ASN_DB", [](Config& c) -> std::string& { return c.clicks.asn_db; },
            "default, a path to an ASN database in MaxMind's format, or empty (no check)"),
        text_setting(
            "scanner_networks", "REFGATE_SCANNER_NETWORKS",
            [](Config& c) -> std::string& { return c.clicks.scanner_networks; },
            "default, a path to a scanner networks file, or empty (no networks)"),
        {"scanner_burst_links", "REFGATE_SCANNER_BURST_LINKS",
         [](Config& c, const std::string& v) {
             unsigned links = 0;
             if (!parse_uint<unsigned>(v, links, 0, 8) || links == 1) return false;
             c.clicks.scanner_burst_links = links;
             return true;
         },
         "0 (off) or an integer from 2 to 8",
         [](const Config& c) { return std::to_string(c.clicks.scanner_burst_links); }},
        {"scanner_burst_seconds", "REFGATE_SCANNER_BURST_SECONDS",
         [](Config& c, const std::string& v) {
             return parse_uint<std::int64_t>(v, c.clicks.scanner_burst_seconds, 1, 3600);
         },
         "an integer from 1 to 3600",
         [](const Config& c) { return std::to_string(c.clicks.scanner_burst_seconds); }},
        text_setting(
            "geoip_db", "REFGATE_GEOIP_DB",
            [](Config& c) -> std::string& { return c.clicks.geoip_db; },
            "default, a path to a country database in MaxMind's format, or empty (no country "
            "rules)"),
    };
}

}  // namespace refgate::config
