// The admin API's view of the link-health checker: reads from PostgreSQL, and a check now (on the
// admin API's blocking pool, never an I/O thread), with the schedule's confirmation rule.

#include "refgate/admin/admin_store.hpp"
#include "refgate/linkcheck/checker.hpp"
#include "services.hpp"

namespace refgate::app {
namespace {

class CheckerApi final : public admin::LinkHealthService {
  public:
    CheckerApi(Shared& shared) : shared_(shared) {}

    std::optional<nlohmann::json> health(const std::string& slug) override {
        try {
            return linkcheck::read_health(shared_.config.database_url, slug);
        } catch (const std::exception& e) {
            throw admin::StoreError(e.what());
        }
    }

    std::optional<nlohmann::json> check(const std::string& slug) override {
        auto snapshot = shared_.snapshots.current();
        if (!snapshot) return std::nullopt;
        const config::Config& c = shared_.config;
        auto now = std::chrono::floor<std::chrono::seconds>(shared_.clock.now());
        auto targets = linkcheck::check_targets(*snapshot, now, slug);
        if (targets.empty()) return std::nullopt;
        // The process's one pace: with the schedule's checks, one request per gap to a host.
        linkcheck::HostPace& pace = shared_.link_pace;
        auto fetcher = linkcheck::make_curl_fetcher(
            linkcheck::fetcher_options(c.linkcheck, REFGATE_VERSION, &pace.stopping()));
        try {
            auto store = linkcheck::make_pg_health_store(c.database_url);
            linkcheck::LinkChecker checker(
                *fetcher, *store, shared_.clock, c.linkcheck.confirm_after,
                [&](const std::string& host) { pace.wait(host); }, &shared_.link_health,
                &pace.stopping());
            for (const auto& target : targets) checker.check(target);
            return linkcheck::read_health(c.database_url, slug);
        } catch (const admin::StoreError&) {
            throw;
        } catch (const std::exception& e) {
            throw admin::StoreError(e.what());
        }
    }

  private:
    Shared& shared_;
};

}  // namespace

std::shared_ptr<admin::LinkHealthService> make_link_health_api(Shared& shared) {
    return std::make_shared<CheckerApi>(shared);
}

}  // namespace refgate::app
