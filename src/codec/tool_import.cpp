#include "refgate/codec/tool_import.hpp"

#include <algorithm>
#include <set>

#include "csv_reader.hpp"
#include "refgate/domain/destination.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/query.hpp"
#include "refgate/domain/utf8.hpp"

namespace refgate::codec {
namespace {

using Json = nlohmann::ordered_json;

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; });
    return out;
}

// The columns a tool's CSV must have, by name, and which of them is the slug, URL and title.
struct CsvColumns {
    std::string_view slug;
    std::string_view url;
    std::string_view title;
};

CsvColumns csv_columns(ExportTool tool) {
    switch (tool) {
        case ExportTool::pretty_links:
            // PrettyLinks' Tools -> Export (CsvExporter::COLUMNS): id, slug, url, name, ...
            return {"slug", "url", "name"};
        case ExportTool::thirstyaffiliates:
            // ThirstyAffiliates' CSV: Link Name, Destination URL, Slug, Categories, ...
            return {"Slug", "Destination URL", "Link Name"};
        case ExportTool::shlink:
            // Shlink web client's Export: createdAt, domain, shortCode, shortUrl, longUrl, ...
            return {"shortCode", "longUrl", "title"};
        case ExportTool::yourls:
            break;
    }
    return {};
}

ToolExport read_csv_export(ExportTool tool, std::string_view text) {
    ToolExport out;
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a spreadsheet's BOM
    CsvColumns want = csv_columns(tool);
    CsvReader reader(text);
    auto header = reader.next();
    auto column = [&](std::string_view name) -> std::optional<std::size_t> {
        if (!header) return std::nullopt;
        for (std::size_t i = 0; i < header->size(); ++i) {
            std::string_view h = (*header)[i];
            while (!h.empty() && (h.back() == '\r' || h.back() == ' ')) h.remove_suffix(1);
            if (h == name) return i;
        }
        return std::nullopt;
    };
    auto slug = column(want.slug);
    auto url = column(want.url);
    auto title = column(want.title);
    if (!slug || !url) {
        out.problems.push_back({1, "the header must have the columns \"" + std::string(want.slug) +
                                       "\" and \"" + std::string(want.url) + "\" (" +
                                       std::string(export_tool_name(tool)) + "'s export)"});
        return out;
    }
    while (!reader.done()) {
        std::size_t line = reader.line();
        auto fields = reader.next();
        if (!fields) {
            out.problems.push_back({line, "a quoted field is not closed"});
            break;
        }
        if (fields->size() == 1 && fields->front().empty()) continue;  // a blank line
        for (auto& f : *fields) {
            while (!f.empty() && f.back() == '\r') f.pop_back();
        }
        if (fields->size() <= std::max(*slug, *url)) {
            out.problems.push_back({line, "has " + std::to_string(fields->size()) +
                                              " fields; the header has " +
                                              std::to_string(header->size())});
            continue;
        }
        if (!std::all_of(fields->begin(), fields->end(),
                         [](const auto& f) { return domain::valid_utf8(f); })) {
            out.problems.push_back({line, "is not UTF-8 text"});
            continue;
        }
        ToolLink link{line, (*fields)[*slug], (*fields)[*url], {}};
        if (title && *title < fields->size()) link.title = (*fields)[*title];
        out.links.push_back(std::move(link));
    }
    return out;
}

// YOURLS' `yourls-api.php?action=stats&filter=last&limit=N&format=json`:
// {"links": {"link_1": {"shorturl", "url", "title", "timestamp", "ip", "clicks"}, ...}, ...}.
ToolExport read_yourls(std::string_view text) {
    ToolExport out;
    auto json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_discarded() || !json.is_object() || !json.contains("links") ||
        !json["links"].is_object()) {
        out.problems.push_back({0, "not the JSON of YOURLS' API action=stats (no \"links\")"});
        return out;
    }
    std::size_t n = 0;
    for (const auto& item : json["links"].items()) {
        ++n;
        const auto& entry = item.value();
        auto text_of = [&](const char* field) {
            return entry.is_object() && entry.contains(field) && entry[field].is_string()
                       ? entry[field].get<std::string>()
                       : std::string();
        };
        std::string shorturl = text_of("shorturl");
        // The keyword is the short URL's path.
        auto scheme = shorturl.find("://");
        std::string_view path = shorturl;
        if (scheme != std::string::npos) {
            path.remove_prefix(scheme + 3);
            auto slash = path.find('/');
            path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
        }
        if (path.empty() || text_of("url").empty()) {
            out.problems.push_back(
                {n, item.key() + ": needs \"shorturl\" (with its keyword) and \"url\""});
            continue;
        }
        out.links.push_back({n, std::string(path), text_of("url"), text_of("title")});
    }
    return out;
}

