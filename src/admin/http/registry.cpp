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

}  // namespace refgate::admin
