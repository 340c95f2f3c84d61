#pragma once

#include <pqxx/pqxx>
#include <string>

namespace refgate::test {

// A database of its own for one test, created in the PostgreSQL that test.sh started, migrated,
// and dropped at the end of the scope.
class TestDatabase {
  public:
    explicit TestDatabase(bool migrated = true);
    ~TestDatabase();
    TestDatabase(const TestDatabase&) = delete;
    TestDatabase& operator=(const TestDatabase&) = delete;

    const std::string& url() const { return url_; }
    const std::string& name() const { return name_; }

    // Runs SQL (in its own transaction) and returns the result.
    pqxx::result exec(const std::string& sql);
    // The first column of the first row as text ("" for NULL or no row).
    std::string scalar(const std::string& sql);

  private:
    std::string admin_url_;
    std::string name_;
    std::string url_;
};

// Replaces the database name (the path) of a libpq URI.
std::string with_database(const std::string& url, const std::string& database);

}  // namespace refgate::test
