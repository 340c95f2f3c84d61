#pragma once

#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace refgate::test {

// A database of its own for one test, created in the PostgreSQL that test.sh started, migrated
// (a copy of REFGATE_TEST_TEMPLATE_DATABASE when set: test.sh migrates that one), and dropped at
// the end of the scope.
class TestDatabase {
  public:
    explicit TestDatabase(bool migrated = true);
    ~TestDatabase();
    TestDatabase(const TestDatabase&) = delete;
    TestDatabase& operator=(const TestDatabase&) = delete;

    const std::string& url() const { return url_; }
    const std::string& name() const { return name_; }

    // Runs SQL (in its own transaction) and returns the result. One connection serves every
    // call (tests poll with scalar() every 100 ms: a connection each was a PostgreSQL backend's
    // start each); one the server dropped is made again, and a statement it broke is run again
    // (its transaction was rolled back). Safe from several threads.
    pqxx::result exec(const std::string& sql);
    // The first column of the first row as text ("" for NULL or no row).
    std::string scalar(const std::string& sql);

  private:
    std::string admin_url_;
    std::string name_;
    std::string url_;
    std::mutex mutex_;
    std::unique_ptr<pqxx::connection> connection_;  // made at the first exec()
};

// One link of the demo partner (Tailscale, `ref=picks42`, on tailscale.com); its destination is
// https://tailscale.com/<slug> unless given.
struct DemoLink {
    std::string slug = "alpha";
    std::string destination;
};

// The import document of the demo partner with these links (JSON text).
std::string demo_document(const std::vector<DemoLink>& links = {DemoLink{}});

// A document imported into a database as `refgate import` does it (the same function, audited
// under the same "cli:<OS user>"), in this process; fails the test with the refusals unless it
// succeeds. Returns true, so that a fixture can import in a member initializer.
bool import_document(const std::string& database_url, const std::string& json_text);

// import_document(demo_document(links)): the demo partner and its links, `alpha` by default.
bool import_demo_links(const std::string& database_url,
                       const std::vector<DemoLink>& links = {DemoLink{}});

// Replaces the database name (the path) of a libpq URI.
std::string with_database(const std::string& url, const std::string& database);

}  // namespace refgate::test
