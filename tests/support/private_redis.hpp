#pragma once

#include <string>

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

  private:
    TempDir dir_;
    int port_ = 0;
    bool appendonly_ = true;
    int pid_ = -1;
};

}  // namespace refgate::test