// A tool's slug as refgate's: lower case, anything but [a-z0-9] a hyphen, none doubled or at
// either end, at most 64 characters.
std::string refgate_slug(std::string_view slug) {
    std::string out;
    for (char c : lower(slug)) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (ok) {
            out.push_back(c);
        } else if (!out.empty() && out.back() != '-') {
            out.push_back('-');
        }
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    if (out.size() > 64) out.resize(64);
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out;
}

struct UrlParts {
    std::string host;        // lower case
    std::string_view query;  // without '?', up to '#'
};

std::optional<UrlParts> url_parts(std::string_view url) {
    auto scheme = url.find("://");
    if (scheme == std::string_view::npos) return std::nullopt;
    std::string_view rest = url.substr(scheme + 3);
    std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
    if (auto at = authority.rfind('@'); at != std::string_view::npos)
        authority.remove_prefix(at + 1);
    std::string_view host = authority.substr(0, authority.find(':'));
    if (host.empty()) return std::nullopt;
    UrlParts parts{lower(host), {}};
    auto q = url.find('?');
    if (q != std::string_view::npos) {
        std::string_view query = url.substr(q + 1);
        parts.query = query.substr(0, query.find('#'));
    }
    return parts;
}

}  // namespace

std::optional<ExportTool> parse_export_tool(std::string_view name) {
    if (name == "prettylinks" || name == "pretty-links") return ExportTool::pretty_links;
    if (name == "thirstyaffiliates") return ExportTool::thirstyaffiliates;
    if (name == "shlink") return ExportTool::shlink;
    if (name == "yourls") return ExportTool::yourls;
    return std::nullopt;
}

std::string_view export_tool_name(ExportTool tool) {
    switch (tool) {
        case ExportTool::pretty_links:
            return "Pretty Links";
        case ExportTool::thirstyaffiliates:
            return "ThirstyAffiliates";
        case ExportTool::shlink:
            return "Shlink";
        case ExportTool::yourls:
            return "YOURLS";
    }
    return "";
}

ToolExport read_tool_export(ExportTool tool, std::string_view text) {
    return tool == ExportTool::yourls ? read_yourls(text) : read_csv_export(tool, text);
}

const std::vector<std::string>& referral_parameters() {
    static const std::vector<std::string> names{
        "tag",    "ref",   "aff",      "affid", "aff_id",  "affiliate", "affiliate_id",
        "ref_id", "refid", "referral", "via",   "partner", "a_aid",     "irgwc"};
    return names;
}

PartnerMap parse_partner_map(const nlohmann::json& map, std::vector<std::string>& problems) {
    PartnerMap out;
    if (!map.is_object()) {
        problems.push_back("the partner map must be a JSON object from domain to partner");
        return out;
    }
    for (const auto& [domain, value] : map.items()) {
        PartnerChoice choice;
        if (value.is_string()) {
            choice.slug = value.get<std::string>();
        } else if (value.is_object() && value.contains("slug") && value["slug"].is_string()) {
            choice.slug = value["slug"].get<std::string>();
            for (auto [field, target] :
                 {std::pair{"name", &choice.name}, std::pair{"ref_param", &choice.ref_param},
                  std::pair{"ref_code", &choice.ref_code}}) {
                if (value.contains(field) && value[field].is_string())
                    *target = value[field].get<std::string>();
            }
        } else {
            problems.push_back(domain + ": must be a partner slug or {\"slug\", \"name\", ...}");
            continue;
        }
        if (choice.ref_param.empty() != choice.ref_code.empty()) {
            problems.push_back(domain + ": ref_param and ref_code go together");
            continue;
        }
        if (!domain::valid_slug(choice.slug)) {
            problems.push_back(domain + ": the slug '" + choice.slug +
                               "' must match [a-z0-9][a-z0-9-]{0,63}");
            continue;
        }
        // A partner is one registrable domain here: two domains of one partner would make two
        // partners of one slug.
        auto same = std::find_if(out.begin(), out.end(), [&](const auto& entry) {
            return entry.second.slug == choice.slug;
        });
        if (same != out.end()) {
            problems.push_back(domain + ": the slug '" + choice.slug + "' is " + same->first +
                               "'s already");
            continue;
        }
        out[lower(domain)] = std::move(choice);
    }
    return out;
}

