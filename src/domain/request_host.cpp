#include "refgate/domain/request_host.hpp"

namespace refgate::domain {
namespace {

bool digits(std::string_view text) {
    for (char c : text) {
        if (c < '0' || c > '9') return false;
    }
    return true;
}

bool name_byte(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.';
}

bool literal_byte(char c) {
    return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') || c == ':' ||
           c == '.';
}

bool ascii_iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x + 32);
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y + 32);
        if (x != y) return false;
    }
    return true;
}

}  // namespace

std::string_view authority_host(std::string_view authority) {
    std::string_view host = authority;
    std::string_view port;
    if (!host.empty() && host.front() == '[') {
        auto close = host.find(']');
        if (close == std::string_view::npos) return {};
        port = host.substr(close + 1);
        host = host.substr(0, close + 1);
        if (host.size() < 3) return {};
        for (char c : host.substr(1, host.size() - 2)) {
            if (!literal_byte(c)) return {};
        }
        if (!port.empty() && port.front() != ':') return {};
    } else {
        if (auto colon = host.find(':'); colon != std::string_view::npos) {
            port = host.substr(colon);
            host = host.substr(0, colon);
        }
        if (!host.empty() && host.back() == '.') host.remove_suffix(1);
        for (char c : host) {
            if (!name_byte(c)) return {};
        }
    }
    if (!port.empty() && !digits(port.substr(1))) return {};
    if (host.size() > kMaxRequestHost) return {};
    return host;
}

std::string_view absolute_form_authority(std::string_view target) {
    auto colon = target.find("://");
    if (colon == std::string_view::npos) return {};
    auto scheme = target.substr(0, colon);
    if (!ascii_iequals(scheme, "http") && !ascii_iequals(scheme, "https")) return {};
    auto rest = target.substr(colon + 3);
    return rest.substr(0, rest.find_first_of("/?#"));
}

std::string_view lower_host(std::string_view host, std::array<char, kMaxRequestHost>& out) {
    if (host.size() > out.size()) return {};
    for (std::size_t i = 0; i < host.size(); ++i) {
        char c = host[i];
        out[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
    }
    return {out.data(), host.size()};
}

}  // namespace refgate::domain
