#include "refgate/http/request.hpp"

namespace refgate::http {

std::optional<std::string_view> absolute_form_path(std::string_view target) {
    auto colon = target.find("://");
    if (colon == std::string_view::npos) return std::nullopt;
    auto scheme = target.substr(0, colon);
    if (!iequals(scheme, "http") && !iequals(scheme, "https")) return std::nullopt;
    auto rest = target.substr(colon + 3);
    auto end = rest.find_first_of("/?#");
    if (end == 0 || rest.empty()) return std::nullopt;  // no host
    if (end == std::string_view::npos) return std::string_view{};
    return rest.substr(end);
}

std::string_view Request::header(std::string_view name) const {
    if (fields == nullptr) return {};
    for (const auto& f : *fields) {
        if (iequals(f.name, name)) return f.value;
    }
    return {};
}

bool Request::has_header(std::string_view name) const {
    if (fields == nullptr) return false;
    for (const auto& f : *fields) {
        if (iequals(f.name, name)) return true;
    }
    return false;
}

}  // namespace refgate::http
