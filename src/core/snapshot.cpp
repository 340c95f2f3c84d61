#include "refgate/core/snapshot.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <stdexcept>

#include "refgate/core/location.hpp"

namespace refgate {

namespace {

SysSeconds system_now() {
    return std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
}

// A partner in the snapshot file: the import format, its id and its scheduled codes.
nlohmann::ordered_json partner_file_json(const Partner& p) {
    auto j = partner_to_json(p);
    j["id"] = p.id;
    if (!p.scheduled_codes.empty()) {
        auto& codes = j["scheduled_codes"] = nlohmann::ordered_json::array();
        for (const auto& s : p.scheduled_codes)
            codes.push_back(
                {{"ref_code", s.ref_code}, {"valid_from", format_rfc3339(s.valid_from)}});
    }
    return j;
}

}  // namespace

std::shared_ptr<const Snapshot> Snapshot::build(std::uint64_t version,
                                                std::vector<Partner> partners,
                                                std::vector<Link> links, const UrlPolicy& policy,
                                                std::string source,
                                                std::vector<Disclosure> disclosures) {
    return build(version, std::move(partners), std::move(links), policy, std::move(source),
                 std::move(disclosures), system_now());
}

std::shared_ptr<const Snapshot> Snapshot::at(SysSeconds now) const {
    return build(version_, partners_, links_, policy_, source_, disclosures_.versions(), now);
}

std::shared_ptr<const Snapshot> Snapshot::build(std::uint64_t version,
                                                std::vector<Partner> partners,
                                                std::vector<Link> links, const UrlPolicy& policy,
                                                std::string source,
                                                std::vector<Disclosure> disclosures,
                                                SysSeconds now) {
    auto snapshot = std::make_shared<Snapshot>();
    snapshot->version_ = version;
    snapshot->source_ = std::move(source);
    snapshot->built_at_ = system_now().time_since_epoch().count();
    snapshot->policy_ = policy;
    snapshot->partners_ = std::move(partners);
    snapshot->links_ = std::move(links);

    // Scheduled codes whose moment has come replace the current code; the rest wait.
    for (Partner& partner : snapshot->partners_) {
        auto& schedule = partner.scheduled_codes;
        std::sort(schedule.begin(), schedule.end(),
                  [](const auto& a, const auto& b) { return a.valid_from < b.valid_from; });
        auto first_future = std::find_if(schedule.begin(), schedule.end(),
                                         [now](const auto& s) { return s.valid_from > now; });
        if (first_future != schedule.begin()) {
            partner.ref_code = std::prev(first_future)->ref_code;
            schedule.erase(schedule.begin(), first_future);
            snapshot->schedule_due_ = true;
        }
        if (!schedule.empty() &&
            (!snapshot->next_change_ || schedule.front().valid_from < *snapshot->next_change_)) {
            snapshot->next_change_ = schedule.front().valid_from;
        }
    }

    std::unordered_map<std::string_view, std::size_t> partner_index;
    for (std::size_t i = 0; i < snapshot->partners_.size(); ++i) {
        partner_index.emplace(snapshot->partners_[i].slug, i);
    }
    snapshot->entries_.reserve(snapshot->links_.size());
    for (const Link& link : snapshot->links_) {
        auto p = partner_index.find(link.partner);
        if (p == partner_index.end()) {
            snapshot->rejected_.push_back(link.slug + ": unknown partner " + link.partner);
            continue;
        }
        const Partner& partner = snapshot->partners_[p->second];
        UrlCheck check = check_destination(link.destination, partner.allowed_domains, policy);
        if (!check.ok() || check.canonical != link.destination || !valid_slug(link.slug) ||
            !valid_param_name(partner.ref_param)) {
            snapshot->rejected_.push_back(link.slug + ": destination " +
                                          (check.ok() ? "is not canonical" : check.message));
            continue;
        }
        LinkEntry entry;
        entry.id = link.id;
        entry.slug = link.slug;
        entry.partner_index = p->second;
        entry.status = link.status;
        entry.expires_at = link.expires_at ? link.expires_at->time_since_epoch().count() : 0;
        entry.utm_passthrough = link.utm_passthrough;
        entry.partner_active = partner.active;
        entry.destination = link.destination;
        entry.location = build_location(link.destination, partner);
        if (link.fallback) {
            UrlCheck fallback = check_destination(*link.fallback, partner.allowed_domains, policy);
            if (fallback.ok()) {
                entry.fallback = fallback.canonical;
            } else {
                snapshot->rejected_.push_back(link.slug + ": fallback " + fallback.message);
            }
        }
        snapshot->entries_.emplace(link.slug, std::move(entry));
    }
    snapshot->disclosures_ = DisclosureSet(std::move(disclosures));
    return snapshot;
}

nlohmann::ordered_json Snapshot::to_json() const {
    nlohmann::ordered_json doc;
    doc["format"] = 1;
    doc["version"] = version_;
    doc["partners"] = nlohmann::ordered_json::array();
    for (const auto& p : partners_) doc["partners"].push_back(partner_file_json(p));
    doc["links"] = nlohmann::ordered_json::array();
    for (const auto& l : links_) {
        auto j = link_to_json(l);
        j["id"] = l.id;
        doc["links"].push_back(std::move(j));
    }
    doc["disclosures"] = disclosures_to_json(disclosures_.versions());
    return doc;
}

void Snapshot::write_json(const std::function<void(std::string_view)>& sink) const {
    constexpr std::size_t kChunk = 1 << 20;
    std::string out;
    out.reserve(kChunk + 4096);
    out.append("{\"format\":1,\"version\":").append(std::to_string(version_));
    out.append(",\"partners\":[");
    bool first = true;
    for (const auto& p : partners_) {
        if (!first) out.push_back(',');
        first = false;
        out.append(partner_file_json(p).dump());
    }
    out.append("],\"links\":[");
    first = true;
    for (const auto& l : links_) {
        auto j = link_to_json(l);
        j["id"] = l.id;
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
    out.append(disclosures_to_json(disclosures_.versions()).dump());
    out.push_back('}');
    sink(out);
}

std::shared_ptr<const Snapshot> Snapshot::from_json(const nlohmann::ordered_json& doc,
                                                    const UrlPolicy& policy) {
    if (!doc.is_object() || doc.value("format", 0) != 1) {
        throw std::runtime_error("not a refgate snapshot (format 1)");
    }
    // Files written before disclosures were part of the snapshot have none.
    std::vector<Disclosure> disclosures;
    if (auto it = doc.find("disclosures"); it != doc.end())
        disclosures = disclosures_from_json(*it);
    return build(doc.at("version").get<std::uint64_t>(), partners_from_json(doc.at("partners")),
                 links_from_json(doc.at("links")), policy, "file", std::move(disclosures));
}

std::vector<Partner> partners_from_json(const nlohmann::ordered_json& array) {
    std::vector<Partner> partners;
    for (const auto& j : array) {
        Partner p;
        p.id = j.value("id", std::int64_t{0});
        p.slug = j.at("slug").get<std::string>();
        p.name = j.at("name").get<std::string>();
        p.ref_param = j.at("ref_param").get<std::string>();
        p.ref_code = j.at("ref_code").get<std::string>();
        p.allowed_domains = j.at("allowed_domains").get<std::vector<std::string>>();
        for (const auto& [key, value] : j.at("extra_params").items()) {
            p.extra_params.emplace_back(key, value.get<std::string>());
        }
        p.active = j.value("active", true);
        if (auto codes = j.find("scheduled_codes"); codes != j.end()) {
            for (const auto& s : *codes) {
                auto valid_from = parse_rfc3339(s.at("valid_from").get<std::string>());
                if (!valid_from) throw std::runtime_error("partner " + p.slug + ": bad valid_from");
                p.scheduled_codes.push_back({*valid_from, s.at("ref_code").get<std::string>()});
            }
        }
        partners.push_back(std::move(p));
    }
    return partners;
}

std::vector<Link> links_from_json(const nlohmann::ordered_json& array) {
    std::vector<Link> links;
    for (const auto& j : array) {
        Link l;
        l.id = j.value("id", std::int64_t{0});
        l.slug = j.at("slug").get<std::string>();
        l.partner = j.at("partner").get<std::string>();
        l.destination = j.at("destination").get<std::string>();
        auto status = parse_link_status(j.at("status").get<std::string>());
        if (!status) throw std::runtime_error("link " + l.slug + ": bad status");
        l.status = *status;
        if (j.contains("expires_at") && !j["expires_at"].is_null()) {
            l.expires_at = parse_rfc3339(j["expires_at"].get<std::string>());
            if (!l.expires_at) throw std::runtime_error("link " + l.slug + ": bad expires_at");
        }
        if (j.contains("fallback") && !j["fallback"].is_null())
            l.fallback = j["fallback"].get<std::string>();
        l.utm_passthrough = j.value("utm_passthrough", false);
        links.push_back(std::move(l));
    }
    return links;
}

void SnapshotStore::publish(std::shared_ptr<const Snapshot> snapshot) {
    {
        std::lock_guard lock(mutex_);
        current_ = std::move(snapshot);
    }
    generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::shared_ptr<const Snapshot> SnapshotStore::current() const {
    std::lock_guard lock(mutex_);
    return current_;
}

}  // namespace refgate
