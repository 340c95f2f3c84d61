#include "refgate/domain/model.hpp"

#include <array>

namespace refgate::domain {
namespace {

constexpr bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

bool valid_slug(std::string_view slug) {
    // A table lookup a byte: every click's path is checked.
    static constexpr auto kSlugBytes = [] {
        std::array<bool, 256> table{};
        for (int c = 0; c < 256; ++c)
            table[static_cast<std::size_t>(c)] = is_lower_alnum(static_cast<char>(c)) || c == '-';
        return table;
    }();
    if (slug.empty() || slug.size() > kMaxSlugLength || !is_lower_alnum(slug.front())) return false;
    bool valid = true;
    for (char c : slug) valid &= kSlugBytes[static_cast<unsigned char>(c)];
    return valid;
}

std::vector<std::string> branches_to(const Link& link, std::string_view partner) {
    std::vector<std::string> branches;
    if (link.partner == partner) branches.emplace_back("default");
    for (std::size_t i = 0; i < link.rules.size(); ++i) {
        const LinkRule& rule = link.rules[i];
        std::string name = "rules[" + std::to_string(i) + "]";
        if (rule.partner == partner) branches.push_back(name);
        for (std::size_t j = 0; j < rule.split.size(); ++j) {
            if (rule.split[j].partner == partner)
                branches.push_back(name + ".split[" + std::to_string(j) + "]");
        }
    }
    return branches;
}

bool fallback_worthy(std::string_view state) {
    return state == "broken" || state == "unavailable" || state == "code_dropped";
}

bool serving_fallback(const Link& link) {
    if (!link.auto_fallback || !link.fallback) return false;
    for (const auto& s : link.fallback_switches) {
        if (s.branch == "default") return true;
    }
    return false;
}

bool valid_param_name(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    for (char c : name) {
        bool ok = is_lower_alnum(c) || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '-';
        if (!ok) return false;
    }
    return true;
}

std::string link_key(const Link& link) {
    return link.domain.empty() ? link.slug : link.domain + "/" + link.slug;
}

std::string_view to_string(LinkStatus status) {
    return status == LinkStatus::active ? "active" : "disabled";
}

std::optional<LinkStatus> parse_link_status(std::string_view text) {
    if (text == "active") return LinkStatus::active;
    if (text == "disabled") return LinkStatus::disabled;
    return std::nullopt;
}

}  // namespace refgate::domain
