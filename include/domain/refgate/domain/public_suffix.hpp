#pragma once

// Registrable domains by the Public Suffix List (publicsuffix.org; Debian's `publicsuffix`
// package installs it as /usr/share/publicsuffix/public_suffix_list.dat): the public suffix a
// host is under (com, co.uk, github.io) and one label more (amazon.co.uk). Imports group
// destinations into partners by it.

#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace refgate::domain {

inline constexpr std::string_view kPublicSuffixListPath =
    "/usr/share/publicsuffix/public_suffix_list.dat";

class PublicSuffixList {
  public:
    // The list's text: a rule per line (`com`, `*.ck`, `!www.ck`), `//` comments, blank lines.
    // Rules are read in lower case; the ICANN and private sections both count.
    explicit PublicSuffixList(std::string_view text);

    // The registrable domain of a lower-case ASCII host (punycode for international names):
    // its public suffix and the label before it. nullopt for a host that is a public suffix
    // itself, an IP address, or empty. A host under no rule is under the implicit rule `*`.
    std::optional<std::string> registrable_domain(std::string_view host) const;

    std::size_t size() const { return rules_.size() + wildcards_.size() + exceptions_.size(); }

  private:
    std::unordered_set<std::string> rules_;       // "co.uk"
    std::unordered_set<std::string> wildcards_;   // "ck" for "*.ck"
    std::unordered_set<std::string> exceptions_;  // "www.ck" for "!www.ck"
};

}  // namespace refgate::domain
