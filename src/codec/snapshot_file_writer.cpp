// The snapshot file's writer: the text read_snapshot_json() reads.

#include <string>

#include "refgate/codec/disclosure_json.hpp"
#include "refgate/codec/domains_json.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/codec/snapshot_file.hpp"
#include "refgate/domain/time.hpp"

namespace refgate::codec {
namespace {

// A partner in the snapshot file: the import format, its id and its scheduled codes.
nlohmann::ordered_json partner_file_json(const domain::Partner& p) {
    auto j = partner_to_json(p);
    j["id"] = p.id;
    if (!p.scheduled_codes.empty()) {
        auto& codes = j["scheduled_codes"] = nlohmann::ordered_json::array();
        for (const auto& s : p.scheduled_codes) {
            codes.push_back(
                {{"ref_code", s.ref_code}, {"valid_from", domain::format_rfc3339(s.valid_from)}});
            if (s.channel_codes) {
                auto& list = codes.back()["channel_codes"] = nlohmann::ordered_json::array();
                for (const auto& c : *s.channel_codes)
                    list.push_back({{"channel", c.channel}, {"ref_code", c.ref_code}});
            }
        }
    }
    return j;
}

}  // namespace

void write_snapshot_json(const domain::Snapshot& snapshot,
                         const std::function<void(std::string_view)>& sink) {
    constexpr std::size_t kChunk = 1 << 20;
    std::string out;
    out.reserve(kChunk + 4096);
    out.append("{\"format\":1,\"version\":").append(std::to_string(snapshot.version()));
    out.append(",\"partners\":[");
    bool first = true;
    for (const auto& p : snapshot.partners()) {
        if (!first) out.push_back(',');
        first = false;
        out.append(partner_file_json(p).dump());
    }
    out.append("],\"links\":[");
    first = true;
    for (const auto& e : snapshot.entries()) {
        domain::Link link = snapshot.link(e);
        auto j = link_to_json(link);
        j["id"] = e.id;
        if (!link.fallback_switches.empty()) {
            auto& branches = j["fallback_branches"] = nlohmann::ordered_json::array();
            for (const auto& sw : link.fallback_switches) branches.push_back(sw.branch);
        }
        if (!first) out.push_back(',');
        first = false;
        out.append(j.dump());
        if (out.size() >= kChunk) {
            sink(out);
            out.clear();
        }
    }
    // The disclosures too: a file without them served no disclosure after a restart from it.
    out.append("],\"disclosures\":");
    out.append(disclosures_to_json(snapshot.disclosures().versions()).dump());
    // Rules (in links) and country groups are members an older reader skips: the format stays 1.
    if (!snapshot.country_groups().empty()) {
        out.append(",\"country_groups\":");
        auto groups = nlohmann::ordered_json::array();
        for (const auto& g : snapshot.country_groups()) groups.push_back(country_group_to_json(g));
        out.append(groups.dump());
    }
    // Issue 46: the domains, and each link's (link_to_json), likewise skipped by older readers.
    if (snapshot.has_domains()) {
        auto domains = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < snapshot.domains().size(); ++i) {
            const auto& d = snapshot.domains()[i];
            if (d.host.empty()) continue;  // the default while none is defined
            domains.push_back(domain_to_json(domain::Domain{d.host, i == 0, d.not_found}));
        }
        out.append(",\"domains\":").append(domains.dump());
    }
    out.push_back('}');
    sink(out);
}

}  // namespace refgate::codec
