#pragma once

#include <memory>
#include <string>

namespace refgate::test {

// A PostgreSQL server of a test's own (initdb in a temp dir, a free loopback port), for tests that
// stop and start the database under a running service. Uses REFGATE_TEST_PG_BINDIR and runs the
// server as REFGATE_TEST_PG_USER (initdb refuses root).
//
// Replication: initdb's defaults already make every server a primary that can stream
// (wal_level=replica, max_wal_senders=10, trust for replication from 127.0.0.1 in pg_hba.conf);
// standby_of() makes a streaming standby of one with pg_basebackup -R.
//
// initdb takes seconds (ten on a busy machine): where REFGATE_TEST_PG_TEMPLATE names a directory
// (deploy/local/test.sh makes one per run), the first server initdb's a cluster there and every
// server copies it.
class PrivatePostgres {
  public:
    PrivatePostgres();
    // A hot standby of `primary`, streaming from it, started: a copy taken now (pg_basebackup -R).
    static std::unique_ptr<PrivatePostgres> standby_of(const PrivatePostgres& primary);
    ~PrivatePostgres();
    PrivatePostgres(const PrivatePostgres&) = delete;
    PrivatePostgres& operator=(const PrivatePostgres&) = delete;

    void start();
    void stop();
    // pg_ctl stop -m immediate: every process quits at once, no shutdown checkpoint, and WAL not
    // yet sent to a standby is not sent (a crash, as far as replication can tell).
    void crash();
    // SIGSTOP / SIGCONT to the server and all its processes: a database that hangs, with every
    // connection open and every query unanswered (a stall, not a crash).
    void pause();
    void resume();
    // A standby becomes a primary (pg_ctl promote; waits until it accepts writes).
    void promote();
    // On a primary: COMMIT waits for a standby's flush ("*": any standby), or not (""); reloaded.
    void set_synchronous_standby_names(const std::string& names);
    int port() const { return port_; }
    // The URI of database `name` on this server.
    std::string url(const std::string& name) const;
    // A migrated database named `name`; returns its URL.
    std::string create_database(const std::string& name);

  private:
    explicit PrivatePostgres(const PrivatePostgres* primary);
    void run(const std::string& command) const;
    void initdb(const std::string& data_dir) const;
    // The initdb'd cluster in REFGATE_TEST_PG_TEMPLATE, made on first use; "" when unset.
    std::string template_cluster() const;
    // chown to the cluster's OS user (when running as root).
    void give_to_user(const std::string& dir) const;

    std::string bindir_;
    std::string user_;
    std::string dir_;
    int port_ = 0;
    bool running_ = false;
    bool paused_ = false;
};

}  // namespace refgate::test
