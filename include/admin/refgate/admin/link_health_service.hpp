#pragma once

// What the admin API asks of the link-health checker: a link's health, and a check now. An
// interface so that the admin module needs no outbound client (the app wires the checker in).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace refgate::admin {

class LinkHealthService {
  public:
    virtual ~LinkHealthService() = default;
    // GET /api/v1/links/{slug}/health; nullopt when there is no such link.
    // Throws StoreError when PostgreSQL fails.
    virtual std::optional<nlohmann::json> health(const std::string& slug) = 0;
    // POST /api/v1/links/{slug}/health/check: checks the link now (on the blocking pool) and
    // answers its health; nullopt when no active link has the slug.
    virtual std::optional<nlohmann::json> check(const std::string& slug) = 0;
};

}  // namespace refgate::admin
