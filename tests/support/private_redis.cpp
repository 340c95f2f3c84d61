#include "support/private_redis.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace refgate::test {
namespace {

std::string run_cli(int port, const std::string& args) {
    std::string command = "redis-cli -p " + std::to_string(port) + " " + args + " 2>/dev/null";
    std::string out;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return out;
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
    ::pclose(pipe);
    return out;
}

}  // namespace

PrivateRedis::PrivateRedis(bool appendonly) : port_(unused_port()), appendonly_(appendonly) {
    start();
}

PrivateRedis::~PrivateRedis() { kill(); }

void PrivateRedis::start() {
    if (pid_ > 0) return;
    std::string port = std::to_string(port_);
    std::string dir = dir_.path().string();
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        std::string log = dir + "/redis.log";
        ::execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1",
                 "--dir", dir.c_str(), "--appendonly", appendonly_ ? "yes" : "no", "--appendfsync",
                 "always", "--save", "", "--maxmemory-policy", "noeviction",
                 // A replica's first sync starts at once, not after 5 s.
                 "--repl-diskless-sync-delay", "0", "--logfile", log.c_str(),
                 static_cast<char*>(nullptr));
        ::_exit(127);
    }
    pid_ = pid;
    for (int i = 0; i < 500; ++i) {
        if (cli("PING").find("PONG") != std::string::npos) return;
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    FAIL("private Redis did not start on port " << port_);
}

void PrivateRedis::stop() {
    if (pid_ <= 0) return;
    cli("SHUTDOWN");
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
}

void PrivateRedis::kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
}

std::string PrivateRedis::cli(const std::string& args) const { return run_cli(port_, args); }

void PrivateRedis::replicate(const PrivateRedis& master) {
    cli("REPLICAOF 127.0.0.1 " + std::to_string(master.port()));
    for (int i = 0; i < 500; ++i) {
        if (cli("INFO replication").find("master_link_status:up") != std::string::npos) return;
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    FAIL("private Redis replica on port " << port_ << " did not sync");
}

namespace {

int start_sentinel(const TempDir& dir, int port, int master_port, const std::string& name) {
    std::string conf = dir.file("sentinel.conf");
    {
        std::ofstream out(conf);
        out << "port " << port << "\nbind 127.0.0.1\ndir " << dir.path().string() << "\nlogfile "
            << dir.file("sentinel.log") << "\nsentinel monitor " << name << " 127.0.0.1 "
            << master_port << " 1\nsentinel down-after-milliseconds " << name
            << " 1000\nsentinel failover-timeout " << name << " 5000\n";
    }
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::execlp("redis-server", "redis-server", conf.c_str(), "--sentinel",
                 static_cast<char*>(nullptr));
        ::_exit(127);
    }
    return pid;
}

}  // namespace

PrivateSentinels::PrivateSentinels(const PrivateRedis& master, const std::string& master_name,
                                   int count)
    : name_(master_name) {
    for (int i = 0; i < count; ++i) {
        dirs_.push_back(std::make_unique<TempDir>());
        ports_.push_back(unused_port());
        pids_.push_back(start_sentinel(*dirs_.back(), ports_.back(), master.port(), name_));
    }
    for (std::size_t i = 0; i < ports_.size(); ++i) {
        bool up = false;
        for (int t = 0; t < 500 && !up; ++t) {
            up = cli(i, "PING").find("PONG") != std::string::npos;
            if (!up) std::this_thread::sleep_for(std::chrono::milliseconds{10});
        }
        if (!up) FAIL("private sentinel did not start on port " << ports_[i]);
    }
}

PrivateSentinels::~PrivateSentinels() {
    for (std::size_t i = 0; i < pids_.size(); ++i) kill(i);
}

void PrivateSentinels::kill(std::size_t i) {
    if (pids_.at(i) <= 0) return;
    ::kill(pids_[i], SIGKILL);
    int status = 0;
    ::waitpid(pids_[i], &status, 0);
    pids_[i] = -1;
}

std::string PrivateSentinels::url() const {
    std::string hosts;
    for (int port : ports_)
        hosts += (hosts.empty() ? "" : ",") + ("127.0.0.1:" + std::to_string(port));
    return "redis+sentinel://" + hosts + "/" + name_ + "/0";
}

std::string PrivateSentinels::cli(std::size_t i, const std::string& args) const {
    return run_cli(ports_.at(i), args);
}

int PrivateSentinels::master_port() const {
    for (std::size_t i = 0; i < ports_.size(); ++i) {
        if (pids_[i] <= 0) continue;
        std::string out = cli(i, "SENTINEL get-master-addr-by-name " + name_);
        auto newline = out.find('\n');
        if (newline == std::string::npos) continue;
        return std::atoi(out.c_str() + newline + 1);
    }
    return 0;
}

void PrivateSentinels::wait_replicas(std::size_t replicas) const {
    for (int t = 0; t < 1500; ++t) {
        bool all = true;
        for (std::size_t i = 0; i < ports_.size() && all; ++i) {
            if (pids_[i] <= 0) continue;
            std::string out = cli(i, "SENTINEL replicas " + name_);
            std::size_t seen = 0;
            for (auto pos = out.find("\nflags\n"); pos != std::string::npos;
                 pos = out.find("\nflags\n", pos + 1)) {
                auto end = out.find('\n', pos + 7);
                if (out.substr(pos + 7, end - pos - 7) == "slave") ++seen;
            }
            all = seen >= replicas;
        }
        if (all) return;
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    FAIL("the sentinels did not find " << replicas << " replica(s) of " << name_);
}

int PrivateSentinels::failover() {
    int before = master_port();
    for (int attempt = 0; attempt < 50; ++attempt) {
        std::string out = cli(0, "SENTINEL FAILOVER " + name_);
        if (out.find("OK") != std::string::npos) break;
        // NOGOODREPLICA until the sentinel has fresh INFO of the replica.
        std::this_thread::sleep_for(std::chrono::milliseconds{100});
    }
    for (int t = 0; t < 1000; ++t) {
        int now = master_port();
        if (now != 0 && now != before) return now;
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    FAIL("SENTINEL FAILOVER did not switch the master of " << name_);
    return 0;
}

}  // namespace refgate::test
