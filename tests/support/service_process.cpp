#include "support/service_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "refgate/admin/admin_store.hpp"
#include "refgate/admin/pg_admin_store.hpp"

namespace refgate::test {
namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The suite's shared Redis (REFGATE_TEST_REDIS_URL) is used by every test process that ctest
// runs at once, and a service's flusher takes whatever click buckets that Redis holds: on one
// database, one test's clicks (or a killed service's leftovers) would be counted into another
// test's PostgreSQL. So each test process claims a database of its own (1-15; 0 stays for the
// scripts) by an exclusive lock on a file named after the port and the database, held until the
// process ends, and empties it before its first use.
std::string claim_shared_redis_database(const std::string& url) {
    auto slash = url.rfind('/');
    auto port_at = url.rfind(':', slash);
    REQUIRE((slash != std::string::npos && port_at != std::string::npos));
    std::string port = url.substr(port_at + 1, slash - port_at - 1);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{60};
    while (std::chrono::steady_clock::now() < deadline) {
        for (int db = 1; db <= 15; ++db) {
            auto lock = std::filesystem::temp_directory_path() /
                        ("refgate-test-redis-" + port + "-" + std::to_string(db) + ".lock");
            int fd = ::open(lock.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
            if (fd < 0) continue;
            if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
                ::close(fd);
                continue;
            }
            // fd stays open (and locked) for the rest of the process.
            std::string command =
                "redis-cli -p " + port + " -n " + std::to_string(db) + " FLUSHDB >/dev/null 2>&1";
            REQUIRE(std::system(command.c_str()) == 0);
            return url.substr(0, slash + 1) + std::to_string(db);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds{100});
    }
    FAIL("no free database in the shared test Redis (" << url << ") within 60 s");
    return url;
}

std::string shared_redis_url() {
    static const std::string url =
        claim_shared_redis_database(require_env("REFGATE_TEST_REDIS_URL"));
    return url;
}

int decode_status(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

// fork + exec with stdin/stdout/stderr redirected to the given files.
pid_t spawn(const std::vector<std::string>& args, const EnvPairs& env, const std::string& in_path,
            const std::string& out_path, const std::string& err_path) {
    std::string bin = require_env("REFGATE_BIN");
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
        int in = ::open(in_path.c_str(), O_RDONLY);
        int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0) ::_exit(126);
        ::dup2(in, 0);
        ::dup2(out, 1);
        ::dup2(err, 2);
        std::vector<char*> argv;
        argv.push_back(bin.data());
        std::vector<std::string> copy = args;
        for (auto& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(bin.c_str(), argv.data());
        ::_exit(127);
    }
    return pid;
}

}  // namespace

CommandResult run_refgate(const std::vector<std::string>& args, const EnvPairs& env,
                          const std::string& stdin_text) {
    TempDir dir;
    std::string in = dir.file("stdin"), out = dir.file("stdout"), err = dir.file("stderr");
    std::ofstream(in) << stdin_text;
    pid_t pid = spawn(args, env, in, out, err);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return CommandResult{decode_status(status), read_file(out), read_file(err)};
}

ServiceProcess::ServiceProcess(ServiceOptions options) {
    log_file_ = dir_.file("service.log");
    snapshot_file_ =
        options.snapshot_file.empty() ? dir_.file("snapshot.json") : options.snapshot_file;
    EnvPairs env = {
        {"REFGATE_LISTEN", "127.0.0.1:0"},
        {"REFGATE_ADMIN_LISTEN", "127.0.0.1:0"},
        {"REFGATE_THREADS", "2"},
        {"REFGATE_DATABASE_URL", options.database_url},
        {"REFGATE_REDIS_URL", options.redis_url.empty() ? shared_redis_url() : options.redis_url},
        {"REFGATE_SNAPSHOT_FILE", snapshot_file_},
        {"REFGATE_SPILL_FILE", dir_.file("spill.json")},
        // No drain unless a test asks for one, so that stopping a service stays quick.
        {"REFGATE_DRAIN_MS", "0"},
    };
    for (const auto& pair : options.env) env.push_back(pair);
    pid_ = spawn({"serve"}, env, "/dev/null", "/dev/null", log_file_);
    if (!options.wait_ready) return;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{20};
    while (std::chrono::steady_clock::now() < deadline && (port_ == 0 || admin_port_ == 0)) {
        std::istringstream lines(log());
        std::string line;
        while (std::getline(lines, line)) {
            auto j = nlohmann::json::parse(line, nullptr, false);
            if (j.is_discarded() || j.value("msg", "") != "listening") continue;
            (j.value("listener", "") == "public" ? port_ : admin_port_) = j.value("port", 0);
        }
        if (!running()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
    INFO("service log:\n" << log());
    REQUIRE(port_ != 0);
    REQUIRE(admin_port_ != 0);
}

ServiceProcess::~ServiceProcess() {
    if (running()) {
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }
}

bool ServiceProcess::running() {
    if (exit_code_) return false;
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
        exit_code_ = decode_status(status);
        return false;
    }
    return true;
}

int ServiceProcess::stop(int signal, std::chrono::milliseconds timeout) {
    if (running()) ::kill(pid_, signal);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    if (running()) {
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        FAIL("the service did not exit within the timeout after signal " << signal);
    }
    return *exit_code_;
}

std::string ServiceProcess::log() const { return read_file(log_file_); }

bool ServiceProcess::wait_for_log(const std::string& text,
                                  std::chrono::milliseconds timeout) const {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (log().find(text) != std::string::npos) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
    return false;
}

}  // namespace refgate::test

namespace refgate::test {

CommandResult import_json(const std::string& database_url, const std::string& json_text) {
    TempDir dir;
    std::string path = dir.file("import.json");
    std::ofstream(path) << json_text;
    return run_refgate({"import", path}, {{"REFGATE_DATABASE_URL", database_url}});
}

std::string create_api_token(const std::string& database_url, const std::string& name,
                             const std::string& role) {
    auto parsed = admin::parse_role(role);
    INFO("role " << role);
    REQUIRE(parsed.has_value());
    return admin::create_token(database_url, admin::NewToken{.name = name, .role = *parsed},
                               admin::os_user_actor());
}

}  // namespace refgate::test
