#pragma once

#include <memory>
#include <string>
#include <vector>

#include "support/test_env.hpp"

namespace refgate::test {

// A Redis server of a test's own, with AOF on (appendfsync always, so a restart keeps everything
// that was acknowledged) in a temp dir on a free loopback port. Stop and start it to see what
// the service does while Redis is away.
class PrivateRedis {
  public:
    explicit PrivateRedis(bool appendonly = true);
    ~PrivateRedis();
    PrivateRedis(const PrivateRedis&) = delete;
    PrivateRedis& operator=(const PrivateRedis&) = delete;

    void start();
    void stop();  // SHUTDOWN (AOF kept)
    void kill();  // SIGKILL, as a crash
    int port() const { return port_; }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_) + "/0"; }
    // Runs redis-cli with the given arguments against this server; returns its standard output.
    std::string cli(const std::string& args) const;
    // Replica mode: REPLICAOF `master`, waiting until the initial sync is done. Not kept over a
    // restart (the test calls it again).
    void replicate(const PrivateRedis& master);

  private:
    TempDir dir_;
    int port_ = 0;
    bool appendonly_ = true;
    int pid_ = -1;
};

// Sentinels of a test's own, each in a temp dir on a free loopback port, monitoring one master
// (quorum 1, down-after 1000 ms): SENTINEL FAILOVER switches the master in a second or two.
class PrivateSentinels {
  public:
    PrivateSentinels(const PrivateRedis& master, const std::string& master_name, int count);
    ~PrivateSentinels();
    PrivateSentinels(const PrivateSentinels&) = delete;
    PrivateSentinels& operator=(const PrivateSentinels&) = delete;

    // redis+sentinel://127.0.0.1:p1,127.0.0.1:p2/<name>/0
    std::string url() const;
    int port(std::size_t i) const { return ports_.at(i); }
    void kill(std::size_t i);
    // redis-cli against sentinel `i`.
    std::string cli(std::size_t i, const std::string& args) const;
    // The port of the master the first live sentinel names.
    int master_port() const;
    // Waits until every sentinel knows `replicas` replicas of the master.
    void wait_replicas(std::size_t replicas) const;
    // SENTINEL FAILOVER, waiting until the sentinels name another master; returns its port.
    int failover();

  private:
    std::string name_;
    std::vector<std::unique_ptr<TempDir>> dirs_;
    std::vector<int> ports_;
    std::vector<int> pids_;
};

}  // namespace refgate::test
