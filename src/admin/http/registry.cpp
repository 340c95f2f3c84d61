// The admin API's resources, in one list: a new resource is one entry here (its prefix, its
// route table and its factory), and the handler, the router and the route list follow.

#include <array>

#include "api.hpp"

namespace refgate::admin {
namespace {

ConsoleService* console_of(const ResourceContext& c) { return c.options.console.get(); }

constexpr std::array kResources{
    ResourceEntry{"/api/v1/partners", partner_routes,
                  [](const ResourceContext& c) {
                      return partners_resource(c.store, c.options.commissions.get());
                  }},
    ResourceEntry{"/api/v1/links", link_routes,
                  [](const ResourceContext& c) {
                      return links_resource(c.store, c.options.link_health.get(), c.stats, c.clock);
                  }},
    ResourceEntry{
        "/api/v1/placements", placement_routes,
        [](const ResourceContext& c) { return placements_resource(c.store, c.stats, c.clock); }},
    ResourceEntry{"/api/v1/audit", audit_routes,
                  [](const ResourceContext& c) { return audit_resource(c.store); }},
    ResourceEntry{"/api/v1/tokens", token_routes,
                  [](const ResourceContext& c) { return tokens_resource(c.store); }},
    ResourceEntry{"/api/v1/disclosures", disclosure_routes,
                  [](const ResourceContext& c) { return disclosures_resource(c.store); }},
    ResourceEntry{"/api/v1/stats", stats_routes,
                  [](const ResourceContext& c) {
                      return stats_resource(c.store, c.stats, c.clock, c.options.commissions.get());
                  }},
    ResourceEntry{"/api/v1/import", import_routes,
                  [](const ResourceContext& c) { return import_resource(c.store); }},
    ResourceEntry{"/api/v1/export", export_routes,
                  [](const ResourceContext& c) { return export_resource(c.store); }},
    ResourceEntry{"/api/v1/country-groups", country_group_routes,
                  [](const ResourceContext& c) { return country_groups_resource(c.store); }},
    ResourceEntry{
        "/api/v1/webhooks", webhook_routes,
        [](const ResourceContext& c) { return webhooks_resource(c.options.webhooks.get()); }},
    ResourceEntry{"/api/v1/domains", domain_routes,
                  [](const ResourceContext& c) { return domains_resource(c.store); }},
    ResourceEntry{"/api/v1/users", user_routes,
                  [](const ResourceContext& c) -> std::unique_ptr<Resource> {
                      if (console_of(c) == nullptr) return nullptr;
                      return users_resource(*console_of(c));
                  }},
    ResourceEntry{"/api/v1/session", session_routes,
                  [](const ResourceContext& c) -> std::unique_ptr<Resource> {
                      if (console_of(c) == nullptr) return nullptr;
                      return session_resource(*console_of(c), c.options);
                  },
                  true},
};

}  // namespace

std::span<const ResourceEntry> resource_registry() { return kResources; }

// Every operation's scope and extent (issue 46). No default: a new operation does not compile
// until it says what it needs, and the authorization matrix test reads this for every route.
RouteAccess route_access(Operation op) {
    using enum Operation;
    switch (op) {
        case list_partners:
            return {scope::partners_read, Extent::partners};
        case get_partner:
        case partner_codes:
            return {scope::partners_read, Extent::partner};
        case create_partner:
            return {scope::partners_write, Extent::new_partner};
        case update_partner:
        case delete_partner:
        case import_commissions:
        case rotate_postback_secret:
            return {scope::partners_write, Extent::partner};
        case list_links:
            return {scope::links_read, Extent::links};
        case get_link:
        case share_link:
        case qr_svg:
        case qr_png:
        case link_health:
        case link_placements:
            return {scope::links_read, Extent::link};
        case preview_link:
            return {scope::links_read, Extent::new_link};
        case get_placement:
            return {scope::links_read, Extent::whole};
        case create_link:
            return {scope::links_write, Extent::new_link};
        case update_link:
        case delete_link:
        case check_link_health:
            return {scope::links_write, Extent::link};
        case list_disclosures:
        case get_disclosure:
        case disclosure_versions:
        case preview_disclosure:
            return {scope::none, Extent::free};
        case put_disclosure:
            return {scope::disclosures_write, Extent::free};
        case stats_link:
            return {scope::stats_read, Extent::link};
        case stats_partner:
            return {scope::stats_read, Extent::partner};
        case stats_top:
        case stats_overview:
        case stats_live:
            return {scope::stats_read, Extent::whole};
        case stats_earnings:
        case stats_earnings_attention:
            return {scope::earnings_read, Extent::whole};
        case list_country_groups:
        case get_country_group:
            return {scope::partners_read, Extent::free};
        case put_country_group:
        case delete_country_group:
            return {scope::partners_write, Extent::whole};
        case import_document:
            return {scope::links_write | scope::partners_write, Extent::whole};
        case export_document:
            return {scope::links_read | scope::partners_read, Extent::whole};
        case audit:
        case list_tokens:
        case create_token:
        case revoke_token:
        case list_users:
        case create_user:
        case get_user:
        case update_user:
            return {scope::users_write, Extent::whole};
        // The branded domains: read as links are (what a token may reach is still held to its
        // domains), written by admins over every link at once.
        case list_domains:
        case get_domain:
            return {scope::links_read, Extent::free};
        case put_domain:
        case delete_domain:
            return {scope::links_write, Extent::whole};
        // A webhook receives every partner's and link's events: never for a restricted token.
        case list_webhooks:
        case create_webhook:
        case get_webhook:
        case update_webhook:
        case delete_webhook:
        case rotate_webhook_secret:
        case webhook_deliveries:
        case retry_webhook_delivery:
            return {scope::webhooks_write, Extent::whole};
        case sign_in:
        case read_session:
        case sign_out:
        case change_password:
            return {scope::none, Extent::free};
    }
    return {scope::all, Extent::whole};
}

}  // namespace refgate::admin
