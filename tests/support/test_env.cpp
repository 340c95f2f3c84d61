#include "support/test_env.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "refgate/domain/counter_key.hpp"

namespace refgate::test {

std::string require_env(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') {
        FAIL(std::string(name) + " is not set: run the suite through deploy/local/test.sh");
    }
    return value;
}

std::string random_id(std::size_t length) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::string id = "t";
    std::uniform_int_distribution<std::size_t> pick(0, sizeof kChars - 2);
    while (id.size() < length) id.push_back(kChars[pick(rng)]);
    return id;
}

TempDir::TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "refgate-test-XXXXXX").string();
    char* made = ::mkdtemp(pattern.data());
    REQUIRE(made != nullptr);
    path_ = made;
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

int unused_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    ::close(fd);
    return ntohs(addr.sin_port);
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string utc_today() {
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
    return domain::format_day(domain::utc_day(seconds));
}

int run_shell(const std::string& command, std::string& output) {
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
    int status = ::pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::filesystem::path source_root() {
    namespace fs = std::filesystem;
    const fs::path marker = "deploy/local/demo.json";
    for (auto p = fs::current_path(); !p.empty(); p = p.parent_path()) {
        if (fs::exists(p / marker)) return p;
        if (p == p.root_path()) break;
    }
    return fs::path(__FILE__).parent_path().parent_path().parent_path();
}

}  // namespace refgate::test