std::string without_query_parameter(std::string_view url, std::string_view param) {
    // The fragment starts at the first '#', and a '?' after it is the fragment's.
    const auto hash = std::min(url.find('#'), url.size());
    const std::string_view fragment = url.substr(hash);
    auto q = url.substr(0, hash).find('?');
    if (q == std::string_view::npos) return std::string(url);
    std::string_view query = url.substr(q + 1, hash - q - 1);
    std::string kept;
    while (!query.empty()) {
        auto amp = query.find('&');
        std::string_view pair = query.substr(0, amp);
        query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
        // An empty pair ("a&&b", a trailing '&') carries nothing: dropped, so that what is left
        // reads the same when the parameter is removed again.
        if (pair.empty() || domain::percent_decode(pair.substr(0, pair.find('='))) == param)
            continue;
        if (!kept.empty()) kept.push_back('&');
        kept.append(pair);
    }
    std::string out(url.substr(0, q));
    if (!kept.empty()) out += "?" + kept;
    out.append(fragment);
    return out;
}

namespace {

// How often each (param, value) is in a partner's links' URLs.
using CodeCounts = std::map<std::pair<std::string, std::string>, std::size_t>;

// The partner a destination's registrable domain gets: from --partner-map, else the domain's
// first label ("amazon" of amazon.co.uk), or the whole domain when that slug is taken.
PlannedPartner new_partner(const std::string& domain, const PlanOptions& options,
                           std::set<std::string>& slugs_taken) {
    PlannedPartner p;
    p.domain = domain;
    if (auto chosen = options.partner_map.find(domain); chosen != options.partner_map.end()) {
        p.from_map = true;
        p.slug = chosen->second.slug;
        p.name = chosen->second.name;
        p.ref_param = chosen->second.ref_param;
        p.ref_code = chosen->second.ref_code;
    } else {
        p.slug = refgate_slug(domain.substr(0, domain.find('.')));
        if (slugs_taken.contains(p.slug)) p.slug = refgate_slug(domain);
        std::string base = refgate_slug(domain).substr(0, 56);
        while (!base.empty() && base.back() == '-') base.pop_back();
        for (int n = 2; slugs_taken.contains(p.slug); ++n) p.slug = base + "-" + std::to_string(n);
    }
    if (p.name.empty()) p.name = domain;
    slugs_taken.insert(p.slug);
    return p;
}

// Each usable link into plan.links and its partner (by registrable domain, in the order their
// first link comes) into plan.partners; the rest into plan.problems. Returns the partner of
// each planned link and each partner's referral codes.
std::pair<std::vector<std::size_t>, std::vector<CodeCounts>> group_links(const ToolExport& input,
                                                                         const PlanOptions& options,
                                                                         ImportPlan& plan) {
    std::map<std::string, std::size_t> by_domain;
    // The map's slugs are its domains' whatever order the links come in.
    std::set<std::string> slugs_taken;
    for (const auto& [domain, choice] : options.partner_map) slugs_taken.insert(choice.slug);
    std::set<std::string> link_slugs;
    std::vector<std::size_t> partner_of_link;
    std::vector<CodeCounts> codes;
    for (const auto& link : input.links) {
        std::string slug = refgate_slug(link.slug);
        if (slug.empty()) {
            plan.problems.push_back(
                {link.line, "the slug '" + link.slug + "' has no letter or digit"});
            continue;
        }
        if (!link_slugs.insert(slug).second) {
            plan.problems.push_back({link.line, "the slug '" + link.slug + "' becomes '" + slug +
                                                    "', which an earlier link has"});
            continue;
        }
        auto parts = url_parts(link.destination);
        // Only a host refgate accepts (an international name as punycode) names a partner: a
        // malformed one (".example", "a..b") would make a partner without a slug.
        std::string host = parts ? domain::canonical_domain(parts->host) : std::string();
        auto domain = host.empty() ? std::nullopt : options.suffixes.registrable_domain(host);
        if (!domain) {
            plan.problems.push_back({link.line, "the destination '" + link.destination +
                                                    "' has no registrable domain"});
            continue;
        }
        auto [it, made] = by_domain.try_emplace(*domain, plan.partners.size());
        if (made) {
            plan.partners.push_back(new_partner(*domain, options, slugs_taken));
            codes.emplace_back();
        }
        for (const auto& name : referral_parameters()) {
            if (auto value = domain::query_value(parts->query, name); value && !value->empty()) {
                ++codes[it->second][{name, *value}];
                break;
            }
        }
        plan.links.push_back(
            {link.line, link.slug, slug, plan.partners[it->second].slug, link.destination, false});
        partner_of_link.push_back(it->second);
    }
    return {std::move(partner_of_link), std::move(codes)};
}

// The code a partner is proposed: the most common referral parameter and value in its links
// (its own from --partner-map stays).
void propose_code(PlannedPartner& p, const CodeCounts& codes) {
    const std::pair<std::string, std::string>* best = nullptr;
    std::size_t best_count = 0;
    for (const auto& [code, count] : codes) {
        if (count > best_count) {
            best = &code;
            best_count = count;
        }
    }
    if (best == nullptr) return;
    p.found_param = best->first;
    p.found_code = best->second;
    p.links_with_code = best_count;
    for (const auto& [code, count] : codes) {
        if (code.first == p.found_param && code.second != p.found_code) p.links_other_code += count;
    }
    if (p.ref_param.empty()) {
        p.ref_param = p.found_param;
        p.ref_code = p.found_code;
    }
}

// The import document of the plan; a partner without a referral parameter is a problem.
Json plan_document(ImportPlan& plan) {
    Json partners = Json::array();
    for (const auto& p : plan.partners) {
        if (p.ref_param.empty()) {
            plan.problems.push_back(
                {0, "partner '" + p.slug + "' (" + p.domain +
                        "): no referral parameter in its URLs; give ref_param and ref_code for " +
                        p.domain + " in --partner-map"});
        }
        Json partner{{"slug", p.slug}, {"name", p.name}};
        if (!p.ref_param.empty()) {
            partner["ref_param"] = p.ref_param;
            partner["ref_code"] = p.ref_code;
        }
        partner["allowed_domains"] = Json::array({p.domain});
        partners.push_back(std::move(partner));
    }
    Json links = Json::array();
    for (const auto& l : plan.links) {
        links.push_back(
            Json{{"slug", l.slug}, {"partner", l.partner}, {"destination", l.destination}});
    }
    return Json{{"partners", std::move(partners)}, {"links", std::move(links)}};
}

}  // namespace

