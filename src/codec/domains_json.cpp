// Branded domains (issue 46) as JSON: the import's "domains" and the admin API's domain.

#include "refgate/codec/domains_json.hpp"

#include <set>

#include "refgate/codec/stored_objects.hpp"
#include "refgate/domain/destination.hpp"

namespace refgate::codec {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::size_t kMaxNotFoundLength = 2048;

// The host of an absolute URL's authority, port and user info aside ("" when there is none).
std::string url_host(const std::string& url) {
    auto start = url.find("://");
    if (start == std::string::npos) return {};
    start += 3;
    auto end = url.find_first_of("/?#", start);
    std::string authority = url.substr(start, end == std::string::npos ? end : end - start);
    if (auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
    if (auto colon = authority.rfind(':'); colon != std::string::npos) authority.erase(colon);
    return authority;
}

template <typename Add>
domain::Domain read_domain(const Json& item, const Add& add) {
    domain::Domain d;
    for (const auto& [key, value] : item.items()) {
        if (key != "host" && key != "default" && key != "not_found")
            add(key, "is not a known field");
    }
    auto host = item.find("host");
    if (host == item.end() || host->is_null()) {
        add("host", "is required");
    } else if (!host->is_string()) {
        add("host", "must be a string");
    } else {
        d.host = canonical_domain_host(host->get<std::string>());
        if (d.host.empty()) add("host", "must be a DNS name such as go.example.com");
    }
    if (auto it = item.find("default"); it != item.end() && !it->is_null()) {
        if (it->is_boolean()) {
            d.is_default = it->get<bool>();
        } else {
            add("default", "must be true or false");
        }
    }
    if (auto it = item.find("not_found"); it != item.end() && !it->is_null()) {
        if (!it->is_string()) {
            add("not_found", "must be an https URL or null");
        } else {
            std::string url = it->get<std::string>();
            std::string url_domain = canonical_domain_host(url_host(url));
            domain::UrlCheck check = domain::check_destination(
                url, {url_domain},
                domain::UrlPolicy{.allow_http = false, .max_length = kMaxNotFoundLength});
            if (url_domain.empty() && check.ok()) check.rule = domain::UrlRule::invalid_host;
            if (check.ok()) {
                d.not_found = check.canonical;
            } else {
                add("not_found", check.message.empty() ? "must be an https URL" : check.message);
            }
        }
    }
    return d;
}

}  // namespace

std::string canonical_domain_host(const std::string& host) {
    return domain::canonical_domain(host);
}

void read_domains(const Json& domains, std::vector<domain::Domain>& out,
                  std::vector<ImportIssue>& issues) {
    if (!domains.is_array()) {
        issues.push_back({"document", "domains", "must be a list"});
        return;
    }
    std::set<std::string> seen;
    std::size_t defaults = 0;
    for (std::size_t i = 0; i < domains.size(); ++i) {
        const auto& item = domains[i];
        std::string name = "domains[" + std::to_string(i) + "]";
        if (item.is_object() && item.contains("host") && item["host"].is_string())
            name += " (" + item["host"].get<std::string>() + ")";
        if (!item.is_object()) {
            issues.push_back({name, "", "must be an object"});
            continue;
        }
        auto add = [&](const std::string& field, const std::string& message) {
            issues.push_back({name, field, message});
        };
        domain::Domain d = read_domain(item, add);
        if (!d.host.empty() && !seen.insert(d.host).second) add("host", "appears twice");
        if (d.is_default && ++defaults == 2) add("default", "only one domain can be the default");
        out.push_back(std::move(d));
    }
}

Json domain_to_json(const domain::Domain& domain) {
    return Json{{"host", domain.host},
                {"default", domain.is_default},
                {"not_found", domain.not_found.empty() ? Json() : Json(domain.not_found)}};
}

Json view_json(const DomainView& view) {
    Json j = domain_to_json(view.domain);
    j["created_at"] = format_micros(view.stamps.created_us);
    j["updated_at"] = format_micros(view.stamps.updated_us);
    j["version"] = view.stamps.version;
    return j;
}

DomainPut parse_domain_put(const std::string& host, const Json& body) {
    DomainPut out;
    if (!body.is_object()) {
        out.errors.push_back({"", "must be a JSON object"});
        return out;
    }
    Json item = Json::object();
    for (const auto& [key, value] : body.items()) {
        // What GET answered may be sent back: its read-only fields are ignored.
        if (key != "created_at" && key != "updated_at" && key != "version") item[key] = value;
    }
    if (auto it = item.find("host"); it != item.end()) {
        if (!it->is_string() || canonical_domain_host(it->get<std::string>()) != host) {
            out.errors.push_back({"host", "must be the host the path names"});
            return out;
        }
    }
    item["host"] = host;
    auto add = [&](const std::string& field, const std::string& message) {
        out.errors.push_back({field, message});
    };
    out.domain = read_domain(item, add);
    return out;
}

}  // namespace refgate::codec
