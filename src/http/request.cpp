#include "refgate/http/request.hpp"

namespace refgate::http {

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i];
        char y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

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
