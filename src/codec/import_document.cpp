#include "refgate/codec/import_document.hpp"

#include <set>

#include "refgate/codec/disclosure_json.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/link_rules.hpp"
#include "refgate/domain/placement.hpp"
#include "refgate/domain/targeting.hpp"
#include "targeting_json.hpp"

namespace refgate {
namespace {

constexpr std::size_t kMaxName = 200;
constexpr std::size_t kMaxCode = 128;
constexpr std::size_t kMaxParamValue = 256;
constexpr std::size_t kMaxDomains = 64;
constexpr std::size_t kMaxChannelCodes = 64;

bool printable(const std::string& text) {
    for (unsigned char c : text) {
        if (c < 0x20 || c == 0x7f) return false;
    }
    return true;
}

class Reader {
  public:
    Reader(std::vector<ImportIssue>& issues, std::string entry,
           const nlohmann::ordered_json& object)
        : issues_(issues), entry_(std::move(entry)), object_(object) {}

    void add(const std::string& field, const std::string& message) {
        issues_.push_back({entry_, field, message});
    }

    void reject_unknown(std::initializer_list<const char*> known) {
        for (const auto& [key, value] : object_.items()) {
            bool ok = false;
            for (const char* k : known) ok = ok || key == k;
            if (!ok) add(key, "is not a known field");
        }
    }

    // Reads a required (or, with fallback, optional) string field.
    bool string(const char* field, std::string& out, bool required = true) {
        auto it = object_.find(field);
        if (it == object_.end() || it->is_null()) {
            if (required) add(field, "is required");
            return false;
        }
        if (!it->is_string()) {
            add(field, "must be a string");
            return false;
        }
        out = it->get<std::string>();
        return true;
    }

    void boolean(const char* field, bool& out) {
        auto it = object_.find(field);
        if (it == object_.end()) return;
        if (!it->is_boolean()) {
            add(field, "must be true or false");
            return;
        }
        out = it->get<bool>();
    }

    const nlohmann::ordered_json* find(const char* field) const {
        auto it = object_.find(field);
        return it == object_.end() ? nullptr : &*it;
    }

