#include "refgate/domain/public_suffix.hpp"

#include <algorithm>
#include <vector>

namespace refgate::domain {
namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; });
    return out;
}

// Where each label of `host` starts: "a.b.c" -> 0, 2, 4.
std::vector<std::size_t> label_starts(std::string_view host) {
    std::vector<std::size_t> starts{0};
    for (std::size_t i = 0; i < host.size(); ++i) {
        if (host[i] == '.') starts.push_back(i + 1);
    }
    return starts;
}

bool ip_address(std::string_view host) {
    if (host.find(':') != std::string_view::npos) return true;  // IPv6
    return !host.empty() && std::all_of(host.begin(), host.end(),
                                        [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

}  // namespace

PublicSuffixList::PublicSuffixList(std::string_view text) {
    while (!text.empty()) {
        auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        // A rule is the line's first word; the rest of the line is ignored.
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        line = line.substr(0, line.find_first_of(" \t\r"));
        if (line.empty() || line.starts_with("//")) continue;
        if (line.starts_with("!")) {
            exceptions_.insert(lower(line.substr(1)));
        } else if (line.starts_with("*.")) {
            wildcards_.insert(lower(line.substr(2)));
        } else {
            rules_.insert(lower(line));
        }
    }
}

std::optional<std::string> PublicSuffixList::registrable_domain(std::string_view host) const {
    if (host.ends_with('.')) host.remove_suffix(1);
    if (host.empty() || ip_address(host)) return std::nullopt;
    auto starts = label_starts(host);
    // The public suffix is the longest matching rule; an exception rule's suffix is the rule
    // without its first label. Index i: the suffix starts at label i.
    std::size_t suffix = starts.size() - 1;  // the implicit rule "*": the last label
    for (std::size_t i = 0; i < starts.size(); ++i) {
        std::string candidate(host.substr(starts[i]));
        if (exceptions_.contains(candidate)) {
            suffix = i + 1;
            break;
        }
        if (rules_.contains(candidate)) {
            suffix = i;
            break;
        }
        if (i + 1 < starts.size() && wildcards_.contains(std::string(host.substr(starts[i + 1])))) {
            suffix = i;
            break;
        }
    }
    if (suffix == 0 || suffix >= starts.size()) return std::nullopt;  // the host is a suffix
    return std::string(host.substr(starts[suffix - 1]));
}

}  // namespace refgate::domain
