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
    // Rebuilt from the entries, which were checked when this snapshot was built: the partners'
    // domains and the URL policy are the same, only referral codes change.
    auto snapshot = std::make_shared<Snapshot>();
    snapshot->version_ = version_;
    snapshot->source_ = source_;
    snapshot->built_at_ = system_now().time_since_epoch().count();
    snapshot->policy_ = policy_;
    snapshot->partners_ = partners_;
    snapshot->apply_schedule(now);
    snapshot->entries_ = entries_;
    for (LinkEntry& entry : snapshot->entries_) {
        entry.location =
            build_location(entry.destination, snapshot->partners_[entry.partner_index]);
    }
    snapshot->index_entries();
    snapshot->disclosures_ = DisclosureSet(disclosures_.versions());
    return snapshot;
}

void Snapshot::apply_schedule(SysSeconds now) {
    // Scheduled codes whose moment has come replace the current code; the rest wait.
    for (Partner& partner : partners_) {
        auto& schedule = partner.scheduled_codes;
        std::sort(schedule.begin(), schedule.end(),
                  [](const auto& a, const auto& b) { return a.valid_from < b.valid_from; });
        auto first_future = std::find_if(schedule.begin(), schedule.end(),
                                         [now](const auto& s) { return s.valid_from > now; });
        if (first_future != schedule.begin()) {
            partner.ref_code = std::prev(first_future)->ref_code;
            schedule.erase(schedule.begin(), first_future);
            schedule_due_ = true;
        }
        if (!schedule.empty() && (!next_change_ || schedule.front().valid_from < *next_change_)) {
            next_change_ = schedule.front().valid_from;
        }
    }
}

void Snapshot::index_entries() {
    index_.clear();
    index_.reserve(entries_.size());
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        index_.emplace(entries_[i].slug, static_cast<std::uint32_t>(i));
    }
}

