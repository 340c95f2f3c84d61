#include "support/test_database.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "refgate/admin/pg_admin_store.hpp"
#include "refgate/codec/import_diff.hpp"
#include "refgate/domain/destination.hpp"
#include "refgate/pg/database.hpp"
#include "support/service_process.hpp"
#include "support/test_env.hpp"

namespace refgate::test {

std::string with_database(const std::string& url, const std::string& database) {
    auto scheme = url.find("://");
    auto slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    auto query = url.find('?');
    std::string base = url.substr(0, slash);
    std::string rest = query == std::string::npos ? "" : url.substr(query);
    return base + "/" + database + rest;
}

TestDatabase::TestDatabase(bool migrated)
    : admin_url_(require_env("REFGATE_TEST_DATABASE_URL")), name_("refgate_" + random_id()) {
    url_ = with_database(admin_url_, name_);
    // test.sh migrates one database before the tests start; a migrated test database is a copy
    // of it, which costs PostgreSQL about what an empty one does, and the migrations' 0.3 CPU
    // seconds once per run instead of once per test database (tests/README.md).
    const char* migrated_template = std::getenv("REFGATE_TEST_TEMPLATE_DATABASE");
    bool copied = migrated && migrated_template != nullptr && *migrated_template != '\0';
    {
        pqxx::connection conn(admin_url_);
        pqxx::nontransaction tx(conn);
        tx.exec("CREATE DATABASE " + name_ +
                (copied ? " TEMPLATE " + conn.quote_name(migrated_template) : std::string()));
    }
    if (migrated && !copied) pg::migrate(url_);
}

TestDatabase::~TestDatabase() {
    try {
        connection_.reset();
        pqxx::connection conn(admin_url_);
        pqxx::nontransaction tx(conn);
        tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (const std::exception&) {
        // A leftover database in the throwaway test cluster harms nothing.
    }
}

pqxx::result TestDatabase::exec(const std::string& sql) {
    std::lock_guard lock(mutex_);
    for (int attempt = 1;; ++attempt) {
        if (!connection_ || !connection_->is_open())
            connection_ = std::make_unique<pqxx::connection>(url_);
        try {
            pqxx::work tx(*connection_);
            auto result = tx.exec(sql);
            tx.commit();
            return result;
        } catch (const pqxx::broken_connection&) {
            // Not an in-doubt commit (pqxx::in_doubt_error): the statement had no effect.
            connection_.reset();
            if (attempt == 2) throw;
        }
    }
}

std::string TestDatabase::scalar(const std::string& sql) {
    auto result = exec(sql);
    if (result.empty() || result[0][0].is_null()) return "";
    return result[0][0].c_str();
}

std::string demo_document(const std::vector<DemoLink>& links) {
    using Json = nlohmann::json;
    Json partner = {{"slug", "tailscale"},
                    {"name", "Tailscale"},
                    {"ref_param", "ref"},
                    {"ref_code", "picks42"},
                    {"allowed_domains", Json::array({"tailscale.com"})}};
    Json doc = {{"partners", Json::array({partner})}, {"links", Json::array()}};
    for (const auto& link : links) {
        std::string destination =
            link.destination.empty() ? "https://tailscale.com/" + link.slug : link.destination;
        doc["links"].push_back(
            {{"slug", link.slug}, {"partner", "tailscale"}, {"destination", destination}});
    }
    return doc.dump();
}

bool import_document(const std::string& database_url, const std::string& json_text) {
    codec::ImportInput input = codec::read_import_text(json_text, false);
    INFO("not valid JSON: " << input.json_error);
    REQUIRE(input.document.has_value());
    auto report = pg::import_document(database_url, *input.document, domain::UrlPolicy{},
                                      admin::os_user_actor());
    std::string issues;
    for (const auto& issue : report.issues) issues += issue.to_string() + "\n";
    INFO("refused:\n" << issues);
    REQUIRE(report.issues.empty());
    return true;
}

bool import_demo_links(const std::string& database_url, const std::vector<DemoLink>& links) {
    return import_document(database_url, demo_document(links));
}

}  // namespace refgate::test
