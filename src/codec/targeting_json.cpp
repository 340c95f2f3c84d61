#include "targeting_json.hpp"

#include <set>
#include <stdexcept>

#include "refgate/domain/targeting.hpp"

namespace refgate::codec {
namespace {

// A list of strings, e.g. a rule's "country"; false (reported) when it is not one.
bool string_list(const nlohmann::ordered_json& value, const std::string& field,
                 std::vector<std::string>& out, const IssueSink& add, bool lower_case = false) {
    if (!value.is_array()) {
        add(field, "must be a list of strings");
        return false;
    }
    for (const auto& item : value) {
        if (!item.is_string()) {
            add(field, "must be a list of strings");
            return false;
        }
        std::string text = item.get<std::string>();
        if (lower_case) {
            for (char& c : text) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
        }
        out.push_back(std::move(text));
    }
    return true;
}

void read_split(const nlohmann::ordered_json& split, const std::string& at, domain::LinkRule& rule,
                const IssueSink& add) {
    if (!split.is_array() || split.empty()) {
        add(at + "split", "must be a list of {weight, destination, partner?}");
        return;
    }
    for (std::size_t b = 0; b < split.size(); ++b) {
        const auto& item = split[b];
        std::string field = at + "split[" + std::to_string(b) + "].";
        domain::SplitBranch branch;
        if (!item.is_object()) {
            add(at + "split", "must be a list of {weight, destination, partner?}");
            return;
        }
        for (const auto& [key, value] : item.items()) {
            if (key == "weight" && value.is_number_unsigned() &&
                value.get<std::uint64_t>() <= domain::kMaxWeight) {
                branch.weight = value.get<std::uint32_t>();
            } else if (key == "weight") {
                add(field + "weight", "must be a whole number from 1 to 1000000");
            } else if ((key == "destination" || key == "partner") && value.is_string()) {
                (key == "partner" ? branch.partner : branch.destination) = value.get<std::string>();
            } else if (key == "destination" || key == "partner") {
                add(field + key, "must be a string");
            } else {
                add(field + key, "is not a known field");
            }
        }
        if (branch.destination.empty()) add(field + "destination", "is required");
        rule.split.push_back(std::move(branch));
    }
}

}  // namespace

void read_rules(const nlohmann::ordered_json& rules, std::vector<domain::LinkRule>& out,
                const IssueSink& add) {
    if (!rules.is_array() || rules.size() > domain::kMaxRules) {
        add("rules", "must be a list of at most 32 rules");
        return;
    }
    for (std::size_t i = 0; i < rules.size(); ++i) {
        std::string at = "rules[" + std::to_string(i) + "].";
        const auto& item = rules[i];
        if (!item.is_object()) {
            add("rules[" + std::to_string(i) + "]", "must be an object");
            continue;
        }
        domain::LinkRule rule;
        for (const auto& [key, value] : item.items()) {
            if (key == "country") {
                string_list(value, at + key, rule.country, add);
            } else if (key == "platform") {
                string_list(value, at + key, rule.platform, add);
            } else if (key == "language") {
                string_list(value, at + key, rule.language, add, true);
            } else if (key == "split") {
                read_split(value, at, rule, add);
            } else if ((key == "partner" || key == "destination") && value.is_string()) {
                (key == "partner" ? rule.partner : rule.destination) = value.get<std::string>();
            } else if (key == "partner" || key == "destination") {
                add(at + key, "must be a string");
            } else {
                add(at + key, "is not a known field");
            }
        }
        out.push_back(std::move(rule));
    }
}

namespace {

// {"family": "amazon", "fallbacks": {"AT": "DE", "NZ": "AU"}}
domain::CountryGroup read_country_group(const nlohmann::ordered_json& item, const IssueSink& add) {
    domain::CountryGroup g;
    for (const auto& [key, value] : item.items()) {
        if (key != "family" && key != "fallbacks") add(key, "is not a known field");
    }
    auto family = item.find("family");
    if (family == item.end() || !family->is_string()) {
        add("family", "is required and must be a string");
    } else {
        g.family = family->get<std::string>();
    }
    auto fallbacks = item.find("fallbacks");
    if (fallbacks == item.end() || !fallbacks->is_object()) {
        add("fallbacks", "must be an object of country codes to country codes");
        return g;
    }
    for (const auto& [country, fallback] : fallbacks->items()) {
        if (!fallback.is_string()) {
            add("fallbacks", "value of '" + country + "' must be a country code");
            continue;
        }
        g.fallbacks.push_back({country, fallback.get<std::string>()});
    }
    for (const auto& issue : domain::validate_country_group(g)) {
        if (issue.field == "family") {
            add("family", issue.message);
        } else {
            add("fallbacks", issue.field + " " + issue.message);
        }
    }
    return g;
}

}  // namespace

void read_country_groups(const nlohmann::ordered_json& groups,
                         std::vector<domain::CountryGroup>& out, std::vector<ImportIssue>& issues) {
    if (!groups.is_array()) {
        issues.push_back({"document", "country_groups", "must be a list"});
        return;
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const auto& item = groups[i];
        std::string name = "country_groups[" + std::to_string(i) + "]";
        if (!item.is_object()) {
            issues.push_back({name, "", "must be an object"});
            continue;
        }
        auto add = [&](const std::string& field, const std::string& message) {
            issues.push_back({name, field, message});
        };
        domain::CountryGroup g = read_country_group(item, add);
        if (!g.family.empty() && !seen.insert(g.family).second) add("family", "appears twice");
        out.push_back(std::move(g));
    }
}

nlohmann::ordered_json rule_to_json(const domain::LinkRule& rule) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    if (!rule.country.empty()) j["country"] = rule.country;
    if (!rule.platform.empty()) j["platform"] = rule.platform;
    if (!rule.language.empty()) j["language"] = rule.language;
    if (!rule.partner.empty()) j["partner"] = rule.partner;
    if (!rule.destination.empty()) j["destination"] = rule.destination;
    if (!rule.split.empty()) {
        j["split"] = nlohmann::ordered_json::array();
        for (const auto& b : rule.split) {
            nlohmann::ordered_json branch{{"weight", b.weight}, {"destination", b.destination}};
            if (!b.partner.empty()) branch["partner"] = b.partner;
            j["split"].push_back(std::move(branch));
        }
    }
    return j;
}

nlohmann::ordered_json country_group_to_json(const domain::CountryGroup& group) {
    nlohmann::ordered_json fallbacks = nlohmann::ordered_json::object();
    for (const auto& f : group.fallbacks) fallbacks[f.country] = f.fallback;
    return {{"family", group.family}, {"fallbacks", fallbacks}};
}

std::vector<domain::LinkRule> rules_from_json(const nlohmann::ordered_json& rules) {
    std::vector<domain::LinkRule> out;
    std::string problem;
    read_rules(rules, out, [&](const std::string& field, const std::string& message) {
        if (problem.empty()) problem = field + " " + message;
    });
    if (!problem.empty()) throw std::runtime_error("rules: " + problem);
    return out;
}

std::vector<domain::CountryGroup> country_groups_from_json(const nlohmann::ordered_json& groups) {
    std::vector<domain::CountryGroup> out;
    std::vector<ImportIssue> issues;
    read_country_groups(groups, out, issues);
    if (!issues.empty()) throw std::runtime_error(issues.front().to_string());
    return out;
}

}  // namespace refgate::codec
