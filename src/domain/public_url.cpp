#include "refgate/domain/public_url.hpp"

#include "refgate/domain/request_host.hpp"

namespace refgate::domain {
namespace {

constexpr std::string_view kGoPath = "/go/";

// The offset where the authority of `url` begins (after "scheme://"; 0 without one).
std::size_t authority_begin(std::string_view url) {
    auto scheme = url.find("://");
    return scheme == std::string_view::npos ? 0 : scheme + 3;
}

}  // namespace

std::string public_link_url(std::string_view base_url, std::string_view host,
                            std::string_view slug) {
    if (base_url.empty()) return {};
    std::string url;
    url.reserve(base_url.size() + host.size() + kGoPath.size() + slug.size());
    if (host.empty()) {
        url.append(base_url);
    } else {
        std::size_t begin = authority_begin(base_url);
        std::size_t path = base_url.find('/', begin);
        url.append(base_url.substr(0, begin)).append(host);
        if (path != std::string_view::npos) url.append(base_url.substr(path));
    }
    url.append(kGoPath).append(slug);
    return url;
}

std::string public_base_host(std::string_view base_url) {
    if (base_url.find("://") == std::string_view::npos) return {};
    std::string_view authority = base_url.substr(authority_begin(base_url));
    authority = authority.substr(0, authority.find_first_of("/?#"));
    std::string host(authority_host(authority));
    for (char& c : host) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
    return host;
}

}  // namespace refgate::domain
