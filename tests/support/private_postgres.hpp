#pragma once

#include <string>

namespace refgate::test {

// A PostgreSQL server of a test's own (initdb in a temp dir, a free loopback port), for tests that
// stop and start the database under a running service. Uses REFGATE_TEST_PG_BINDIR and runs the
// server as REFGATE_TEST_PG_USER (initdb refuses root).
class PrivatePostgres {
  public:
    PrivatePostgres();
    ~PrivatePostgres();
    PrivatePostgres(const PrivatePostgres&) = delete;
    PrivatePostgres& operator=(const PrivatePostgres&) = delete;

    void start();
    void stop();
    // SIGSTOP / SIGCONT to the server and all its processes: a database that hangs, with every
    // connection open and every query unanswered (a stall, not a crash).
    void pause();
    void resume();
    int port() const { return port_; }
    // A migrated database named `name`; returns its URL.
    std::string create_database(const std::string& name);

  private:
    void run(const std::string& command) const;

    std::string bindir_;
    std::string user_;
    std::string dir_;
    int port_ = 0;
    bool running_ = false;
    bool paused_ = false;
};

}  // namespace refgate::test