  private:
    std::vector<ImportIssue>& issues_;
    std::string entry_;
    const nlohmann::ordered_json& object_;
};

std::string entry_name(const char* array, std::size_t index, const nlohmann::ordered_json& item) {
    std::string name = std::string(array) + "[" + std::to_string(index) + "]";
    if (item.is_object() && item.contains("slug") && item["slug"].is_string()) {
        name += " (" + item["slug"].get<std::string>() + ")";
    }
    return name;
}

// The partner's placement fields (issue 42); absent or null: none, opaque, "a-z0-9", none.
void read_placements(Reader& r, Partner& p) {
    if (r.string("subid_param", p.subid_param, false)) {
        if (auto problem = subid_param_problem(p)) r.add("subid_param", *problem);
    }
    std::string style;
    if (r.string("subid_style", style, false)) {
        if (style == "readable") {
            p.subid_style = SubidStyle::readable;
        } else if (style != "opaque") {
            r.add("subid_style", "must be opaque or readable");
        }
    }
    if (r.string("subid_charset", p.subid_charset, false) && !SubidCharset::parse(p.subid_charset))
        r.add("subid_charset",
              "must be ranges such as a-z, A-Z, 0-9 and the characters - _ . (at most 64)");
    const nlohmann::ordered_json* codes = r.find("channel_codes");
    if (codes == nullptr || codes->is_null()) return;
    if (!codes->is_array() || codes->size() > kMaxChannelCodes) {
        r.add("channel_codes", "must be a list of at most 64 {channel, ref_code} objects");
        return;
    }
    for (std::size_t i = 0; i < codes->size(); ++i) {
        const auto& item = (*codes)[i];
        std::string field = "channel_codes[" + std::to_string(i) + "]";
        if (!item.is_object() || item.size() != 2 || !item.contains("channel") ||
            !item.contains("ref_code")) {
            r.add(field, "must be an object {\"channel\": ..., \"ref_code\": ...}");
            continue;
        }
        const auto& channel = item["channel"];
        const auto& code = item["ref_code"];
        bool ok = true;
        if (!channel.is_string() || !valid_channel_pattern(channel.get<std::string>())) {
            r.add(field + ".channel",
                  "must be a channel ([a-z0-9][a-z0-9._-]{0,47}) or a prefix of one followed by *");
            ok = false;
        }
        if (!code.is_string() || code.get<std::string>().empty() ||
            code.get<std::string>().size() > kMaxCode || !printable(code.get<std::string>())) {
            r.add(field + ".ref_code", "must be 1 to 128 printable characters");
            ok = false;
        }
        if (!ok) continue;
        ChannelCode entry{channel.get<std::string>(), code.get<std::string>()};
        for (const auto& earlier : p.channel_codes) {
            if (earlier.channel == entry.channel) {
                r.add(field + ".channel", "appears twice");
                ok = false;
            }
        }
        if (ok) p.channel_codes.push_back(std::move(entry));
    }
}

Partner read_partner(Reader& r) {
    Partner p;
    r.reject_unknown({"slug", "name", "ref_param", "ref_code", "allowed_domains", "extra_params",
                      "active", "subid_param", "subid_style", "subid_charset", "channel_codes"});
    if (r.string("slug", p.slug) && !valid_slug(p.slug))
        r.add("slug", "must match [a-z0-9][a-z0-9-]{0,63}");
    if (r.string("name", p.name) &&
        (p.name.empty() || p.name.size() > kMaxName || !printable(p.name))) {
        r.add("name", "must be 1 to 200 printable characters");
    }
    if (r.string("ref_param", p.ref_param) && !valid_param_name(p.ref_param)) {
        r.add("ref_param", "must be 1 to 64 of A-Z a-z 0-9 _ . -");
    }
    if (r.string("ref_code", p.ref_code) &&
        (p.ref_code.empty() || p.ref_code.size() > kMaxCode || !printable(p.ref_code))) {
        r.add("ref_code", "must be 1 to 128 printable characters");
    }
    const nlohmann::ordered_json* domains = r.find("allowed_domains");
    if (domains == nullptr || !domains->is_array() || domains->empty() ||
        domains->size() > kMaxDomains) {
        r.add("allowed_domains", "must be a list of 1 to 64 domain names");
    } else {
        for (const auto& d : *domains) {
            std::string canonical = d.is_string() ? canonical_domain(d.get<std::string>()) : "";
            if (canonical.empty()) {
                r.add("allowed_domains", "has an invalid domain name " + d.dump());
            } else {
                p.allowed_domains.push_back(canonical);
            }
        }
    }
    if (const nlohmann::ordered_json* extras = r.find("extra_params");
        extras != nullptr && !extras->is_null()) {
        if (!extras->is_object()) {
            r.add("extra_params", "must be an object of parameter names to string values");
        } else {
            for (const auto& [key, value] : extras->items()) {
                if (!valid_param_name(key)) {
                    r.add("extra_params", "has an invalid parameter name '" + key + "'");
                } else if (key == p.ref_param) {
                    r.add("extra_params", "must not set the referral parameter '" + key + "'");
                } else if (!value.is_string() || value.get<std::string>().size() > kMaxParamValue ||
                           !printable(value.get<std::string>())) {
                    r.add("extra_params",
                          "value of '" + key +
                              "' must be a string of up to 256 printable characters");
                } else {
                    p.extra_params.emplace_back(key, value.get<std::string>());
                }
            }
        }
    }
    r.boolean("active", p.active);
    read_placements(r, p);
    return p;
}

Link read_link(Reader& r) {
    Link l;
    r.reject_unknown({"slug", "partner", "destination", "status", "expires_at", "fallback",
                      "utm_passthrough", "rules"});
    if (r.string("slug", l.slug) && !valid_slug(l.slug))
        r.add("slug", "must match [a-z0-9][a-z0-9-]{0,63}");
    if (r.string("partner", l.partner) && !valid_slug(l.partner))
        r.add("partner", "is not a valid partner slug");
    r.string("destination", l.destination);
    std::string status = "active";
    r.string("status", status, false);
    if (auto parsed = parse_link_status(status)) {
        l.status = *parsed;
    } else {
        r.add("status", "must be active or disabled");
    }
    std::string expires;
    if (r.string("expires_at", expires, false)) {
        l.expires_at = parse_rfc3339(expires);
        if (!l.expires_at)
            r.add("expires_at", "must be an RFC 3339 time such as 2026-12-31T23:59:59Z, or null");
    }
    std::string fallback;
    if (r.string("fallback", fallback, false)) l.fallback = fallback;
    r.boolean("utm_passthrough", l.utm_passthrough);
    if (const auto* rules = r.find("rules"); rules != nullptr && !rules->is_null())
        read_rules(*rules, l.rules,
                   [&](const std::string& f, const std::string& m) { r.add(f, m); });
    return l;
}

Disclosure read_disclosure(Reader& r) {
    Disclosure d;
    r.reject_unknown({"key", "locale", "text", "html"});
    if (r.string("key", d.key) && !valid_slug(d.key))
        r.add("key", "must be general or a partner slug ([a-z0-9][a-z0-9-]{0,63})");
    std::string locale;
    if (r.string("locale", locale)) {
        auto normalized = normalize_locale(locale);
        if (normalized) {
            d.locale = *normalized;
        } else {
            r.add("locale", "must be a language tag such as en, de or de-AT");
        }
    }
    if (r.string("text", d.text) && !valid_disclosure_text(d.text))
        r.add("text", "must be 1 to 2000 bytes of text without control characters");
    std::string html;
    if (r.string("html", html, false)) {
        if (html.size() > kMaxDisclosureHtml) {
            r.add("html", "must be at most 8000 bytes");
        } else {
            d.html = sanitize_html(html);
            d.html_given = true;
        }
    }
    if (!d.html_given) d.html = text_to_html(d.text);
    return d;
}

}  // namespace

std::string ImportIssue::to_string() const { return entry + ": " + field + " " + message; }

ParsedImport parse_import(const nlohmann::ordered_json& doc) {
    ParsedImport result;
    auto& issues = result.issues;
    if (!doc.is_object()) {
        issues.push_back({"document", "", "must be a JSON object with \"partners\" and \"links\""});
        return result;
    }
    for (const auto& [key, value] : doc.items()) {
        if (key != "partners" && key != "links" && key != "disclosures" && key != "country_groups")
            issues.push_back({"document", key, "is not a known field"});
    }
    std::set<std::string> seen;
    if (auto it = doc.find("partners"); it != doc.end()) {
        if (!it->is_array()) {
            issues.push_back({"document", "partners", "must be a list"});
        } else {
            for (std::size_t i = 0; i < it->size(); ++i) {
                const auto& item = (*it)[i];
                std::string name = entry_name("partners", i, item);
                if (!item.is_object()) {
                    issues.push_back({name, "", "must be an object"});
                    continue;
                }
                Reader r(issues, name, item);
                Partner p = read_partner(r);
                if (!p.slug.empty() && !seen.insert(p.slug).second) r.add("slug", "appears twice");
                result.document.partners.push_back(std::move(p));
            }
        }
    }
    seen.clear();
    if (auto it = doc.find("links"); it != doc.end()) {
        if (!it->is_array()) {
            issues.push_back({"document", "links", "must be a list"});
        } else {
            for (std::size_t i = 0; i < it->size(); ++i) {
                const auto& item = (*it)[i];
                std::string name = entry_name("links", i, item);
                if (!item.is_object()) {
                    issues.push_back({name, "", "must be an object"});
                    continue;
                }
                Reader r(issues, name, item);
                Link l = read_link(r);
                if (!l.slug.empty() && !seen.insert(l.slug).second) r.add("slug", "appears twice");
                result.document.links.push_back(std::move(l));
            }
        }
    }
    seen.clear();
    if (auto it = doc.find("disclosures"); it != doc.end()) {
        if (!it->is_array()) {
            issues.push_back({"document", "disclosures", "must be a list"});
        } else {
            for (std::size_t i = 0; i < it->size(); ++i) {
                const auto& item = (*it)[i];
                std::string name = "disclosures[" + std::to_string(i) + "]";
                if (item.is_object() && item.contains("key") && item["key"].is_string() &&
                    item.contains("locale") && item["locale"].is_string()) {
                    name += " (" + item["key"].get<std::string>() + "/" +
                            item["locale"].get<std::string>() + ")";
                }
                if (!item.is_object()) {
                    issues.push_back({name, "", "must be an object"});
                    continue;
                }
                Reader r(issues, name, item);
                Disclosure d = read_disclosure(r);
                if (!d.key.empty() && !d.locale.empty() &&
                    !seen.insert(d.key + "/" + d.locale).second)
                    r.add("locale", "appears twice for this key");
                result.document.disclosures.push_back(std::move(d));
            }
        }
    }
    if (auto it = doc.find("country_groups"); it != doc.end())
        read_country_groups(*it, result.document.country_groups, result.issues);
    return result;
}

std::vector<ImportIssue> validate_links(std::vector<Link>& links, const PartnerLookup& partners,
                                        const UrlPolicy& policy, const std::string& what) {
    std::vector<ImportIssue> issues;
    for (std::size_t i = 0; i < links.size(); ++i) {
        Link& link = links[i];
        // A missing partner or a bad slug was already reported by parse_import.
        if (link.partner.empty() || !valid_slug(link.slug)) continue;
        std::string entry = what + "[" + std::to_string(i) + "] (" + link.slug + ")";
        const Partner* partner = partners(link.partner);
        if (partner == nullptr) {
            issues.push_back({entry, "partner", "'" + link.partner + "' does not exist"});
            continue;
        }
        // The snapshot builder's own rules: a link saved here is a link served.
        LinkValidation checked = validate_link(link, *partner, policy);
        for (auto& issue : checked.issues)
            issues.push_back({entry, issue.field, issue.message + " [" + issue.rule + "]"});
        if (checked.destination) link.destination = std::move(*checked.destination);
        if (checked.fallback) link.fallback = std::move(*checked.fallback);
        for (auto& issue : validate_rules(link.rules, *partner, partners, policy))
            issues.push_back({entry, issue.field, issue.message + " [" + issue.rule + "]"});
    }
    return issues;
}

nlohmann::ordered_json export_document(const std::vector<Partner>& partners,
                                       const std::vector<Link>& links,
                                       const std::vector<Disclosure>& disclosures,
                                       const std::vector<CountryGroup>& country_groups) {
    nlohmann::ordered_json doc;
    doc["partners"] = nlohmann::ordered_json::array();
    for (const auto& p : partners) doc["partners"].push_back(partner_to_json(p));
    doc["links"] = nlohmann::ordered_json::array();
    for (const auto& l : links) doc["links"].push_back(link_to_json(l));
    if (!disclosures.empty()) {
        doc["disclosures"] = nlohmann::ordered_json::array();
        for (const auto& d : disclosures) doc["disclosures"].push_back(disclosure_to_json(d));
    }
    if (!country_groups.empty()) {
        doc["country_groups"] = nlohmann::ordered_json::array();
        for (const auto& g : country_groups)
            doc["country_groups"].push_back(country_group_to_json(g));
    }
    return doc;
}

nlohmann::ordered_json partner_to_json(const Partner& partner) {
    nlohmann::ordered_json extras = nlohmann::ordered_json::object();
    for (const auto& [key, value] : partner.extra_params) extras[key] = value;
    nlohmann::ordered_json channel_codes = nlohmann::ordered_json::array();
    for (const auto& c : partner.channel_codes)
        channel_codes.push_back({{"channel", c.channel}, {"ref_code", c.ref_code}});
    return {
        {"slug", partner.slug},
        {"name", partner.name},
        {"ref_param", partner.ref_param},
        {"ref_code", partner.ref_code},
        {"allowed_domains", partner.allowed_domains},
        {"extra_params", extras},
        {"active", partner.active},
        {"subid_param", partner.subid_param.empty() ? nlohmann::ordered_json()
                                                    : nlohmann::ordered_json(partner.subid_param)},
        {"subid_style", partner.subid_style == SubidStyle::readable ? "readable" : "opaque"},
        {"subid_charset", partner.subid_charset},
        {"channel_codes", channel_codes}};
}

nlohmann::ordered_json link_to_json(const Link& link) {
    nlohmann::ordered_json j{{"slug", link.slug},
                             {"partner", link.partner},
                             {"destination", link.destination},
                             {"status", to_string(link.status)},
                             {"expires_at", nullptr},
                             {"fallback", nullptr},
                             {"utm_passthrough", link.utm_passthrough}};
    if (link.expires_at) j["expires_at"] = format_rfc3339(*link.expires_at);
    if (link.fallback) j["fallback"] = *link.fallback;
    if (!link.rules.empty()) {
        j["rules"] = nlohmann::ordered_json::array();
        for (const auto& rule : link.rules) j["rules"].push_back(rule_to_json(rule));
    }
    return j;
}

}  // namespace refgate
