#pragma once

// What a token may do within its role (issue 46): each route of the API needs a scope as well as
// a role (the table is the resource registry's, src/admin/http/registry.cpp), and a token may be
// held to some partners' links or some domains' links.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace refgate::admin {

enum class Role;

// A set of scopes, one bit each.
using Scopes = std::uint16_t;

namespace scope {
inline constexpr Scopes none = 0;
inline constexpr Scopes links_read = 1 << 0;
inline constexpr Scopes links_write = 1 << 1;
inline constexpr Scopes partners_read = 1 << 2;
inline constexpr Scopes partners_write = 1 << 3;
inline constexpr Scopes stats_read = 1 << 4;
inline constexpr Scopes earnings_read = 1 << 5;
inline constexpr Scopes disclosures_write = 1 << 6;
inline constexpr Scopes webhooks_write = 1 << 7;
inline constexpr Scopes users_write = 1 << 8;
inline constexpr Scopes all = (1 << 9) - 1;
}  // namespace scope

// The scopes' names in bit order: "links:read", ... "users:write".
std::vector<std::string_view> scope_names(Scopes scopes = scope::all);
// One scope by its name; nullopt when there is none.
std::optional<Scopes> parse_scope(std::string_view name);
// What a role allows, and so a token's scopes when none are given: viewer the reads (links,
// partners, stats, earnings), editor those and the writes of links, partners and disclosures,
// admin everything (webhooks and users too).
Scopes role_scopes(Role role);

// A token's restrictions: empty lists restrict nothing.
struct Reach {
    std::vector<std::string> partners;  // partner slugs
    std::vector<std::string> domains;   // hosts, lower case
    bool restricted() const { return !partners.empty() || !domains.empty(); }
    bool partner_allowed(std::string_view slug) const;
};

// THE ONE PLACE where a token's `domains` meet a link's domain. `link_domain` is the link's
// `domain` field (empty: the link has none, so it is on the default domain, whose host is
// `default_host`: today the host of REFGATE_PUBLIC_BASE_URL). Hosts compare case-insensitively as
// strings. True when the token has no domain restriction.
bool link_domain_allowed(const Reach& reach, std::string_view link_domain,
                         std::string_view default_host);

}  // namespace refgate::admin
