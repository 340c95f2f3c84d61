#include "refgate/domain/model.hpp"

namespace refgate {
namespace {

constexpr bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

bool valid_slug(std::string_view slug) {
    if (slug.empty() || slug.size() > kMaxSlugLength || !is_lower_alnum(slug.front())) return false;
    for (char c : slug) {
        if (!is_lower_alnum(c) && c != '-') return false;
    }
    return true;
}

bool valid_param_name(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    for (char c : name) {
        bool ok = is_lower_alnum(c) || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '-';
        if (!ok) return false;
    }
    return true;
}

std::string_view to_string(LinkStatus status) {
    return status == LinkStatus::active ? "active" : "disabled";
}

std::optional<LinkStatus> parse_link_status(std::string_view text) {
    if (text == "active") return LinkStatus::active;
    if (text == "disabled") return LinkStatus::disabled;
    return std::nullopt;
}

nlohmann::ordered_json partner_to_json(const Partner& partner) {
    nlohmann::ordered_json extras = nlohmann::ordered_json::object();
    for (const auto& [key, value] : partner.extra_params) extras[key] = value;
    return {{"slug", partner.slug},
            {"name", partner.name},
            {"ref_param", partner.ref_param},
            {"ref_code", partner.ref_code},
            {"allowed_domains", partner.allowed_domains},
            {"extra_params", extras},
            {"active", partner.active}};
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
    return j;
}

}  // namespace refgate
