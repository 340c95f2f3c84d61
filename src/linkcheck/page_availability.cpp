// The schema.org availability a product page states, read without a full HTML parser: JSON-LD
// blocks are parsed as JSON and searched for "availability"; microdata is an
// itemprop="availability" tag whose href or content names the value.

#include "refgate/linkcheck/page_availability.hpp"

#include <nlohmann/json.hpp>

#include "refgate/domain/ascii.hpp"

namespace refgate::linkcheck {
namespace {

constexpr std::string_view kUnavailable[] = {"OutOfStock", "Discontinued", "SoldOut"};

std::optional<std::string> unavailable_value(std::string_view text) {
    for (auto word : kUnavailable) {
        if (text.ends_with(word) &&
            (text.size() == word.size() || text[text.size() - word.size() - 1] == '/' ||
             text[text.size() - word.size() - 1] == ':')) {
            return std::string(word);
        }
    }
    return std::nullopt;
}

using domain::ascii::lowered;

// Depth-bounded: a page cannot make the checker recurse without end.
std::optional<std::string> search_json(const nlohmann::json& node, int depth) {
    if (depth > 32) return std::nullopt;
    if (node.is_object()) {
        if (auto it = node.find("availability"); it != node.end()) {
            if (it->is_string()) {
                if (auto v = unavailable_value(it->get_ref<const std::string&>())) return v;
            } else if (it->is_object() && it->contains("@id") && (*it)["@id"].is_string()) {
                if (auto v = unavailable_value((*it)["@id"].get_ref<const std::string&>()))
                    return v;
            }
        }
    }
    if (node.is_object() || node.is_array()) {
        for (const auto& child : node) {
            if (auto v = search_json(child, depth + 1)) return v;
        }
    }
    return std::nullopt;
}

std::optional<std::string> json_ld(std::string_view html, std::string_view folded) {
    std::size_t at = 0;
    while ((at = folded.find("application/ld+json", at)) != std::string_view::npos) {
        auto open_end = folded.find('>', at);
        if (open_end == std::string_view::npos) break;
        auto close = folded.find("</script", open_end);
        if (close == std::string_view::npos) break;
        auto doc =
            nlohmann::json::parse(html.substr(open_end + 1, close - open_end - 1), nullptr, false);
        if (!doc.is_discarded()) {
            if (auto v = search_json(doc, 0)) return v;
        }
        at = close;
    }
    return std::nullopt;
}

// The value of attribute `name` within one tag's text, quoted with " or '.
std::string_view attribute(std::string_view tag, std::string_view folded_tag,
                           std::string_view name) {
    for (std::size_t at = folded_tag.find(name); at != std::string_view::npos;
         at = folded_tag.find(name, at + 1)) {
        std::size_t eq = at + name.size();
        if (eq + 1 >= tag.size() || tag[eq] != '=') continue;
        char quote = tag[eq + 1];
        if (quote != '"' && quote != '\'') continue;
        auto end = tag.find(quote, eq + 2);
        if (end == std::string_view::npos) return {};
        return tag.substr(eq + 2, end - eq - 2);
    }
    return {};
}

std::optional<std::string> microdata(std::string_view html, std::string_view folded) {
    std::size_t at = 0;
    while ((at = folded.find("itemprop=", at)) != std::string_view::npos) {
        auto begin = folded.rfind('<', at);
        auto end = folded.find('>', at);
        if (begin == std::string_view::npos || end == std::string_view::npos) break;
        auto tag = html.substr(begin, end - begin);
        auto folded_tag = folded.substr(begin, end - begin);
        auto prop = attribute(tag, folded_tag, "itemprop");
        if (prop == "availability") {
            for (auto name : {"href", "content"}) {
                if (auto v = unavailable_value(attribute(tag, folded_tag, name))) return v;
            }
        }
        at = end;
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> unavailable_marker(std::string_view html) {
    std::string folded = lowered(html);
    if (auto v = json_ld(html, folded)) return v;
    return microdata(html, folded);
}

}  // namespace refgate::linkcheck