ImportPlan plan_tool_import(const ToolExport& input, const PlanOptions& options) {
    ImportPlan plan;
    plan.problems = input.problems;
    auto [partner_of_link, codes] = group_links(input, options, plan);
    for (std::size_t i = 0; i < plan.partners.size(); ++i) propose_code(plan.partners[i], codes[i]);
    // --lock-codes: the partner's code leaves the URLs that carry exactly it.
    for (std::size_t i = 0; options.lock_codes && i < plan.links.size(); ++i) {
        auto& link = plan.links[i];
        const auto& p = plan.partners[partner_of_link[i]];
        if (p.ref_param.empty()) continue;
        auto parts = url_parts(link.destination);
        if (!parts || domain::query_value(parts->query, p.ref_param) != p.ref_code) continue;
        link.destination = without_query_parameter(link.destination, p.ref_param);
        link.code_moved = true;
    }
    plan.document = plan_document(plan);
    return plan;
}

std::string plan_text(const ImportPlan& plan, ExportTool tool, bool lock_codes) {
    std::string out = "from " + std::string(export_tool_name(tool)) + ": " +
                      std::to_string(plan.links.size()) + " link(s) into " +
                      std::to_string(plan.partners.size()) + " partner(s)\n";
    for (const auto& p : plan.partners) {
        out += "partner " + p.slug + " (" + p.name + "): destinations on " + p.domain +
               (p.from_map ? " (named by --partner-map)" : "") + "\n";
        if (!p.found_param.empty()) {
            out += "  proposed locked code: " + p.found_param + "=" + p.found_code + " (in " +
                   std::to_string(p.links_with_code) + " link URL(s)";
            if (p.links_other_code > 0)
                out += "; " + std::to_string(p.links_other_code) + " carry another " +
                       p.found_param + " and keep it";
            out += lock_codes ? "); moved out of the URLs into the partner\n"
                              : "); --lock-codes moves it out of the URLs into the partner\n";
        }
        if (!p.ref_param.empty() && (p.ref_param != p.found_param || p.ref_code != p.found_code))
            out += "  code from --partner-map: " + p.ref_param + "=" + p.ref_code + "\n";
    }
    for (const auto& l : plan.links) {
        out += "link " + l.tool_slug + (l.slug != l.tool_slug ? " -> " + l.slug : "") + " (" +
               l.partner + "): " + l.destination + (l.code_moved ? " [code moved]" : "") + "\n";
    }
    for (const auto& problem : plan.problems) {
        out += "not imported: " +
               (problem.line > 0 ? "line " + std::to_string(problem.line) + ": " : "") +
               problem.message + "\n";
    }
    out += "click history is not imported: refgate never had those readers' data\n";
    return out;
}

}  // namespace refgate::codec