Link Snapshot::link(const LinkEntry& entry) const {
    Link l;
    l.id = entry.id;
    l.slug = entry.slug;
    l.partner = partners_[entry.partner_index].slug;
    l.destination = entry.destination;
    l.status = entry.status;
    if (entry.expires_at != 0) l.expires_at = SysSeconds{std::chrono::seconds{entry.expires_at}};
    if (!entry.fallback.empty()) l.fallback = entry.fallback;
    l.utm_passthrough = entry.utm_passthrough;
    return l;
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
    snapshot->apply_schedule(now);

    std::unordered_map<std::string_view, std::size_t> partner_index;
    for (std::size_t i = 0; i < snapshot->partners_.size(); ++i) {
        partner_index.emplace(snapshot->partners_[i].slug, i);
    }
    // Reserved once: the index's keys point into the entries, which must never move.
    snapshot->entries_.reserve(links.size());
    snapshot->index_.reserve(links.size());
    for (Link& link : links) {
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
        if (snapshot->index_.count(link.slug) != 0) continue;  // the first of a slug wins
        LinkEntry entry;
        entry.id = link.id;
        entry.partner_index = p->second;
        entry.status = link.status;
        entry.expires_at = link.expires_at ? link.expires_at->time_since_epoch().count() : 0;
        entry.utm_passthrough = link.utm_passthrough;
        entry.partner_active = partner.active;
        entry.location = build_location(link.destination, partner);
        if (link.fallback) {
            UrlCheck fallback = check_destination(*link.fallback, partner.allowed_domains, policy);
            if (fallback.ok()) {
                entry.fallback = std::move(fallback.canonical);
            } else {
                snapshot->rejected_.push_back(link.slug + ": fallback " + fallback.message);
            }
        }
        entry.slug = std::move(link.slug);
        entry.destination = std::move(link.destination);
        entry.location.shrink_to_fit();
        snapshot->entries_.push_back(std::move(entry));
        const LinkEntry& added = snapshot->entries_.back();
        snapshot->index_.emplace(added.slug,
                                 static_cast<std::uint32_t>(snapshot->entries_.size() - 1));
        // The input link's strings are freed as we go, not all at the end.
        link = Link();
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
    for (const auto& e : entries_) {
        auto j = link_to_json(link(e));
        j["id"] = e.id;
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
    for (const auto& e : entries_) {
        auto j = link_to_json(link(e));
        j["id"] = e.id;
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

namespace {

// Reads a snapshot file from the parser's events: the links array straight into Links, all else
// (format, version, partners, disclosures: small) into a document.
class FileReader {
  public:
    using Json = nlohmann::ordered_json;

    Json rest;
    std::vector<Link> links;
    bool saw_links = false;

    bool null() { return scalar(nullptr); }
    bool boolean(bool v) { return scalar(v); }
    bool number_integer(Json::number_integer_t v) { return scalar(v); }
    bool number_unsigned(Json::number_unsigned_t v) { return scalar(v); }
    bool number_float(Json::number_float_t v, const Json::string_t&) { return scalar(v); }
    bool string(Json::string_t& v) { return scalar(std::move(v)); }
    bool binary(Json::binary_t&) { throw std::runtime_error("snapshot file: binary value"); }

    bool start_object(std::size_t) {
        if (in_links_) {
            if (skip_ > 0 || in_link_) {
                if (!in_link_) throw std::runtime_error("snapshot file: link is not an object");
                ++skip_;  // an unknown member's value: not ours
                return true;
            }
            in_link_ = true;
            link_ = Link();
            seen_ = 0;
            return true;
        }
        return open(Json::object());
    }
    bool end_object() {
        if (in_links_) {
            if (skip_ > 0) {
                --skip_;
                return true;
            }
            finish_link();
            return true;
        }
        stack_.pop_back();
        return true;
    }
    bool start_array(std::size_t) {
        if (in_links_) {
            if (!in_link_) throw std::runtime_error("snapshot file: link is not an object");
            ++skip_;
            return true;
        }
        if (stack_.size() == 1 && key_ == "links") {
            if (saw_links) throw std::runtime_error("snapshot file: links twice");
            saw_links = true;
            in_links_ = true;
            return true;
        }
        return open(Json::array());
    }
    bool end_array() {
        if (in_links_) {
            if (skip_ > 0) {
                --skip_;
            } else {
                in_links_ = false;
            }
            return true;
        }
        stack_.pop_back();
        return true;
    }
    bool key(Json::string_t& k) {
        key_ = std::move(k);
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
        throw std::runtime_error(std::string("snapshot file: ") + e.what());
    }

  private:
    enum Seen : unsigned { kSlug = 1, kPartner = 2, kDestination = 4, kStatus = 8 };

    template <typename T>
    bool scalar(T&& v) {
        if (in_links_) {
            if (!in_link_) throw std::runtime_error("snapshot file: link is not an object");
            if (skip_ == 0) link_member(Json(std::forward<T>(v)));
            return true;
        }
        if (stack_.empty()) throw std::runtime_error("not a refgate snapshot (format 1)");
        Json& parent = *stack_.back();
        if (parent.is_object()) {
            parent[key_] = std::forward<T>(v);
        } else {
            parent.push_back(std::forward<T>(v));
        }
        return true;
    }

    bool open(Json empty) {
        if (stack_.empty()) {
            if (!empty.is_object() || rest.is_object())
                throw std::runtime_error("not a refgate snapshot (format 1)");
            rest = std::move(empty);
            stack_.push_back(&rest);
            return true;
        }
        // The parent gets no other member while this one is open, so the pointer stays good.
        Json& parent = *stack_.back();
        Json* child = nullptr;
        if (parent.is_object()) {
            child = &(parent[key_] = std::move(empty));
        } else {
            parent.push_back(std::move(empty));
            child = &parent.back();
        }
        stack_.push_back(child);
        return true;
    }

    void link_member(Json value) {
        auto text = [&](const char* what) -> std::string {
            if (!value.is_string()) throw std::runtime_error(std::string("link: bad ") + what);
            return value.get<std::string>();
        };
        if (key_ == "id") {
            if (!value.is_number_integer()) throw std::runtime_error("link: bad id");
            link_.id = value.get<std::int64_t>();
        } else if (key_ == "slug") {
            link_.slug = text("slug");
            seen_ |= kSlug;
        } else if (key_ == "partner") {
            link_.partner = text("partner");
            seen_ |= kPartner;
        } else if (key_ == "destination") {
            link_.destination = text("destination");
            seen_ |= kDestination;
        } else if (key_ == "status") {
            auto status = parse_link_status(text("status"));
            if (!status) throw std::runtime_error("link " + link_.slug + ": bad status");
            link_.status = *status;
            seen_ |= kStatus;
        } else if (key_ == "expires_at") {
            if (value.is_null()) return;
            link_.expires_at = parse_rfc3339(text("expires_at"));
            if (!link_.expires_at)
                throw std::runtime_error("link " + link_.slug + ": bad expires_at");
        } else if (key_ == "fallback") {
            if (!value.is_null()) link_.fallback = text("fallback");
        } else if (key_ == "utm_passthrough") {
            if (!value.is_boolean()) throw std::runtime_error("link: bad utm_passthrough");
            link_.utm_passthrough = value.get<bool>();
        }
    }

    void finish_link() {
        in_link_ = false;
        if (seen_ != (kSlug | kPartner | kDestination | kStatus))
            throw std::runtime_error(
                "snapshot file: a link lacks slug, partner, destination or status");
        links.push_back(std::move(link_));
    }

    std::vector<Json*> stack_;
    std::string key_;
    bool in_links_ = false;
    bool in_link_ = false;
    int skip_ = 0;
    unsigned seen_ = 0;
    Link link_;
};

}  // namespace

std::shared_ptr<const Snapshot> Snapshot::read_json(std::istream& in, const UrlPolicy& policy) {
    FileReader reader;
    if (!nlohmann::ordered_json::sax_parse(in, &reader))
        throw std::runtime_error("snapshot file: not JSON");
    const auto& doc = reader.rest;
    if (!doc.is_object() || doc.value("format", 0) != 1 || !reader.saw_links) {
        throw std::runtime_error("not a refgate snapshot (format 1)");
    }
    std::vector<Disclosure> disclosures;
    if (auto it = doc.find("disclosures"); it != doc.end())
        disclosures = disclosures_from_json(*it);
    return build(doc.at("version").get<std::uint64_t>(), partners_from_json(doc.at("partners")),
                 std::move(reader.links), policy, "file", std::move(disclosures));
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
