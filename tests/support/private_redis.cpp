#include "support/private_redis.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <thread>

namespace refgate::test {

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
                 "always", "--save", "", "--maxmemory-policy", "noeviction", "--logfile",
                 log.c_str(), static_cast<char*>(nullptr));
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

std::string PrivateRedis::cli(const std::string& args) const {
    std::string command = "redis-cli -p " + std::to_string(port_) + " " + args + " 2>/dev/null";
    std::string out;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return out;
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
    ::pclose(pipe);
    return out;
}

}  // namespace refgate::test
