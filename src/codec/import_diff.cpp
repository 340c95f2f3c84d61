#include "refgate/codec/import_diff.hpp"

#include <algorithm>
#include <charconv>
#include <map>

#include "refgate/codec/disclosure_json.hpp"
#include "refgate/codec/links_csv.hpp"

namespace refgate::codec {
namespace {

using Json = nlohmann::ordered_json;

// Files each incoming entity as created, changed or unchanged against the stored one by slug.
class Differ {
  public:
    explicit Differ(ImportDiff& diff) : diff_(diff) {}

    void add(const char* entity, const std::string& slug, const Json* before, Json after) {
        if (before == nullptr) {
            diff_.created.push_back({entity, slug, nullptr, std::move(after)});
        } else if (*before != after) {
            diff_.changed.push_back({entity, slug, *before, std::move(after)});
        } else {
            ++diff_.unchanged;
        }
    }

  private:
    ImportDiff& diff_;
};

template <typename T, typename Key, typename Shape>
std::map<std::string, Json> by_key(const std::vector<T>& items, Key key, Shape shape) {
    std::map<std::string, Json> map;
    for (const auto& item : items) map.emplace(key(item), shape(item));
    return map;
}

const Json* find(const std::map<std::string, Json>& map, const std::string& key) {
    auto it = map.find(key);
    return it == map.end() ? nullptr : &it->second;
}

std::string disclosure_key(const domain::Disclosure& d) { return d.key + "/" + d.locale; }

// "links[3] (x)" -> {"links", 3, "x"}; "document" -> {"document", none, ""}.
struct EntryName {
    std::string array;
    std::optional<std::size_t> index;
    std::string slug;
};

EntryName parse_entry(const std::string& entry) {
    EntryName name;
    auto open = entry.find('[');
    if (open == std::string::npos) {
        name.array = entry;
        return name;
    }
    name.array = entry.substr(0, open);
    std::size_t index = 0;
    auto close = entry.find(']', open);
    if (close != std::string::npos &&
        std::from_chars(entry.data() + open + 1, entry.data() + close, index).ec == std::errc{})
        name.index = index;
    auto paren = entry.find(" (", open);
    if (paren != std::string::npos && entry.ends_with(")"))
        name.slug = entry.substr(paren + 2, entry.size() - paren - 3);
    return name;
}

std::string entity_of(const std::string& array) {
    if (array == "partners") return "partner";
    if (array == "links" || array == "stored links") return "link";
    if (array == "disclosures") return "disclosure";
    return array;
}

// A refused entity is neither created nor changed: the diff shows what an import would apply.
bool refused_entity(const ImportChange& c, const std::vector<ImportRefusal>& refused) {
    return std::any_of(refused.begin(), refused.end(), [&](const ImportRefusal& r) {
        return r.entity == c.entity && r.slug == c.slug;
    });
}

Json change_json(const ImportChange& c, bool with_before) {
    Json j{{"entity", c.entity}, {"slug", c.slug}};
    if (with_before) j["before"] = c.before;
    j["after"] = c.after;
    return j;
}

}  // namespace

ImportDiff diff_import(const ImportDocument& incoming, const StoredEntities& stored) {
    ImportDiff diff;
    Differ differ(diff);
    auto partners = by_key(
        stored.partners, [](const domain::Partner& p) { return p.slug; }, partner_to_json);
    for (const auto& p : incoming.partners)
        differ.add("partner", p.slug, find(partners, p.slug), partner_to_json(p));
    auto links = by_key(
        stored.links, [](const domain::Link& l) { return domain::link_key(l); }, link_to_json);
    for (const auto& l : incoming.links)
        differ.add("link", domain::link_key(l), find(links, domain::link_key(l)), link_to_json(l));
    auto disclosures = by_key(stored.disclosures, disclosure_key, disclosure_to_json);
    for (const auto& d : incoming.disclosures) {
        std::string key = disclosure_key(d);
        differ.add("disclosure", key, find(disclosures, key), disclosure_to_json(d));
    }
    return diff;
}

ImportRefusal refusal_of(const ImportIssue& issue, const std::vector<std::size_t>& csv_lines) {
    EntryName name = parse_entry(issue.entry);
    ImportRefusal refusal{entity_of(name.array), name.slug, issue.field, issue.message, {}};
    if (name.array == "stored links")
        refusal.message = "a stored link of a changed partner: " + refusal.message;
    if (name.array == "links" && name.index && *name.index < csv_lines.size())
        refusal.line = csv_lines[*name.index];
    return refusal;
}

ImportInput read_import_text(std::string_view text, bool csv) {
    ImportInput input;
    if (!csv) {
        try {
            input.document = Json::parse(text);
        } catch (const nlohmann::json::parse_error& e) {
            input.json_error = e.what();
        }
        return input;
    }
    LinksCsv parsed = parse_links_csv(text);
    input.document = std::move(parsed.document);
    input.csv_lines = std::move(parsed.lines);
    for (auto& p : parsed.problems)
        input.refused.push_back({"link", "", "", std::move(p.message), p.line});
    return input;
}

std::vector<ImportRefusal> import_refusals(const ImportInput& input,
                                           const std::vector<ImportIssue>& issues) {
    std::vector<ImportRefusal> refused = input.refused;
    for (const auto& issue : issues) refused.push_back(refusal_of(issue, input.csv_lines));
    return refused;
}

Json import_result_json(const ImportDiff& diff, const std::vector<ImportRefusal>& refused,
                        bool dry_run, bool applied) {
    Json created = Json::array();
    for (const auto& c : diff.created) {
        if (!refused_entity(c, refused)) created.push_back(change_json(c, false));
    }
    Json changed = Json::array();
    for (const auto& c : diff.changed) {
        if (!refused_entity(c, refused)) changed.push_back(change_json(c, true));
    }
    Json refusals = Json::array();
    for (const auto& r : refused) {
        Json j{{"entity", r.entity}, {"slug", r.slug}, {"field", r.field}, {"message", r.message}};
        if (r.line) j["line"] = *r.line;
        refusals.push_back(std::move(j));
    }
    return Json{{"dry_run", dry_run}, {"applied", applied},          {"created", created},
                {"changed", changed}, {"unchanged", diff.unchanged}, {"refused", refusals}};
}

std::string import_result_text(const ImportDiff& diff, const std::vector<ImportRefusal>& refused) {
    std::string out;
    for (const auto& c : diff.created) {
        if (!refused_entity(c, refused)) out += "+ " + c.entity + " " + c.slug + "\n";
    }
    for (const auto& c : diff.changed) {
        if (refused_entity(c, refused)) continue;
        out += "~ " + c.entity + " " + c.slug + "\n";
        for (const auto& [key, value] : c.after.items()) {
            Json was = c.before.contains(key) ? c.before[key] : Json();
            if (was != value)
                out += "    " + key + ": " + was.dump() + " -> " + value.dump() + "\n";
        }
    }
    out += "= " + std::to_string(diff.unchanged) + " unchanged\n";
    for (const auto& r : refused) {
        out += "! " + r.entity + (r.slug.empty() ? "" : " " + r.slug);
        if (r.line) out += " (line " + std::to_string(*r.line) + ")";
        out += ": " + (r.field.empty() ? "" : r.field + " ") + r.message + "\n";
    }
    return out;
}

}  // namespace refgate::codec
