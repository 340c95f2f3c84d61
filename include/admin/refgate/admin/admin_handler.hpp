#pragma once

// The editors' JSON API under /api/v1 on the admin listener: bearer tokens with roles, ETag and
// If-Match, RFC 9457 problem answers. One instance serves every thread.

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "refgate/admin/admin_store.hpp"
#include "refgate/admin/failure_limiter.hpp"
#include "refgate/admin/stats_store.hpp"
#include "refgate/http/server.hpp"
#include "refgate/runtime/log_limiter.hpp"

namespace refgate::admin {

enum class Operation {
    list_partners,
    create_partner,
    get_partner,
    update_partner,
    delete_partner,
    partner_codes,
    list_links,
    create_link,
    get_link,
    update_link,
    delete_link,
    audit,
    list_tokens,
    create_token,
    revoke_token,
    list_disclosures,
    get_disclosure,
    put_disclosure,
    stats_link,
    stats_partner,
    stats_top,
};

struct Route {
    http::Method method;
    std::string_view method_name;  // "GET", as OpenAPI spells it in lower case
    std::string_view pattern;      // "/api/v1/partners/{slug}"; a {...} segment is a name
    Role min_role;
    Operation operation;
};

// Every route the handler serves; tests check each against api/openapi.json.
std::span<const Route> routes();

struct AdminOptions {
    std::size_t max_failures_per_minute = 20;   // per source address, then 429
    std::size_t max_tracked_addresses = 10000;  // failure counters kept in memory at most
    // Origins whose browsers may call the API (CORS); empty: same-origin only.
    std::vector<std::string> cors_origins;
    // Counts the calls answered 503 because the database was unreachable or busy past its bound.
    std::atomic<std::uint64_t>* unavailable = nullptr;
    std::size_t max_failures_per_second = 50;  // from all addresses together, then 429
    const MonotonicClock* clock = nullptr;     // for those limits; none: the steady clock
};

class AdminHandler final : public http::Handler {
  public:
    AdminHandler(std::unique_ptr<AdminStore> store, AdminOptions options = {},
                 std::unique_ptr<StatsStore> stats = nullptr);
    void handle(const http::Request& request, http::Response& response) override;
    bool may_block() const override { return true; }
    // The blocking pool was busy past its bound: the same problem answer as a database failure.
    void unavailable(const http::Request& request, http::Response& response) override;

  private:
    void serve(const http::Request& request, http::Response& response);
    // Answers 503 for a database failure; counts it, and logs at a bounded rate.
    void database_unavailable(http::Response& response, const char* error);

    std::unique_ptr<AdminStore> store_;
    std::unique_ptr<StatsStore> stats_;  // the /api/v1/stats routes; none: 503
    AdminOptions options_;
    FailureLimiter limiter_;
    LogLimiter failure_log_{std::chrono::seconds{10}};
};

}  // namespace refgate::admin
